// head_products.hpp's product with AVX-512 (compiled with -mavx512f; called
// only where the CPU has it: head_products.cpp). Blocks of 8 rows x 16
// columns of C live in eight registers while k runs; column tails are
// masked and row tails take one row at a time.
#include <immintrin.h>

#include <cstdint>

#include "compute/avx512_tail_mask.hpp"
#include "compute/head_products.hpp"

namespace aotrun::shim::kernels {
namespace {

// Eight rows: eight accumulators, named so that GCC keeps them in
// registers (an array of them is spilled to the stack every iteration).
void block8(int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
            __mmask16 cols) {
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (int64_t p = 0; p < k; ++p) {
    const __m512 br = _mm512_maskz_loadu_ps(cols, b + p * ldb);
    const float* ap = a + p;
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(ap[0]), br, c0);
    c1 = _mm512_fmadd_ps(_mm512_set1_ps(ap[lda]), br, c1);
    c2 = _mm512_fmadd_ps(_mm512_set1_ps(ap[2 * lda]), br, c2);
    c3 = _mm512_fmadd_ps(_mm512_set1_ps(ap[3 * lda]), br, c3);
    c4 = _mm512_fmadd_ps(_mm512_set1_ps(ap[4 * lda]), br, c4);
    c5 = _mm512_fmadd_ps(_mm512_set1_ps(ap[5 * lda]), br, c5);
    c6 = _mm512_fmadd_ps(_mm512_set1_ps(ap[6 * lda]), br, c6);
    c7 = _mm512_fmadd_ps(_mm512_set1_ps(ap[7 * lda]), br, c7);
  }
  const __m512 va = _mm512_set1_ps(alpha);
  _mm512_mask_storeu_ps(c, cols, _mm512_mul_ps(c0, va));
  _mm512_mask_storeu_ps(c + ldc, cols, _mm512_mul_ps(c1, va));
  _mm512_mask_storeu_ps(c + 2 * ldc, cols, _mm512_mul_ps(c2, va));
  _mm512_mask_storeu_ps(c + 3 * ldc, cols, _mm512_mul_ps(c3, va));
  _mm512_mask_storeu_ps(c + 4 * ldc, cols, _mm512_mul_ps(c4, va));
  _mm512_mask_storeu_ps(c + 5 * ldc, cols, _mm512_mul_ps(c5, va));
  _mm512_mask_storeu_ps(c + 6 * ldc, cols, _mm512_mul_ps(c6, va));
  _mm512_mask_storeu_ps(c + 7 * ldc, cols, _mm512_mul_ps(c7, va));
}

void block1(int64_t k, float alpha, const float* a, const float* b, int64_t ldb, float* c, __mmask16 cols) {
  __m512 c0 = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; ++p)
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_maskz_loadu_ps(cols, b + p * ldb), c0);
  _mm512_mask_storeu_ps(c, cols, _mm512_mul_ps(c0, _mm512_set1_ps(alpha)));
}

}  // namespace

void small_gemm_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc) {
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 cols = avx512_tail_mask(n - j);
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) block8(k, alpha, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc, cols);
    for (; i < m; ++i) block1(k, alpha, a + i * lda, b + j, ldb, c + i * ldc + j, cols);
  }
}

}  // namespace aotrun::shim::kernels
