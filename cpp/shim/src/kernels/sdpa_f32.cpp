// Float32 attention read and written in place: per (batch, query head), the
// scores Q·Kᵀ·scale by one sgemm on the tensors' own rows, the mask added
// and the causal part cut off row by row, a vectorised softmax (softmax_row.cpp),
// and P·V by a second sgemm straight into the output; a small head (the
// tokens of one request) by plain loops instead (head_products.hpp). No
// per-head copies: models pass query, key and value as strided views
// ([B, L, H, E] storage read as [B, H, L, E]) whose last dim is unit-stride.
// Where the CPU has AVX-512 or AVX2, P·V of a big head runs on the panel loops
// (panel_gemm.hpp) instead, its values packed into the thread's scratch:
// as fast as oneDNN's sgemm there, which generates the kernels of a
// process's first non-transposed sgemm on that call (40-45 ms on a Zen 4
// core, against 4 ms for the Q·Kᵀ form; docs/PERFORMANCE.md section 23).
// Q·Kᵀ stays on sgemm: packing the keys cost more than the panels gained.
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>

#include "compute/head_products.hpp"
#include "compute/panel_gemm.hpp"
#include "compute/scratch.hpp"
#include "compute/team_split.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

bool sdpa_f32(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, double scale,
              const Tensor& out, const Tensor& logsumexp) {
  if (mask != nullptr && mask->dtype != kFloat32) return false;
  const int64_t B = q.sizes[0], Hq = q.sizes[1], L = q.sizes[2], E = q.sizes[3];
  const int64_t Hk = k.sizes[1], S = k.sizes[2];
  // Unit-stride rows, with row strides as BLAS takes them: a single row's
  // stride is free (any value addresses it), more rows must not overlap.
  int64_t ld[4];
  const Tensor* ts[] = {&q, &k, &v, &out};
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = *ts[i];
    if (t.sizes[3] > 1 && t.strides[3] != 1) return false;
    ld[i] = t.sizes[2] <= 1 ? std::max<int64_t>(E, 1) : t.strides[2];
    if (ld[i] < E) return false;
  }
  const int64_t group = Hq / Hk;
  const float* qp = static_cast<const float*>(q.data());
  const float* kp = static_cast<const float*>(k.data());
  const float* vp = static_cast<const float*>(v.data());
  float* op = static_cast<float*>(out.data());
  float* lp = static_cast<float*>(logsumexp.data());
  const float* mp = mask != nullptr ? static_cast<const float*>(mask->data()) : nullptr;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // One (batch, head) per iteration, split over the calling thread's OpenMP
  // team when there is more than a little work (each head is computed as on
  // one thread, so results do not depend on the team size; the sgemms run
  // single-threaded inside the region). Errors cannot leave the region: the
  // first one is kept and thrown after it.
  const int64_t heads = B * Hq;
  const bool parallel = heads > 1 && heads * L * S * E >= (int64_t{1} << 18);
  const bool small = L * S * E <= kHeadProductsMaxMacs;
  const bool panels = !small && panel_gemm_supported();
  std::string failure;
  for_range<Schedule::kDynamic>(parallel, heads, [&](int64_t bh) {
    try {
      thread_local Scratch scores;  // [L, S] of one head, then Kᵀ [E, S] when small
      float* sp = scores.floats(small ? (L + E) * S : L * S);
      const int64_t b = bh / Hq, h = bh % Hq;
      const float* qh = qp + b * q.strides[0] + h * q.strides[1];
      const float* kh = kp + b * k.strides[0] + (h / group) * k.strides[1];
      const float* vh = vp + b * v.strides[0] + (h / group) * v.strides[1];
      if (small) {
        head_scores(L, S, E, static_cast<float>(scale), qh, ld[0], kh, ld[1], sp + L * S, sp);
      } else {
        sgemm(false, true, L, S, E, static_cast<float>(scale), qh, ld[0], kh, ld[1], 0.0f, sp, S);
      }
      for (int64_t i = 0; i < L; ++i) {
        float* row = sp + i * S;
        if (mp != nullptr) {
          const float* mr = mp + b * mask->strides[0] + h * mask->strides[1] + i * mask->strides[2];
          const int64_t ms = mask->strides[3];
          if (ms == 1) {
            for (int64_t j = 0; j < S; ++j) row[j] += mr[j];
          } else {
            for (int64_t j = 0; j < S; ++j) row[j] += mr[j * ms];
          }
        }
        if (causal) {
          for (int64_t j = i + 1; j < S; ++j) row[j] = neg_inf;
        }
        const float mx = row_max(row, S);
        float* lse = lp + b * logsumexp.strides[0] + h * logsumexp.strides[1] + i * logsumexp.strides[2];
        if (mx == neg_inf) {  // nothing to attend to: zero output and logsumexp 0, as PyTorch's CPU kernel gives
          for (int64_t j = 0; j < S; ++j) row[j] = 0.0f;
          *lse = 0.0f;
          continue;
        }
        const float sum = exp_sum(row, S, mx);
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < S; ++j) row[j] *= inv;
        *lse = mx + std::log(sum);
      }
      float* oh = op + b * out.strides[0] + h * out.strides[1];
      if (small) {
        head_weighted_sum(L, S, E, sp, vh, ld[2], oh, ld[3]);
      } else if (panels) {
        thread_local Scratch packed;  // this thread's panels of one head's values
        float* vpan = packed.floats(panel_floats(E, S));
        pack_panels_into(vh, E, S, 1, ld[2], vpan);
        panel_gemm_serial(E, S, vpan, L, sp, S, oh, ld[3]);
      } else {
        sgemm(false, false, L, E, S, 1.0f, sp, S, vh, ld[2], 0.0f, oh, ld[3]);
      }
    } catch (const std::exception& e) {
#pragma omp critical(aotrun_shim_sdpa_failure)
      if (failure.empty()) failure = e.what();
    }
  });
  if (!failure.empty()) throw ShimError(failure);
  return true;
}

}  // namespace aotrun::shim::kernels
