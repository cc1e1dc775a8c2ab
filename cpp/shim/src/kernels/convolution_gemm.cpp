// A frozen convolution with many input channels as im2col + one GEMM on its
// weight packed once (compute/packed_gemm.hpp).
//
// Why: oneDNN 2.6's direct AVX2 kernel (jit:avx2) streams the whole weight
// again for each output row block. With 256-512 input channels and a small
// image (ResNet's last stages: a 9.4 MB weight, 7x7 outputs) that is weight
// bandwidth, not arithmetic: 36-76 GFLOPS on one EPYC core, where the
// packed GEMM of the same product runs at 86-95 (bench notes in
// docs/PERFORMANCE.md section 17). With 64 channels and large images the
// direct kernel wins (im2col's copy is then a fifth of the time), so only
// the weight-bound shapes come here. And only where oneDNN runs below
// AVX-512: with avx512_core it picks brgconv for these shapes, which is not
// weight-bound, and the same frozen ResNet-18 was as fast at 1 thread and 6%
// faster at 2 without this path (32.1-32.5 against 34.4-35.7 ms, Zen 4;
// docs/PERFORMANCE.md section 20).
//
// On AVX2 with the shim's own panels (panel_gemm.hpp), on one thread, this
// is also the path from 64 input channels at any size, up to 128 (k =
// 1,152): there the direct kernel ran ResNet-18's 64- and 128-channel 3x3
// convolutions in 7.1-7.3 ms on a Zen 3 core where the panels take 5.7-5.8
// (best of 15). The call goes a group of 64 output pixels at a time:
// unfolded into this thread's buffer, every panel run over it while it is
// in L2, then the ReLU on those rows; no pass over the whole unfolded
// input or output. At two threads the direct kernel is as fast or faster
// (2.8 ms against the panels' 3.2 for 64 channels: superlinear over its
// own one-thread time) and keeps these shapes (docs/PERFORMANCE.md
// section 32).
//
// Which cores: the measurements above are AMD's (Zen 3, and Zen 4 with
// oneDNN capped to AVX2). On an Intel core running AVX2 code (a Xeon with
// AVX-512 and AMX hidden by cpuid, docs/PERFORMANCE.md section 35) oneDNN's
// direct kernel is the faster one instead: 103-113 GFLOPS for ResNet-18's
// 64- to 256-channel 3x3 convolutions where this path made 89-95, and
// equal at 512 (frozen ResNet-18 at one thread 84 -> 76 ms without this
// path). So this path is for AMD (and Hygon) cores; AOTRUN_SHIM_CONV_GEMM=1
// takes it anywhere, =0 nowhere.
//
// The input must be channels-last (each pixel's channels contiguous: one
// memcpy per kernel tap; unfolded 8 MB at a time, in this thread's
// buffer), the output dense channels-last (it is then the GEMM's
// [N*OH*OW, O] row-major result), groups 1, and the weight a read-only
// (frozen) constant: its [O, kh*kw*C] copy is packed once and kept with it.
#include <cpuid.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "compute/onednn.hpp"
#include "compute/packed_gemm.hpp"
#include "compute/panel_gemm.hpp"
#include "compute/scratch.hpp"
#include "compute/team_split.hpp"
#include "dtype.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// Input channels from which the direct kernel is weight-bound at any size
// measured (M up to 1,568 rows), and below which only at small M.
constexpr int64_t kAlwaysChannels = 256;
constexpr int64_t kSmallMChannels = 128;
constexpr int64_t kSmallM = 1024;
// The unfolded input is built and multiplied this many floats (8 MB) of it
// at a time, and never fewer rows than this.
constexpr int64_t kChunkFloats = int64_t{1} << 21;
constexpr int64_t kMinChunkRows = 64;
// On panels: from this many input channels at any size, and this many
// output pixels per row group, at most.
constexpr int64_t kPanelChannels = 64;
constexpr int64_t kPanelGroupRows = 64;

// Whether this core is one the path was measured faster on (above), or
// the environment says otherwise. Computed once.
bool path_wins_here() {
  static const bool yes = [] {
    const char* env = std::getenv("AOTRUN_SHIM_CONV_GEMM");
    if (env != nullptr && std::strcmp(env, "1") == 0) return true;
    if (env != nullptr && std::strcmp(env, "0") == 0) return false;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    return std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
  }();
  return yes;
}

