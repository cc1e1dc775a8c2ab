// Float32 linear layers on a weight packed once into column panels, or on
// a frozen export's blob that already holds such panels' rows (read in
// place: panels_over): the shim's own GEMM for a constant weight on CPUs
// with AVX-512 (packed_gemm.hpp decides when); also attention's P·V for big
// heads, the values packed per head into a thread's scratch (sdpa_f32.cpp).
//
// At a request's row counts (M = its tokens, 1 to a few hundred) and a
// transformer's widths, oneDNN 2.6's packed sgemm ran at 96-111 GFLOPS on
// one Zen 4 core, where these register-blocked loops run at 108-115
// (docs/PERFORMANCE.md section 21). The weight W [N, K] is stored as
// ceil(N / 32) panels of 32 output features; a panel is K rows of 32
// floats (two vectors), zero past N, so each step of k loads whole vectors
// and every row block of x streams through the same panel while it is in
// cache. The bias, when there is one, is the accumulators' initial value:
// no pass over the output before the product. Not for AVX2-only CPUs: an
// AVX2 variant (5 rows x 16 columns) measured no faster than oneDNN's AVX2
// packing at these shapes, which those CPUs keep.
//
// Every output element is one chain of fused multiply-adds over k in
// order, started from its initial value, whatever the row block or the
// team size: results are bit-identical at every thread count.
#pragma once

#include <cstdint>
#include <memory>

namespace aotrun::shim::kernels {

// Output features per panel: two AVX-512 vectors.
constexpr int64_t kPanelWidth = 32;

// A GEMM on a packed weight of fewer multiply-adds than this runs on the
// calling thread alone, on either packing (packed_gemm.hpp): an OpenMP
// team's fork and join cost more than splitting such a product saves.
constexpr int64_t kSerialGemmMacs = int64_t(1) << 18;

// A weight laid out for panel_gemm (above): panel q (output features
// [32q, 32q + 32)) at data + (q / group) * block_stride + (q % group) * 32,
// its row for step p of k `ld` floats after row p - 1. pack_panels' own
// buffer (64-byte aligned) has group 1 and ld 32: each panel K rows of 32
// floats, one after the other. panels_over describes memory that already
// holds such rows in wider blocks (ld = 32 x group); blocks of an even
// group run 64 columns at a time, so each step of k reads whole rows of
// the block. Immutable once made, so any number of threads may run on it.
struct PanelWeight {
  int64_t n = 0, k = 0;
  const float* data = nullptr;
  int64_t ld = kPanelWidth, group = 1, block_stride = 0;
  // Frees pack_panels' buffer; empty when the memory is someone else's.
  std::shared_ptr<const float> owned;
};

// Whether this CPU runs panel_gemm: AVX-512 (F), as vector_isa.hpp reports
// (AOTRUN_SHIM_MAX_ISA=avx2 or =scalar turns it off).
bool panel_gemm_supported();

// W's panels, W's element (j, p) -- output feature j, input feature p -- at
// w[j * sn + p * sk] (a row-major [N, K] weight has sn = K, sk = 1; the
// transposed [K, N] form of GPT-2's Conv1D has sn = 1, sk = N). Requires
// panel_gemm_supported(); throws std::bad_alloc when memory runs out.
std::unique_ptr<PanelWeight> pack_panels(const float* w, int64_t n, int64_t k, int64_t sn, int64_t sk);

// The [n, k] weight held at `base` in blocks of `width` output features (a
// multiple of kPanelWidth): element (j, p) at base + (j / width) *
// block_stride + p * width + j % width, the columns of the last block past
// n readable (its padding; never stored). oneDNN's "AB16b64a" is such a
// layout (a frozen export's linear weight on an AVX-512 CPU). No copy:
// `base` (any float's alignment) is not owned and must outlive the result.
// Requires panel_gemm_supported().
std::unique_ptr<PanelWeight> panels_over(const float* base, int64_t n, int64_t k, int64_t width, int64_t block_stride);

// A thread's 64-byte-aligned scratch for panels packed per call: grows to
// the largest size asked for, and keeps it.
class PanelScratch {
 public:
  PanelScratch() = default;
  PanelScratch(const PanelScratch&) = delete;
  PanelScratch& operator=(const PanelScratch&) = delete;
  ~PanelScratch();
  // Room for `floats` floats (their values unspecified); throws
  // std::bad_alloc when memory runs out.
  float* at_least(int64_t floats);

 private:
  float* data_ = nullptr;
  int64_t size_ = 0;
};

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

// One panel for rows [0, m): out's `cols` (<= kPanelWidth) columns of those
// rows, as panel_gemm defines them, the panel's rows `ldp` floats apart;
// the wide form takes two panels side by side (cols <= 2 x kPanelWidth, a
// row of both at once). panel_gemm_avx512.cpp, compiled for AVX-512;
// panel_gemm.cpp calls them only where the CPU has it.
void panel_rows_wide_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp,
                            int64_t cols, const float* bias, bool accumulate, const float* addend, int64_t lda,
                            float* out, int64_t ldo);
void panel_rows_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t cols,
                       const float* bias, bool accumulate, const float* addend, int64_t lda, float* out, int64_t ldo);

}  // namespace aotrun::shim::kernels
