// Transposed convolution for aoti_torch_cpu_convolution (transposed=1): the
// adjoint of the forward convolution, 1-3 spatial dims. Weight
// [C_in, C_out / groups, k...]; output size per spatial dim
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.
// Per batch and group one GEMM (blas_gemm) forms the columns
// Wᵀ [C_out/g * kvol, C_in/g] @ X [C_in/g, in_vol]; col2im then adds each
// column into the output positions it reaches. float32 and float64 compute in
// their own type, bfloat16 and float16 in float32 with one rounding at the
// end (bias included), as libtorch's oneDNN path does.
// Output layout as libtorch's CPU path returns it: a 2-d output is
// channels-last when the input or the weight is; a 3-d output is
// channels_last_3d when the input or the weight is and libtorch takes its
// oneDNN path (below: for bfloat16 and float16 that depends on the host's
// ISA); others are contiguous.
#include <string>
#include <vector>

#include "compute/onednn.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// Spatial dims padded to three with leading size-1 dims.
struct Geometry {
  int64_t n, c, o, groups, cg, og;
  int64_t in[3], k[3], out[3], stride[3], pad[3], dil[3];
  int64_t in_vol() const { return in[0] * in[1] * in[2]; }
  int64_t k_vol() const { return k[0] * k[1] * k[2]; }
  int64_t out_vol() const { return out[0] * out[1] * out[2]; }
};

// Adds cols [og * kvol, in_vol] into y [og, out_vol] (one group of a batch).
template <typename T>
void col2im(const T* cols, const Geometry& g, T* y) {
  const int64_t ivol = g.in_vol(), ovol = g.out_vol();
  const T* row = cols;
  for (int64_t ch = 0; ch < g.og; ++ch) {
    T* yc = y + ch * ovol;
    for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
      for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
        for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
          int64_t idx = 0;
          for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
            const int64_t o0 = i0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
            const bool v0 = o0 >= 0 && o0 < g.out[0];
            for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
              const int64_t o1 = i1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
              if (!v0 || o1 < 0 || o1 >= g.out[1]) {
                idx += g.in[2];
                continue;
              }
              T* yr = yc + (o0 * g.out[1] + o1) * g.out[2];
              for (int64_t i2 = 0; i2 < g.in[2]; ++i2, ++idx) {
                const int64_t o2 = i2 * g.stride[2] - g.pad[2] + k2 * g.dil[2];
                if (o2 >= 0 && o2 < g.out[2]) yr[o2] += row[idx];
              }
            }
          }
          row += ivol;
        }
  }
}

template <typename T>
void run(const Tensor& x, const Tensor& w, const Tensor* bias, const Geometry& g, const Tensor& y) {
  // x [n, c, in_vol], w [c, og * kvol], y [n, o, out_vol]: contiguous in T.
  const T* xp = static_cast<const T*>(x.data());
  const T* wp = static_cast<const T*>(w.data());
  T* yp = static_cast<T*>(y.data());
  const int64_t rows = g.og * g.k_vol(), ivol = g.in_vol(), ovol = g.out_vol();
  for (int64_t i = 0; i < g.n * g.o * ovol; ++i) yp[i] = T(0);
  std::vector<T> cols(static_cast<size_t>(rows * ivol));
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xg = xp + (b * g.c + grp * g.cg) * ivol;
      const T* wg = wp + grp * g.cg * rows;
      if (g.cg > 0 && ivol > 0 && rows > 0) {
        blas_gemm(true, false, rows, ivol, g.cg, T(1), wg, rows, xg, ivol, T(0), cols.data(), ivol);
      } else {
        for (T& v : cols) v = T(0);
      }
      col2im(cols.data(), g, yp + (b * g.o + grp * g.og) * ovol);
    }
  }
  if (bias != nullptr) {
    Tensor bt = empty_contiguous({g.o}, x.dtype);
    copy_elements(bt, *bias);
    const T* bp = static_cast<const T*>(bt.data());
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t oc = 0; oc < g.o; ++oc) {
        T* row = yp + (b * g.o + oc) * ovol;
        for (int64_t i = 0; i < ovol; ++i) row[i] += bp[oc];
      }
  }
}

}  // namespace