// Whether t is [N, C, H, W] laid out densely channels-last: C contiguous,
// pixels dense in (N, H, W) order (strides of size-1 dims are not looked
// at).
bool dense_channels_last(const Tensor& t) {
  if (t.dim() != 4) return false;
  const int64_t c = t.sizes[1], h = t.sizes[2], w = t.sizes[3];
  const int64_t want[4] = {h * w * c, 1, w * c, c};
  for (int d = 0; d < 4; ++d) {
    if (t.sizes[d] != 1 && t.strides[d] != want[d]) return false;
  }
  return true;
}

// Output pixel r's receptive field unfolded into `dst` (kh*kw*C floats):
// tap by tap, each tap C contiguous channels (zeros outside the image).
struct Unfold {
  const float* x;
  const Tensor& input;
  const ConvParams& p;
  int64_t c, h, w, kh, kw, oh, ow;

  void pixel(int64_t r, float* dst) const {
    const int64_t b = r / (oh * ow), y = (r / ow) % oh, xx = r % ow;
    for (int64_t i = 0; i < kh; ++i) {
      const int64_t iy = y * p.stride[0] - p.padding[0] + i * p.dilation[0];
      for (int64_t j = 0; j < kw; ++j) {
        float* tap = dst + (i * kw + j) * c;
        const int64_t ix = xx * p.stride[1] - p.padding[1] + j * p.dilation[1];
        if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
          std::memset(tap, 0, static_cast<size_t>(c) * sizeof(float));
        } else {
          std::memcpy(tap, x + b * input.strides[0] + iy * input.strides[2] + ix * input.strides[3],
                      static_cast<size_t>(c) * sizeof(float));
        }
      }
    }
  }
};

// y = u(y) over `rows` rows of `n` floats, `ld` apart: ReLU as a plain
// loop the compiler vectorises, anything else element by element.
void unary_rows(float* y, int64_t rows, int64_t n, int64_t ld, const Unary& u) {
  if (u.kind == Unary::kNone) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * ld;
    if (u.kind == Unary::kRelu) {
      for (int64_t j = 0; j < n; ++j) yr[j] = yr[j] < 0.0f ? 0.0f : yr[j];  // NaN stays, as relu()
    } else {
      for (int64_t j = 0; j < n; ++j) yr[j] = apply_unary(u, yr[j]);
    }
  }
}

}  // namespace

