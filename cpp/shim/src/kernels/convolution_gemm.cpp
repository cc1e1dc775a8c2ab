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
// The input must be channels-last (each pixel's channels contiguous: one
// memcpy per kernel tap; unfolded 8 MB at a time, in this thread's
// buffer), the output dense channels-last (it is then the GEMM's
// [N*OH*OW, O] row-major result), groups 1, and the weight a read-only
// (frozen) constant: its [O, kh*kw*C] copy is packed once and kept with it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "compute/onednn.hpp"
#include "compute/packed_gemm.hpp"
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

}  // namespace

bool convolution_packed_gemm(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                             const Tensor& out, const ConvEpilogue& post, const char* op) {
  if (!packed_gemm_available() || onednn::runs_avx512_core()) return false;
  if (weight.storage == nullptr || !weight.storage->read_only()) return false;
  if (input.dtype != kFloat32 || weight.dtype != kFloat32 || out.dtype != kFloat32) return false;
  if (bias != nullptr && bias->dtype != kFloat32) return false;
  if (input.dim() != 4 || weight.dim() != 4 || p.groups != 1) return false;
  const int64_t n = input.sizes[0], c = input.sizes[1], h = input.sizes[2], w = input.sizes[3];
  const int64_t o = weight.sizes[0], kh = weight.sizes[2], kw = weight.sizes[3];
  const int64_t oh = out.sizes[2], ow = out.sizes[3];
  const int64_t m = n * oh * ow, k = kh * kw * c;
  if (kh * kw == 1 || m == 0 || o == 0) return false;
  if (!(c >= kAlwaysChannels || (c >= kSmallMChannels && m <= kSmallM))) return false;
  if (input.strides[1] != 1 || !dense_channels_last(out)) return false;
  if (post.accumulate != nullptr && post.accumulate->data() != out.data()) return false;

  // The weight as W [O, kh*kw*C] row-major, in the taps' order below.
  const std::vector<int64_t> key = {-3,
                                    weight.storage_offset,
                                    o,
                                    c,
                                    kh,
                                    kw,
                                    weight.strides[0],
                                    weight.strides[1],
                                    weight.strides[2],
                                    weight.strides[3]};
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

  // The GEMM's left operand, a chunk of rows at a time: each output pixel's
  // receptive field, tap by tap, each tap C contiguous channels (zeros
  // outside). Chunks of at most kChunkFloats keep this thread's buffer small
  // at any batch; each still reuses every packed weight panel hundreds of
  // times. The OpenMP team writes the buffer through `lhs_data` (a
  // thread_local named inside the region would be each worker's own).
  const int64_t chunk = std::min(m, std::max<int64_t>(kMinChunkRows, kChunkFloats / k));
  thread_local std::vector<float> cols;
  cols.resize(static_cast<size_t>(chunk * k));
  float* const lhs_data = cols.data();
  const float* x = static_cast<const float*>(input.data());
  const int64_t sy = p.stride[0], sx = p.stride[1], py = p.padding[0], px = p.padding[1];
  const int64_t dy = p.dilation[0], dx = p.dilation[1];
  for (int64_t r0 = 0; r0 < m; r0 += chunk) {
    const int64_t rows_here = std::min(chunk, m - r0);
    for_range(rows_here * k >= (1 << 18), rows_here, [&](int64_t rr) {
      const int64_t r = r0 + rr;
      const int64_t b = r / (oh * ow), y = (r / ow) % oh, xx = r % ow;
      float* row = lhs_data + rr * k;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t iy = y * sy - py + i * dy;
        for (int64_t j = 0; j < kw; ++j) {
          float* dst = row + (i * kw + j) * c;
          const int64_t ix = xx * sx - px + j * dx;
          if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
            std::memset(dst, 0, static_cast<size_t>(c) * sizeof(float));
          } else {
            std::memcpy(dst, x + b * input.strides[0] + iy * input.strides[2] + ix * input.strides[3],
                        static_cast<size_t>(c) * sizeof(float));
          }
        }
      }
    });
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
    float* y = static_cast<float*>(out.data());
    const float* bp = static_cast<const float*>(bias->data());
    std::vector<float> bv(static_cast<size_t>(o));
    for (int64_t oc = 0; oc < o; ++oc) bv[oc] = bp[oc * bias->strides[0]];
    for_range(m * o >= (1 << 16), m, [&](int64_t r) {
      float* yr = y + r * o;
      for (int64_t oc = 0; oc < o; ++oc) yr[oc] += bv[oc];
    });
  }
  apply_unary(out, post.unary);
  return true;
}

}  // namespace aotrun::shim::kernels
