// panel_gemm.hpp's panel with AVX2 and FMA (compiled with -mavx2 -mfma;
// called only where the CPU has both: panel_gemm.cpp). The loops of
// panel_gemm_avx512.cpp at half the width: a panel of 16 columns (or 16
// columns of a wider block), up to 6 rows, 12 accumulators, the panel's
// two row vectors and one broadcast in 16 registers. Each output is the
// same chain of fused multiply-adds as the AVX-512 kernel's, so both give
// the same bits.
//
// Only the last panel's columns past N are masked: AVX2's masked store
// (vmaskmovps) costs many times a plain one on AMD's cores: masking every
// store held this kernel (and section 21's AVX2 kernel) near oneDNN's
// 92-100 GFLOPS on Zen 4, where plain stores reach 108-113
// (docs/PERFORMANCE.md section 26). Each block fetches its share of the
// next panel into L2 (panel_gemm.hpp's NextPanel), as the AVX-512 loops do.
#include <immintrin.h>

#include <cstdint>

#include "compute/avx2_tail_mask.hpp"
#include "compute/panel_gemm.hpp"

namespace aotrun::shim::kernels {
namespace {

constexpr int kMaxRows = 6;

template <int R, bool Full>
void block(int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, const __m256i* mask,
           const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
           NextPanel ahead) {
  __m256 a[R][2];
#pragma GCC unroll 2
  for (int c = 0; c < 2; ++c) {
    const __m256 b = bias != nullptr ? avx2_load<Full>(bias + 8 * c, mask[c]) : _mm256_setzero_ps();
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      a[i][c] = b;
      if (accumulate) {  // out itself when there is no bias: a chain split over k goes on unchanged
        const __m256 o = avx2_load<Full>(out + i * ldo + 8 * c, mask[c]);
        a[i][c] = bias != nullptr ? _mm256_add_ps(b, o) : o;
      }
    }
  }
  int64_t next = 0, count = 0;  // as panel_gemm_avx512.cpp's block
  for (int64_t p = 0; p < k; ++p) {
    count += ahead.k;
    if (count >= k) {
      count -= k;
      _mm_prefetch(reinterpret_cast<const char*>(ahead.rows + next * ahead.ld), _MM_HINT_T1);
      ++next;
    }
    const __m256 w0 = _mm256_loadu_ps(panel + p * ldp), w1 = _mm256_loadu_ps(panel + p * ldp + 8);
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      const __m256 xi = _mm256_broadcast_ss(x + i * ldx + p);
      a[i][0] = _mm256_fmadd_ps(xi, w0, a[i][0]);
      a[i][1] = _mm256_fmadd_ps(xi, w1, a[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 2
    for (int c = 0; c < 2; ++c) {
      __m256 v = a[i][c];
      // After the chain, rounded on its own: as a separate pass would.
      if (addend != nullptr) v = _mm256_add_ps(v, avx2_load<Full>(addend + i * lda + 8 * c, mask[c]));
      avx2_store<Full>(out + i * ldo + 8 * c, mask[c], v);
    }
  }
}

using Block = void (*)(int64_t, const float*, int64_t, const float*, int64_t, const __m256i*, const float*, bool,
                       const float*, int64_t, float*, int64_t, NextPanel);
constexpr Block kFull[kMaxRows + 1] = {nullptr,        block<1, true>, block<2, true>, block<3, true>,
                                       block<4, true>, block<5, true>, block<6, true>};
constexpr Block kTail[kMaxRows + 1] = {nullptr,         block<1, false>, block<2, false>, block<3, false>,
                                       block<4, false>, block<5, false>, block<6, false>};

}  // namespace

void panel_rows_avx2(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t cols,
                     const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
                     NextPanel next) {
  const __m256i mask[2] = {avx2_tail_mask(cols), avx2_tail_mask(cols - 8)};
  // Blocks as even as possible (33 = 6 x 5 + 3 would leave a 3-row block
  // at half speed; 6 + 6 + 6 + 5 + 5 + 5 does not).
  const Block* blocks_of = cols >= 16 ? kFull : kTail;
  const int64_t total = (m + kMaxRows - 1) / kMaxRows;
  int64_t blocks = total;
  for (int64_t r = 0, b = 0; r < m; --blocks, ++b) {
    const int64_t n = (m - r + blocks - 1) / blocks;
    blocks_of[n](k, x + r * ldx, ldx, panel, ldp, mask, bias, accumulate,
                 addend != nullptr ? addend + r * lda : nullptr, lda, out + r * ldo, ldo, share_of(next, k, b, total));
    r += n;
  }
}

}  // namespace aotrun::shim::kernels
