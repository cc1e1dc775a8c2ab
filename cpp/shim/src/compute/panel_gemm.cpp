// panel_gemm.hpp: the packing and the split over threads.
#include "compute/panel_gemm.hpp"

#include <omp.h>

#include <algorithm>

#include "compute/packed_memory.hpp"
#include "compute/vector_isa.hpp"

namespace aotrun::shim::kernels {
namespace {

// Rows per unit of work, at most: a row group's blocks run through one
// panel's chunk (below) in turn while it is in cache. The groups are made
// even (394 rows: 7 of 56-57, not 6 of 64 and one of 10, which left one
// of two threads 14% more work).
constexpr int64_t kRowGroup = 64;

// The k chunk: 256 KiB of a panel (2,048 steps of a 32-wide one), so
// that a panel's chunk stays in L2 while every row block runs through
// it. Chunks of 32 KiB (L1) measured 2-8% slower at 2 threads for k of
// 704-1,024 (docs/PERFORMANCE.md section 21), and no chunking at all the
// same as this up to k = 1,024.
constexpr int64_t kChunkBytes = 256 * 1024;

// panel_gemm on the weight `w`: split over the calling thread's team when
// `may_split` and the product is big enough.
void run_panels(const PanelWeight& w, int64_t m, const float* x, int64_t ldx, const float* bias, bool accumulate,
                float* out, int64_t ldo, const float* addend, int64_t lda, bool may_split) {
  const int64_t n = w.n, k = w.k;
  if (m <= 0 || n <= 0) return;
  // With AVX-512, blocks of 64 columns or a multiple (a blob read in place:
  // panels_over) go 64 columns at a time: each step of k then reads whole
  // 256-byte rows of the block, where one 32-wide panel at a time used half
  // of every row and ran 2-4% slower than pack_panels' own layout
  // (docs/PERFORMANCE.md section 25). AVX2 takes 16 at a time.
  const bool avx512 = vector_isa() == VectorIsa::kAvx512, wide = avx512 && w.ld % (2 * kPanelWidthAvx512) == 0;
  const int64_t pw = !avx512 ? kPanelWidthAvx2 : wide ? 2 * kPanelWidthAvx512 : kPanelWidthAvx512;
  const auto kernel = !avx512 ? panel_rows_avx2 : wide ? panel_rows_wide_avx512 : panel_rows_avx512;
  const int64_t per_block = w.ld / pw;
  const int64_t panels = (n + pw - 1) / pw;
  const int64_t groups = (m + kRowGroup - 1) / kRowGroup;
  const int64_t tiles = panels * groups;
  const int64_t chunk = std::max<int64_t>(kChunkBytes / (pw * int64_t(sizeof(float))), 1);
  const bool split = may_split && m * n * k >= kSerialGemmMacs && tiles > 1 && omp_get_max_threads() > 1;
  const auto panel_of = [&](int64_t t) {
    const int64_t q = t % panels;
    return w.data + (q / per_block) * w.block_stride + (q % per_block) * pw;
  };
  // Tile t, chunk by chunk of k, each chunk fetching the next ahead: the
  // tile's own next chunk, or the first of tile t + 1 (this thread's next
  // tile whenever it runs the tiles in order, as a thread alone does and
  // a team's thread mostly does). The addend goes in with the last chunk,
  // once the chain is whole.
  const auto tile = [&](int64_t t) {
    const int64_t g = t / panels, q = t % panels;
    const int64_t r0 = m * g / groups, r1 = m * (g + 1) / groups, j0 = q * pw;
    const float* panel = panel_of(t);
    const int64_t k_end = std::max<int64_t>(k, 1);
    for (int64_t p0 = 0; p0 < k_end; p0 += chunk) {
      const int64_t kn = std::min(chunk, k - p0);
      const bool last = p0 + kn >= k;
      NextPanel next;
      if (!last) {
        next = {panel + (p0 + kn) * w.ld, std::min(chunk, k - p0 - kn), w.ld};
      } else if (t + 1 < tiles) {
        next = {panel_of(t + 1), std::min(chunk, k), w.ld};
      }
      kernel(r1 - r0, kn, x + r0 * ldx + p0, ldx, panel + p0 * w.ld, w.ld, std::min(pw, n - j0),
             p0 == 0 && bias != nullptr ? bias + j0 : nullptr, p0 > 0 || accumulate,
             last && addend != nullptr ? addend + r0 * lda + j0 : nullptr, lda, out + r0 * ldo + j0, ldo, next);
    }
  };
  if (!split) {  // no team at all: an `if (false)` region costs libgomp a team of one (team_split.hpp)
    for (int64_t t = 0; t < tiles; ++t) tile(t);
    return;
  }
  // Tiles are handed out as threads come for them, in runs that shrink
  // as the work runs out (guided: neighbouring panels of the same rows
  // stay together, so tile t + 1 is mostly the same thread's next, and no
  // two threads share an output line but at a run's edge). A fixed split
  // left the calling thread finishing 4-9% after the other in most GEMMs
  // of a 2-thread Llama call; one tile at a time (dynamic) cost 10-20% in
  // BM_FrozenLinear.
#pragma omp parallel for schedule(guided)
  for (int64_t t = 0; t < tiles; ++t) tile(t);
}

}  // namespace

bool panel_gemm_supported() { return vector_isa() != VectorIsa::kScalar; }

int64_t panel_width() { return vector_isa() == VectorIsa::kAvx512 ? kPanelWidthAvx512 : kPanelWidthAvx2; }

int64_t panel_floats(int64_t n, int64_t k) {
  const int64_t pw = panel_width();
  return (n + pw - 1) / pw * k * pw;
}

void pack_panels_into(const float* w, int64_t n, int64_t k, int64_t sn, int64_t sk, float* out) {
  const int64_t pw = panel_width(), panels = (n + pw - 1) / pw;
  for (int64_t q = 0; q < panels; ++q) {
    float* dst = out + q * k * pw;
    const int64_t j0 = q * pw, cols = std::min(pw, n - j0);
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t j = 0; j < cols; ++j) dst[r * pw + j] = w[(j0 + j) * sn + r * sk];
      for (int64_t j = cols; j < pw; ++j) dst[r * pw + j] = 0.0f;
    }
  }
}

