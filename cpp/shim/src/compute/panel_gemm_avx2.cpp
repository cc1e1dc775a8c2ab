// panel_gemm.hpp's panel with AVX2 and FMA (compiled with -mavx2 -mfma;
// called only where the CPU has them: panel_gemm.cpp). A block of up to 5
// rows keeps its 5 x 16 outputs in 10 of the 16 registers while k runs
// (6 rows spill with GCC 12: 12 accumulators, 2 panel vectors and the
// broadcast leave it none for addresses).
#include <immintrin.h>

#include <sleef.h>

#include <cstdint>

#include "compute/avx2_tail_mask.hpp"
#include "compute/panel_gemm.hpp"

namespace aotrun::shim::kernels {
namespace {

constexpr int kWidth = 16;
constexpr int kMaxRows = 5;

// act(v), as panel_gemm.hpp defines it (libtorch's formulas).
__m256 activate(__m256 v, PanelActivation act) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  switch (act) {
    case PanelActivation::kNone: break;
    case PanelActivation::kRelu:  // x < 0 ? 0 : x: NaN and -0 stay
      return _mm256_blendv_ps(v, zero, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    case PanelActivation::kSwish:  // x * sigmoid(x)
      return _mm256_mul_ps(v, _mm256_div_ps(one, _mm256_add_ps(one, Sleef_expf8_u10avx2(_mm256_sub_ps(zero, v)))));
  }
  return v;
}

template <int R>
void block(int64_t k, const float* x, int64_t ldx, const float* panel, __m256i lo, __m256i hi, const float* bias,
           bool accumulate, float* out, int64_t ldo, PanelActivation act) {
  __m256 a0[R], a1[R];
  const __m256 b0 = bias != nullptr ? _mm256_maskload_ps(bias, lo) : _mm256_setzero_ps();
  const __m256 b1 = bias != nullptr ? _mm256_maskload_ps(bias + 8, hi) : _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    a0[i] = b0;
    a1[i] = b1;
    if (accumulate) {  // out itself when there is no bias: a chain split over k goes on unchanged
      const __m256 c0 = _mm256_maskload_ps(out + i * ldo, lo), c1 = _mm256_maskload_ps(out + i * ldo + 8, hi);
      a0[i] = bias != nullptr ? _mm256_add_ps(b0, c0) : c0;
      a1[i] = bias != nullptr ? _mm256_add_ps(b1, c1) : c1;
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    const __m256 w0 = _mm256_load_ps(panel + p * kWidth);
    const __m256 w1 = _mm256_load_ps(panel + p * kWidth + 8);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 xi = _mm256_broadcast_ss(x + i * ldx + p);
      a0[i] = _mm256_fmadd_ps(xi, w0, a0[i]);
      a1[i] = _mm256_fmadd_ps(xi, w1, a1[i]);
    }
  }
  if (act != PanelActivation::kNone) {
    for (int i = 0; i < R; ++i) {
      a0[i] = activate(a0[i], act);
      a1[i] = activate(a1[i], act);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    _mm256_maskstore_ps(out + i * ldo, lo, a0[i]);
    _mm256_maskstore_ps(out + i * ldo + 8, hi, a1[i]);
  }
}

using Block = void (*)(int64_t, const float*, int64_t, const float*, __m256i, __m256i, const float*, bool, float*,
                       int64_t, PanelActivation);
constexpr Block kBlocks[kMaxRows + 1] = {nullptr, block<1>, block<2>, block<3>, block<4>, block<5>};

}  // namespace

void panel_rows_avx2(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t cols,
                     const float* bias, bool accumulate, float* out, int64_t ldo, PanelActivation act) {
  const __m256i lo = avx2_tail_mask(cols), hi = avx2_tail_mask(cols - 8);
  // Rows in blocks as even as possible (as panel_gemm_avx512.cpp).
  int64_t blocks = (m + kMaxRows - 1) / kMaxRows;
  for (int64_t r = 0; r < m; --blocks) {
    const int64_t rows = (m - r + blocks - 1) / blocks;
    kBlocks[rows](k, x + r * ldx, ldx, panel, lo, hi, bias, accumulate, out + r * ldo, ldo, act);
    r += rows;
  }
}

}  // namespace aotrun::shim::kernels
