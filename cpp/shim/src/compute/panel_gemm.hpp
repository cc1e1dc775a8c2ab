// Float32 linear layers on a weight packed once into column panels, or on
// a frozen export's blob that already holds such panels' rows (read in
// place: panels_over): the shim's own GEMM for a constant weight on CPUs
// with AVX-512 or AVX2 and FMA (packed_gemm.hpp decides when); also
// attention's P·V for big heads, the values packed per head into a
// thread's scratch (sdpa_f32.cpp).
//
// At a request's row counts (M = its tokens, 1 to a few hundred) and a
// transformer's widths, oneDNN 2.6's packed sgemm ran at 96-111 GFLOPS on
// one Zen 4 core with AVX-512 and 92-100 with AVX2, where these
// register-blocked loops run at 108-115 with either (docs/PERFORMANCE.md
// sections 21 and 26). The weight W [N, K] is stored as ceil(N / w)
// panels of w = panel_width() output features, two vectors of the CPU's
// width; a panel is K rows of w floats, zero past N, so each step of k
// loads whole vectors and every row block of x streams through the same
// panel while it is in cache. The bias, when there is one, is the
// accumulators' initial value: no pass over the output before the product.
//
// Every output element is one chain of fused multiply-adds over k in
// order, started from its initial value, whatever the row block, the team
// size or the vector width: results are bit-identical at every thread
// count, and the same with AVX-512 as with AVX2.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

