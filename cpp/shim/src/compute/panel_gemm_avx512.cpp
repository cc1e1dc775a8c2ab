// panel_gemm.hpp's panel with AVX-512 (compiled with -mavx512f; called only
// where the CPU has it: panel_gemm.cpp). A block of rows keeps its outputs
// in registers while k runs: per step, the V vectors of the panel's row and
// one broadcast per row feed V multiply-adds per row. One panel (V = 2):
// up to 8 rows, 16 accumulators. Two panels side by side (V = 4, a frozen
// blob's 64-wide rows read in place): up to 6 rows, 24 accumulators. The
// panel's rows are `ldp` floats apart and need no alignment: a blob read
// in place (panels_over) sits where the model's allocation put it.
#include <immintrin.h>

#include <cstdint>

#include "compute/avx512_tail_mask.hpp"
#include "compute/panel_gemm.hpp"

namespace aotrun::shim::kernels {
namespace {

// Rows per block: 8 measured best on Zen 4 for one panel; 6 keeps two
// panels' 24 accumulators, 4 row vectors and a broadcast in 32 registers.
template <int V>
constexpr int kMaxRows = V == 2 ? 8 : 6;

template <int R, int V>
void block(int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, const __mmask16* mask,
           const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
           NextPanel ahead) {
  __m512 a[R][V];
#pragma GCC unroll 4
  for (int c = 0; c < V; ++c) {
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(mask[c], bias + 16 * c) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      a[i][c] = b;
      if (accumulate) {  // out itself when there is no bias: a chain split over k goes on unchanged
        const __m512 o = _mm512_maskz_loadu_ps(mask[c], out + i * ldo + 16 * c);
        a[i][c] = bias != nullptr ? _mm512_add_ps(b, o) : o;
      }
    }
  }
  // The share's rows go out evenly over the block's steps (ahead.k <= k):
  // one each time the running count passes k.
  int64_t next = 0, count = 0;
  for (int64_t p = 0; p < k; ++p) {
    count += ahead.k;
    if (count >= k) {
      count -= k;
#pragma GCC unroll 4
      for (int c = 0; c < V; ++c)
        _mm_prefetch(reinterpret_cast<const char*>(ahead.rows + next * ahead.ld + 16 * c), _MM_HINT_T1);
      ++next;
    }
    __m512 w[V];
#pragma GCC unroll 4
    for (int c = 0; c < V; ++c) w[c] = _mm512_loadu_ps(panel + p * ldp + 16 * c);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512 xi = _mm512_set1_ps(x[i * ldx + p]);
#pragma GCC unroll 4
      for (int c = 0; c < V; ++c) a[i][c] = _mm512_fmadd_ps(xi, w[c], a[i][c]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < V; ++c) {
      __m512 v = a[i][c];
      // After the chain, rounded on its own: as a separate pass would.
      if (addend != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[c], addend + i * lda + 16 * c));
      _mm512_mask_storeu_ps(out + i * ldo + 16 * c, mask[c], v);
    }
  }
}

using Block = void (*)(int64_t, const float*, int64_t, const float*, int64_t, const __mmask16*, const float*, bool,
                       const float*, int64_t, float*, int64_t, NextPanel);
constexpr Block kOnePanel[kMaxRows<2> + 1] = {nullptr,     block<1, 2>, block<2, 2>, block<3, 2>, block<4, 2>,
                                              block<5, 2>, block<6, 2>, block<7, 2>, block<8, 2>};
constexpr Block kTwoPanels[kMaxRows<4> + 1] = {nullptr,     block<1, 4>, block<2, 4>, block<3, 4>,
                                               block<4, 4>, block<5, 4>, block<6, 4>};

// Rows [0, m) of `cols` (<= 16 V) columns, in blocks as even as possible
// (33 = 7 + 7 + 7 + 6 + 6 for one panel), not full blocks and a 1-row tail
// that would run at a fraction of the speed.
template <int V>
void rows(const Block* blocks_of, int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp,
          int64_t cols, const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
          NextPanel next) {
  __mmask16 mask[V];
  for (int c = 0; c < V; ++c) mask[c] = avx512_tail_mask(cols - 16 * c);
  const int64_t total = (m + kMaxRows<V> - 1) / kMaxRows<V>;
  int64_t blocks = total;
  for (int64_t r = 0, b = 0; r < m; --blocks, ++b) {
    const int64_t n = (m - r + blocks - 1) / blocks;
    blocks_of[n](k, x + r * ldx, ldx, panel, ldp, mask, bias, accumulate,
                 addend != nullptr ? addend + r * lda : nullptr, lda, out + r * ldo, ldo, share_of(next, k, b, total));
    r += n;
  }
}

}  // namespace

void panel_rows_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t cols,
                       const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
                       NextPanel next) {
  rows<2>(kOnePanel, m, k, x, ldx, panel, ldp, cols, bias, accumulate, addend, lda, out, ldo, next);
}

void panel_rows_wide_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp,
                            int64_t cols, const float* bias, bool accumulate, const float* addend, int64_t lda,
                            float* out, int64_t ldo, NextPanel next) {
  rows<4>(kTwoPanels, m, k, x, ldx, panel, ldp, cols, bias, accumulate, addend, lda, out, ldo, next);
}

}  // namespace aotrun::shim::kernels