Tensor convolution_transpose(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                             const std::vector<int64_t>& output_padding, const char* op, bool channels_last) {
  expect_cpu_defined(input, op, "input");
  expect_cpu_defined(weight, op, "weight");
  const int64_t nd = input.dim() - 2;
  if (nd < 1 || nd > 3)
    fail_arg(op, "input", "must be 3-d, 4-d or 5-d (N, C, spatial...), got " + std::to_string(input.dim()) + "-d");
  if (weight.dim() != input.dim()) fail_arg(op, "weight", "must have input's number of dims");
  if (weight.dtype != input.dtype) fail_arg(op, "weight", "must have input's dtype");
  const int32_t dt = input.dtype;
  if (dt != kFloat32 && dt != kBFloat16 && dt != kFloat16 && dt != kFloat64) {
    fail_arg(op, "input", std::string("has dtype ") + dtype_name(dt) + ", which is not supported");
  }
  Geometry g{};
  g.n = input.sizes[0];
  g.c = input.sizes[1];
  g.groups = p.groups;
  if (g.groups < 1) fail_arg(op, "groups", "must be positive, got " + std::to_string(g.groups));
  if (weight.sizes[0] != g.c) {
    fail_arg(op, "weight",
             "has " + std::to_string(weight.sizes[0]) + " input channels, the input has " + std::to_string(g.c));
  }
  if (g.c % g.groups != 0) fail_arg(op, "groups", "must divide the input channels");
  g.cg = g.c / g.groups;
  g.og = weight.sizes[1];
  g.o = g.og * g.groups;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = g.k[i] = g.out[i] = g.stride[i] = g.dil[i] = 1;
    g.pad[i] = 0;
  }
  std::vector<int64_t> out_sizes = {g.n, g.o};
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t s = 3 - nd + d;
    g.in[s] = input.sizes[2 + d];
    g.k[s] = weight.sizes[2 + d];
    g.stride[s] = p.stride[d];
    g.pad[s] = p.padding[d];
    g.dil[s] = p.dilation[d];
    const int64_t opad = output_padding[d];
    if (g.stride[s] < 1) fail_arg(op, "stride", "must be positive");
    if (g.dil[s] < 1) fail_arg(op, "dilation", "must be positive");
    if (g.pad[s] < 0) fail_arg(op, "padding", "must be non-negative");
    if (opad < 0) fail_arg(op, "output_padding", "must be non-negative");
    if (opad >= g.stride[s] && opad >= g.dil[s]) {
      fail_arg(op, "output_padding",
               "is " + std::to_string(opad) + " at spatial dim " + std::to_string(d) +
                   ": it must be smaller than either stride or dilation");
    }
    const int64_t o = (g.in[s] - 1) * g.stride[s] - 2 * g.pad[s] + g.dil[s] * (g.k[s] - 1) + opad + 1;
    if (o < 1) {
      fail_arg(op, "input", "gives an output size of " + std::to_string(o) + " at spatial dim " + std::to_string(d));
    }
    g.out[s] = o;
    out_sizes.push_back(o);
  }
  if (bias != nullptr) {
    expect_dim(*bias, 1, op, "bias");
    if (bias->sizes[0] != g.o) fail_arg(op, "bias", "must have one element per output channel");
  }
  std::vector<int64_t> out_strides = contiguous_strides(out_sizes);
  // libtorch's 3-d transposed convolution keeps channels_last_3d only on its
  // oneDNN path. It never takes it when an output padding is not below its
  // stride. Otherwise it takes it for bfloat16 and float16 where the host
  // computes them in oneDNN, and for float32 except on some small problems
  // (its "native is faster" test, over the first four input sizes; its other
  // test is taken as passed, as it is with more than one thread).
  bool big_output_padding = false;
  for (int64_t d = 0; d < nd; ++d) big_output_padding |= output_padding[d] >= p.stride[d];
  const bool onednn_3d = nd == 3 && !big_output_padding &&
                         (dt == kBFloat16  ? onednn::host_takes_bf16()
                          : dt == kFloat16 ? onednn::host_takes_f16()
                          : dt == kFloat32 ? (g.groups > 1 || (weight.sizes[4] > 3 && weight.sizes[3] > 3) || g.n > 1 ||
                                              g.n * g.c * input.sizes[2] * input.sizes[3] > 20480)
                                           : false);
  const bool cl = (channels_last && nd >= 2) ||
                  (nd == 2 ? (is_channels_last(input) || is_channels_last(weight))
                           : onednn_3d && (is_channels_last_3d(input) || is_channels_last_3d(weight)));
  if (cl) {
    out_strides = channels_last_strides(out_sizes);
  }
  Tensor out = empty_tensor(out_sizes, out_strides, dt);
  const int32_t ct = dt == kFloat64 ? kFloat64 : kFloat32;
  Tensor x = empty_contiguous(input.sizes, ct);
  copy_elements(x, input);
  Tensor w = empty_contiguous(weight.sizes, ct);
  copy_elements(w, weight);
  Tensor y = empty_contiguous({g.n, g.o, g.out_vol()}, ct);
  if (g.n > 0 && g.o > 0) {
    if (ct == kFloat64) {
      run<double>(x, w, bias, g, y);
    } else {
      run<float>(x, w, bias, g, y);
    }
  }
  y.sizes = out_sizes;
  y.strides = contiguous_strides(out_sizes);
  copy_elements(out, y);
  return out;
}

}  // namespace aotrun::shim::kernels