namespace aotrun::shim::kernels {

// Output features per panel: two vectors, of AVX-512 or of AVX2.
constexpr int64_t kPanelWidthAvx512 = 32, kPanelWidthAvx2 = 16;

// A GEMM on a packed weight of fewer multiply-adds than this runs on the
// calling thread alone, on either packing (packed_gemm.hpp): an OpenMP
// team's fork and join cost more than splitting such a product saves.
constexpr int64_t kSerialGemmMacs = int64_t(1) << 18;

// A weight laid out for panel_gemm (above): blocks of `ld` output
// features (a multiple of panel_width()), block b at data + b *
// block_stride, holding K rows of `ld` floats, row p (step p of k) `ld`
// floats after row p - 1. pack_panels' own buffer (64-byte aligned, from
// packed_memory.hpp: in huge pages where the kernel allows) has blocks of
// one panel (ld = panel_width()), one after the other.
// panels_over describes memory that already holds such rows in wider
// blocks; with AVX-512, blocks of a multiple of 64 run 64 columns at a
// time, so each step of k reads whole rows of the block. Immutable once
// made, so any number of threads may run on it.
struct PanelWeight {
  int64_t n = 0, k = 0;
  const float* data = nullptr;
  int64_t ld = 0, block_stride = 0;
  // Frees pack_panels' buffer; empty when the memory is someone else's.
  std::shared_ptr<const float> owned;
};

// Whether this CPU runs panel_gemm: AVX-512 (F), or AVX2 with FMA, as
// vector_isa.hpp reports (AOTRUN_SHIM_MAX_ISA=scalar turns it off).
bool panel_gemm_supported();

// Output features per panel on this CPU: kPanelWidthAvx512 or
// kPanelWidthAvx2 (as vector_isa.hpp reports). Requires
// panel_gemm_supported().
int64_t panel_width();

// W's panels, W's element (j, p) -- output feature j, input feature p -- at
// w[j * sn + p * sk] (a row-major [N, K] weight has sn = K, sk = 1; the
// transposed [K, N] form of GPT-2's Conv1D has sn = 1, sk = N). Requires
// panel_gemm_supported(); throws std::bad_alloc when memory runs out.
std::unique_ptr<PanelWeight> pack_panels(const float* w, int64_t n, int64_t k, int64_t sn, int64_t sk);

// The [n, k] weight held at `base` in blocks of `width` output features (a
// multiple of panel_width()): element (j, p) at base + (j / width) *
// block_stride + p * width + j % width, the columns of the last block past
// n readable (its padding; never stored). oneDNN's "AB16b64a" is such a
// layout (a frozen export's linear weight on an AVX-512 CPU). No copy:
// `base` (any float's alignment) is not owned and must outlive the result.
// Requires panel_gemm_supported().
std::unique_ptr<PanelWeight> panels_over(const float* base, int64_t n, int64_t k, int64_t width, int64_t block_stride);

// The floats pack_panels_into writes for an [n, k] weight.
int64_t panel_floats(int64_t n, int64_t k);

// pack_panels' layout written into `dst` (panel_floats(n, k) floats,
// 64-byte aligned): for operands packed per call into a thread's scratch
// (attention's values). Requires panel_gemm_supported().
void pack_panels_into(const float* w, int64_t n, int64_t k, int64_t sn, int64_t sk, float* dst);

// out [M, N] = x [M, K] @ Wᵀ for the [n, k] weight packed at `panels` by
// pack_panels_into, on the calling thread only (for a caller that is
// itself one of a team's threads). Same bits as panel_gemm.
void panel_gemm_serial(int64_t n, int64_t k, const float* panels, int64_t m, const float* x, int64_t ldx, float* out,
                       int64_t ldo);

// out [M, N] = x [M, K] @ Wᵀ + bias + (accumulate ? out : 0), then
// + addend, where x has row stride ldx and out row stride ldo (both unit
// column stride, not overlapping), bias, when not null, holds N floats
// added to every row, and addend, when not null, is [M, N] with row
// stride lda (unit column stride, not overlapping out). The addend is
// added to the finished chain as its own rounded step -- the result of a
// separate pass -- as a residual connection's sum is. Products of at
// least kSerialGemmMacs are split over the calling thread's OpenMP team
// by panels and row groups; smaller ones run on the calling thread. No
// allocation; does not throw.
void panel_gemm(const PanelWeight& w, int64_t m, const float* x, int64_t ldx, const float* bias, bool accumulate,
                float* out, int64_t ldo, const float* addend = nullptr, int64_t lda = 0);

// panel_gemm on the calling thread alone, whatever the product's size:
// for a caller that splits the work itself, or runs it on one thread (a
// frozen convolution's row groups, each multiplied right after it is
// unfolded, convolution_gemm.cpp). Same bits as panel_gemm. No
// allocation; does not throw.
void panel_gemm_here(const PanelWeight& w, int64_t m, const float* x, int64_t ldx, const float* bias, bool accumulate,
                     float* out, int64_t ldo);

// The panel a thread runs next, to be fetched into L2 while this one runs:
// `k` rows of the panel's width, `ld` floats apart, from `rows`; none when
// `rows` is null. At a request's 16-33 rows a panel is read from L3 once
// and then from L2 by each further row block; fetching it ahead, a share
// in each row block, keeps its first pass from waiting on L3
// (docs/PERFORMANCE.md section 31).
struct NextPanel {
  const float* rows = nullptr;
  int64_t k = 0, ld = 0;
};

// Row block b's share of `next` when `blocks` row blocks of `k` steps each
// run over the current panel: an even part of its rows, at most k (a block
// fetches at most one row per step); nothing when there is no next panel.
inline NextPanel share_of(const NextPanel& next, int64_t k, int64_t b, int64_t blocks) {
  const int64_t spread = next.rows != nullptr && k > 0 ? next.k : 0;
  const auto edge = [&](int64_t i) { return std::min(spread * i / blocks, k * i); };
  const int64_t a0 = edge(b), a1 = std::min(edge(b + 1), a0 + k);
  return {next.rows + a0 * next.ld, a1 - a0, next.ld};
}

// One panel for rows [0, m): out's `cols` (<= the panel's width) columns of
// those rows, as panel_gemm defines them, the panel's rows `ldp` floats
// apart; the wide form takes two panels side by side (cols <= 2 x
// kPanelWidthAvx512, a row of both at once). `next` is prefetched (above);
// it changes no result. panel_gemm_avx512.cpp and panel_gemm_avx2.cpp, each
// compiled for its ISA; panel_gemm.cpp calls them only where the CPU has
// it.
void panel_rows_wide_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp,
                            int64_t cols, const float* bias, bool accumulate, const float* addend, int64_t lda,
                            float* out, int64_t ldo, NextPanel next);
void panel_rows_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t cols,
                       const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
                       NextPanel next);
void panel_rows_avx2(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t cols,
                     const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo,
                     NextPanel next);

}  // namespace aotrun::shim::kernels