bool convolution_packed_gemm(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                             const Tensor& out, const ConvEpilogue& post, const char* op) {
  if (onednn::runs_avx512_core() || !path_wins_here()) return false;
  if (weight.storage == nullptr || !weight.storage->read_only()) return false;
  if (input.dtype != kFloat32 || weight.dtype != kFloat32 || out.dtype != kFloat32) return false;
  if (bias != nullptr && bias->dtype != kFloat32) return false;
  if (input.dim() != 4 || weight.dim() != 4 || p.groups != 1) return false;
  const int64_t n = input.sizes[0], c = input.sizes[1], h = input.sizes[2], w = input.sizes[3];
  const int64_t o = weight.sizes[0], kh = weight.sizes[2], kw = weight.sizes[3];
  const int64_t oh = out.sizes[2], ow = out.sizes[3];
  const int64_t m = n * oh * ow, k = kh * kw * c;
  if (kh * kw == 1 || m == 0 || o == 0) return false;
  const bool panels = derived_on_panels(k) && c >= kPanelChannels && omp_get_max_threads() == 1;
  if (!panels && !(packed_gemm_available() && (c >= kAlwaysChannels || (c >= kSmallMChannels && m <= kSmallM)))) {
    return false;
  }
  if (input.strides[1] != 1 || !dense_channels_last(out)) return false;
  if (post.accumulate != nullptr && post.accumulate->data() != out.data()) return false;

  // The weight as W [O, kh*kw*C] row-major, in the taps' order below.
  thread_local std::vector<int64_t> key;  // its capacity kept from call to call
  key.assign({-3, weight.storage_offset, o, c, kh, kw, weight.strides[0], weight.strides[1], weight.strides[2],
              weight.strides[3]});
  const auto fill = [&](float* dst) {
    const std::shared_ptr<const void> held = weight.read();
    const float* wsrc = static_cast<const float*>(held.get());
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          for (int64_t ic = 0; ic < c; ++ic) {
            dst[oc * k + (i * kw + j) * c + ic] =
                wsrc[oc * weight.strides[0] + ic * weight.strides[1] + i * weight.strides[2] + j * weight.strides[3]];
          }
  };
  const float beta = post.accumulate != nullptr ? 1.0f : 0.0f;
  const Unfold unfold{static_cast<const float*>(input.data()), input, p, c, h, w, kh, kw, oh, ow};
  thread_local Scratch bias_room;
  float* bias_floats = nullptr;  // the bias, contiguous
  if (bias != nullptr) {
    const float* bp = static_cast<const float*>(bias->data());
    bias_floats = bias_room.floats(o);
    for (int64_t oc = 0; oc < o; ++oc) bias_floats[oc] = bp[oc * bias->strides[0]];
  }
  float* const y = static_cast<float*>(out.data());
  if (panels) {
    const std::shared_ptr<const PanelWeight> panel_w = derived_panels(*weight.storage, key, o, k, fill);
    if (panel_w == nullptr) return false;
    // Even row groups of at most kPanelGroupRows, each unfolded into this
    // thread's buffer and multiplied while it is in L2.
    const int64_t groups = (m + kPanelGroupRows - 1) / kPanelGroupRows;
    thread_local Scratch scratch;
    float* const cols = scratch.floats((m + groups - 1) / groups * k);
    const float* const b = bias_floats;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t r0 = m * g / groups, r1 = m * (g + 1) / groups;
      for (int64_t r = r0; r < r1; ++r) unfold.pixel(r, cols + (r - r0) * k);
      panel_gemm_here(*panel_w, r1 - r0, cols, k, b, beta == 1.0f, y + r0 * o, o);
      unary_rows(y + r0 * o, r1 - r0, o, o, post.unary);
    }
    return true;
  }

  // The GEMM's left operand, a chunk of rows at a time: each output pixel's
  // receptive field, tap by tap, each tap C contiguous channels (zeros
  // outside). Chunks of at most kChunkFloats keep this thread's buffer small
  // at any batch; each still reuses every packed weight panel hundreds of
  // times. The OpenMP team writes the buffer through `lhs_data` (a
  // thread_local named inside the region would be each worker's own).
  const int64_t chunk = std::min(m, std::max<int64_t>(kMinChunkRows, kChunkFloats / k));
  thread_local Scratch cols;
  float* const lhs_data = cols.floats(chunk * k);
  for (int64_t r0 = 0; r0 < m; r0 += chunk) {
    const int64_t rows_here = std::min(chunk, m - r0);
    for_range(rows_here * k >= (1 << 18), rows_here, [&](int64_t rr) { unfold.pixel(r0 + rr, lhs_data + rr * k); });
    Tensor lhs;
    lhs.storage = Storage::borrow(lhs_data, static_cast<size_t>(rows_here * k) * sizeof(float));
    lhs.sizes = {rows_here, k};
    lhs.strides = {k, 1};
    lhs.dtype = kFloat32;
    Tensor rows = out;
    rows.storage_offset = out.storage_offset + r0 * o;
    rows.sizes = {rows_here, o};
    rows.strides = {o, 1};
    // Declined (oneDNN says packing does not pay) can only happen on the
    // first chunk, before anything was written: the answer is kept with
    // the weight.
    if (!packed_gemm_derived(rows, lhs, *weight.storage, key, o, fill, beta, op)) return false;
  }
  if (bias != nullptr) {
    for_range(m * o >= (1 << 16), m, [&](int64_t r) {
      float* yr = y + r * o;
      for (int64_t oc = 0; oc < o; ++oc) yr[oc] += bias_floats[oc];
    });
  }
  apply_unary(out, post.unary);
  return true;
}

}  // namespace aotrun::shim::kernels
