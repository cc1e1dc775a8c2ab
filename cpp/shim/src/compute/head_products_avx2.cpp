// head_products.hpp's product with AVX2 and FMA (compiled with -mavx2
// -mfma; called only where the CPU has both: head_products.cpp). Blocks of
// 8 rows x 8 columns of C live in eight registers while k runs; column
// tails are masked and row tails take one row at a time. Only the tail:
// AVX2's masked store costs many times a plain one on AMD's cores
// (avx2_tail_mask.hpp).
#include <immintrin.h>

#include <cstdint>

#include "compute/avx2_tail_mask.hpp"
#include "compute/head_products.hpp"

namespace aotrun::shim::kernels {
namespace {

// Eight rows: eight accumulators, named so that GCC keeps them in
// registers (an array of them is spilled to the stack every iteration).
template <bool Full>
void block8(int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
            __m256i cols) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (int64_t p = 0; p < k; ++p) {
    const __m256 br = avx2_load<Full>(b + p * ldb, cols);
    const float* ap = a + p;
    c0 = _mm256_fmadd_ps(_mm256_set1_ps(ap[0]), br, c0);
    c1 = _mm256_fmadd_ps(_mm256_set1_ps(ap[lda]), br, c1);
    c2 = _mm256_fmadd_ps(_mm256_set1_ps(ap[2 * lda]), br, c2);
    c3 = _mm256_fmadd_ps(_mm256_set1_ps(ap[3 * lda]), br, c3);
    c4 = _mm256_fmadd_ps(_mm256_set1_ps(ap[4 * lda]), br, c4);
    c5 = _mm256_fmadd_ps(_mm256_set1_ps(ap[5 * lda]), br, c5);
    c6 = _mm256_fmadd_ps(_mm256_set1_ps(ap[6 * lda]), br, c6);
    c7 = _mm256_fmadd_ps(_mm256_set1_ps(ap[7 * lda]), br, c7);
  }
  const __m256 va = _mm256_set1_ps(alpha);
  avx2_store<Full>(c, cols, _mm256_mul_ps(c0, va));
  avx2_store<Full>(c + ldc, cols, _mm256_mul_ps(c1, va));
  avx2_store<Full>(c + 2 * ldc, cols, _mm256_mul_ps(c2, va));
  avx2_store<Full>(c + 3 * ldc, cols, _mm256_mul_ps(c3, va));
  avx2_store<Full>(c + 4 * ldc, cols, _mm256_mul_ps(c4, va));
  avx2_store<Full>(c + 5 * ldc, cols, _mm256_mul_ps(c5, va));
  avx2_store<Full>(c + 6 * ldc, cols, _mm256_mul_ps(c6, va));
  avx2_store<Full>(c + 7 * ldc, cols, _mm256_mul_ps(c7, va));
}

template <bool Full>
void block1(int64_t k, float alpha, const float* a, const float* b, int64_t ldb, float* c, __m256i cols) {
  __m256 c0 = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) c0 = _mm256_fmadd_ps(_mm256_set1_ps(a[p]), avx2_load<Full>(b + p * ldb, cols), c0);
  avx2_store<Full>(c, cols, _mm256_mul_ps(c0, _mm256_set1_ps(alpha)));
}

}  // namespace

void small_gemm_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float* c, int64_t ldc) {
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i cols = avx2_tail_mask(n - j);
    int64_t i = 0;
    const bool full = n - j >= 8;
    for (; i + 8 <= m; i += 8) {
      (full ? block8<true> : block8<false>)(k, alpha, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc, cols);
    }
    for (; i < m; ++i) (full ? block1<true> : block1<false>)(k, alpha, a + i * lda, b + j, ldb, c + i * ldc + j, cols);
  }
}

}  // namespace aotrun::shim::kernels
