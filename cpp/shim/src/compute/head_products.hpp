// The two products of one small attention head: at the head sizes of real
// requests (16-64 tokens, head size 64) a BLAS call's fixed cost (argument
// checks, packing, kernel dispatch) outweighs its arithmetic, so
// sdpa_f32.cpp runs these register-blocked loops instead, up to
// kHeadProductsMaxMacs.
//
// Both are one product, C [m, n] = alpha * A [m, k] @ B [k, n] with B
// row-major; each output is a single chain of fused multiply-adds over k
// in order, so the AVX-512 and AVX2 variants (vector_isa.hpp) give
// bit-identical results (the scalar one rounds each product separately).
// Reentrant; no allocation.
#pragma once

#include <cstdint>

namespace aotrun::shim::kernels {

// Heads up to this many multiply-adds per product (L x S x E) take these
// loops; larger ones oneDNN's sgemm.
constexpr int64_t kHeadProductsMaxMacs = int64_t(1) << 17;

// scores [l, s] (row-major, dense) = scale * q [l, e] @ k [s, e]ᵀ, q and k
// row-major with row strides ldq and ldk. kt is scratch for s * e floats.
void head_scores(int64_t l, int64_t s, int64_t e, float scale, const float* q, int64_t ldq, const float* k, int64_t ldk,
                 float* kt, float* scores);

// out [l, e] (row stride ldo) = p [l, s] (dense) @ v [s, e] (row stride ldv).
void head_weighted_sum(int64_t l, int64_t s, int64_t e, const float* p, const float* v, int64_t ldv, float* out,
                       int64_t ldo);

// The product both are made of, per ISA (head_products_avx512.cpp,
// head_products_avx2.cpp; the scalar one in head_products.cpp).
void small_gemm_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc);
void small_gemm_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float* c, int64_t ldc);

}  // namespace aotrun::shim::kernels
