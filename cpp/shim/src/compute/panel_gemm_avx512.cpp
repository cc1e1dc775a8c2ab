// panel_gemm.hpp's panel with AVX-512 (compiled with -mavx512f; called only
// where the CPU has it: panel_gemm.cpp). A block of up to 8 rows keeps its
// 8 x 32 outputs in 16 registers while k runs: per step, two loads of the
// panel and one broadcast per row feed two multiply-adds per row. The
// panel's rows are `ldp` floats apart and need no alignment: a frozen
// blob read in place (panels_over) sits where the model's allocation put
// it.
#include <immintrin.h>

#include <cstdint>

#include "compute/avx512_tail_mask.hpp"
#include "compute/panel_gemm.hpp"

namespace aotrun::shim::kernels {
namespace {

constexpr int kMaxRows = 8;  // 16 accumulators; 8 rows measured best on Zen 4

template <int R>
void block(int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, __mmask16 lo, __mmask16 hi,
           const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo) {
  __m512 a0[R], a1[R];
  const __m512 b0 = bias != nullptr ? _mm512_maskz_loadu_ps(lo, bias) : _mm512_setzero_ps();
  const __m512 b1 = bias != nullptr ? _mm512_maskz_loadu_ps(hi, bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    a0[i] = b0;
    a1[i] = b1;
    if (accumulate) {  // out itself when there is no bias: a chain split over k goes on unchanged
      const __m512 c0 = _mm512_maskz_loadu_ps(lo, out + i * ldo), c1 = _mm512_maskz_loadu_ps(hi, out + i * ldo + 16);
      a0[i] = bias != nullptr ? _mm512_add_ps(b0, c0) : c0;
      a1[i] = bias != nullptr ? _mm512_add_ps(b1, c1) : c1;
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    const __m512 w0 = _mm512_loadu_ps(panel + p * ldp);
    const __m512 w1 = _mm512_loadu_ps(panel + p * ldp + 16);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512 xi = _mm512_set1_ps(x[i * ldx + p]);
      a0[i] = _mm512_fmadd_ps(xi, w0, a0[i]);
      a1[i] = _mm512_fmadd_ps(xi, w1, a1[i]);
    }
  }
  if (addend != nullptr) {  // after the chain, rounded on its own: as a separate pass would
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      a0[i] = _mm512_add_ps(a0[i], _mm512_maskz_loadu_ps(lo, addend + i * lda));
      a1[i] = _mm512_add_ps(a1[i], _mm512_maskz_loadu_ps(hi, addend + i * lda + 16));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    _mm512_mask_storeu_ps(out + i * ldo, lo, a0[i]);
    _mm512_mask_storeu_ps(out + i * ldo + 16, hi, a1[i]);
  }
}

using Block = void (*)(int64_t, const float*, int64_t, const float*, int64_t, __mmask16, __mmask16, const float*, bool,
                       const float*, int64_t, float*, int64_t);
constexpr Block kBlocks[kMaxRows + 1] = {nullptr,  block<1>, block<2>, block<3>, block<4>,
                                         block<5>, block<6>, block<7>, block<8>};

// A block of up to 6 rows over two panels side by side (24 accumulators):
// per step, the four vectors of one 256-byte row of both and one broadcast
// per row feed four multiply-adds per row. Each output is the same chain
// of multiply-adds as block's.
constexpr int kMaxWideRows = 6;

template <int R>
void block_wide(int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, const __mmask16* mask,
                const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo) {
  __m512 a[R][4];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(mask[c], bias + 16 * c) : _mm512_setzero_ps();
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      a[i][c] = b;
      if (accumulate) {
        const __m512 o = _mm512_maskz_loadu_ps(mask[c], out + i * ldo + 16 * c);
        a[i][c] = bias != nullptr ? _mm512_add_ps(b, o) : o;
      }
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* row = panel + p * ldp;
    const __m512 w0 = _mm512_loadu_ps(row), w1 = _mm512_loadu_ps(row + 16), w2 = _mm512_loadu_ps(row + 32),
                 w3 = _mm512_loadu_ps(row + 48);
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      const __m512 xi = _mm512_set1_ps(x[i * ldx + p]);
      a[i][0] = _mm512_fmadd_ps(xi, w0, a[i][0]);
      a[i][1] = _mm512_fmadd_ps(xi, w1, a[i][1]);
      a[i][2] = _mm512_fmadd_ps(xi, w2, a[i][2]);
      a[i][3] = _mm512_fmadd_ps(xi, w3, a[i][3]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      __m512 v = a[i][c];
      if (addend != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[c], addend + i * lda + 16 * c));
      _mm512_mask_storeu_ps(out + i * ldo + 16 * c, mask[c], v);
    }
  }
}

using WideBlock = void (*)(int64_t, const float*, int64_t, const float*, int64_t, const __mmask16*, const float*, bool,
                           const float*, int64_t, float*, int64_t);
constexpr WideBlock kWideBlocks[kMaxWideRows + 1] = {nullptr,       block_wide<1>, block_wide<2>, block_wide<3>,
                                                     block_wide<4>, block_wide<5>, block_wide<6>};

}  // namespace

void panel_rows_wide_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp,
                            int64_t cols, const float* bias, bool accumulate, const float* addend, int64_t lda,
                            float* out, int64_t ldo) {
  const __mmask16 mask[4] = {avx512_tail_mask(cols), avx512_tail_mask(cols - 16), avx512_tail_mask(cols - 32),
                             avx512_tail_mask(cols - 48)};
  int64_t blocks = (m + kMaxWideRows - 1) / kMaxWideRows;
  for (int64_t r = 0; r < m; --blocks) {
    const int64_t rows = (m - r + blocks - 1) / blocks;
    kWideBlocks[rows](k, x + r * ldx, ldx, panel, ldp, mask, bias, accumulate,
                      addend != nullptr ? addend + r * lda : nullptr, lda, out + r * ldo, ldo);
    r += rows;
  }
}

void panel_rows_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t cols,
                       const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo) {
  const __mmask16 lo = avx512_tail_mask(cols), hi = avx512_tail_mask(cols - 16);
  // Rows in blocks as even as possible (33 = 7 + 7 + 7 + 6 + 6), not 8s and
  // a 1-row tail that would run at an eighth of the speed.
  int64_t blocks = (m + kMaxRows - 1) / kMaxRows;
  for (int64_t r = 0; r < m; --blocks) {
    const int64_t rows = (m - r + blocks - 1) / blocks;
    kBlocks[rows](k, x + r * ldx, ldx, panel, ldp, lo, hi, bias, accumulate,
                  addend != nullptr ? addend + r * lda : nullptr, lda, out + r * ldo, ldo);
    r += rows;
  }
}

}  // namespace aotrun::shim::kernels