std::unique_ptr<PanelWeight> pack_panels(const float* w, int64_t n, int64_t k, int64_t sn, int64_t sk) {
  auto p = std::make_unique<PanelWeight>();
  p->n = n;
  p->k = k;
  const std::shared_ptr<float> buffer = packed_floats(panel_floats(n, k));
  pack_panels_into(w, n, k, sn, sk, buffer.get());
  p->owned = buffer;
  p->data = buffer.get();
  p->ld = panel_width();
  p->block_stride = k * p->ld;
  return p;
}

std::unique_ptr<PanelWeight> panels_over(const float* base, int64_t n, int64_t k, int64_t width, int64_t block_stride) {
  auto p = std::make_unique<PanelWeight>();
  p->n = n;
  p->k = k;
  p->data = base;
  p->ld = width;
  p->block_stride = block_stride;
  return p;
}

void panel_gemm_serial(int64_t n, int64_t k, const float* panels, int64_t m, const float* x, int64_t ldx, float* out,
                       int64_t ldo) {
  PanelWeight w;
  w.n = n;
  w.k = k;
  w.data = panels;
  w.ld = panel_width();
  w.block_stride = k * w.ld;
  run_panels(w, m, x, ldx, nullptr, false, out, ldo, nullptr, 0, false);
}

void panel_gemm(const PanelWeight& w, int64_t m, const float* x, int64_t ldx, const float* bias, bool accumulate,
                float* out, int64_t ldo, const float* addend, int64_t lda) {
  run_panels(w, m, x, ldx, bias, accumulate, out, ldo, addend, lda, true);
}

void panel_gemm_here(const PanelWeight& w, int64_t m, const float* x, int64_t ldx, const float* bias, bool accumulate,
                     float* out, int64_t ldo) {
  run_panels(w, m, x, ldx, bias, accumulate, out, ldo, nullptr, 0, false);
}

}  // namespace aotrun::shim::kernels
