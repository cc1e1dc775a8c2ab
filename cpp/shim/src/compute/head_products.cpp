// The small attention head's products (head_products.hpp): the variant for
// the CPU's vector ISA (vector_isa.hpp), else plain loops.
#include "compute/head_products.hpp"

#include <cstdint>

#include "compute/vector_isa.hpp"

namespace aotrun::shim::kernels {
namespace {

void small_gemm_scalar(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) acc += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = acc * alpha;
    }
}

void small_gemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                float* c, int64_t ldc) {
  switch (vector_isa()) {
    case VectorIsa::kAvx512: return small_gemm_avx512(m, n, k, alpha, a, lda, b, ldb, c, ldc);
    case VectorIsa::kAvx2: return small_gemm_avx2(m, n, k, alpha, a, lda, b, ldb, c, ldc);
    case VectorIsa::kScalar: break;
  }
  small_gemm_scalar(m, n, k, alpha, a, lda, b, ldb, c, ldc);
}

}  // namespace

void head_scores(int64_t l, int64_t s, int64_t e, float scale, const float* q, int64_t ldq, const float* k, int64_t ldk,
                 float* kt, float* scores) {
  for (int64_t j = 0; j < s; ++j)
    for (int64_t p = 0; p < e; ++p) kt[p * s + j] = k[j * ldk + p];
  small_gemm(l, s, e, scale, q, ldq, kt, s, scores, s);
}

void head_weighted_sum(int64_t l, int64_t s, int64_t e, const float* p, const float* v, int64_t ldv, float* out,
                       int64_t ldo) {
  small_gemm(l, e, s, 1.0f, p, s, v, ldv, out, ldo);
}

}  // namespace aotrun::shim::kernels
