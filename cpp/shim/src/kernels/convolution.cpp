// aoti_torch_cpu_convolution: forward convolution of 1-3 spatial dims. Float32
// runs on oneDNN (convolution_onednn.cpp); other dtypes, and geometries
// oneDNN has no implementation for, by im2col + GEMM (blas_gemm) in float32
// (float64 for float64 tensors).
// Groups (depthwise included), stride, padding, dilation, optional bias; any
// input/weight strides (channels-last included). A 2-d convolution's output
// is channels-last when the input or the weight is, as PyTorch's CPU
// convolution decides; other outputs are contiguous. A non-zero
// output_padding is refused. Transposed convolution (transposed=1) runs in
// convolution_transpose.cpp.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// Geometry with the spatial dims padded to three (leading size-1 dims).
struct Geometry {
  int64_t n, c, o, groups, cg, og;
  int64_t in[3], k[3], out[3], stride[3], pad[3], dil[3];
  int64_t in_vol() const { return in[0] * in[1] * in[2]; }
  int64_t k_vol() const { return k[0] * k[1] * k[2]; }
  int64_t out_vol() const { return out[0] * out[1] * out[2]; }
};

template <typename T>
void im2col(const T* x, const Geometry& g, T* cols) {
  // x: [cg, in0, in1, in2]; cols: [cg * kvol, ovol]
  const int64_t ovol = g.out_vol();
  T* row = cols;
  for (int64_t ch = 0; ch < g.cg; ++ch) {
    const T* xc = x + ch * g.in_vol();
    for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
      for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
        for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
          int64_t idx = 0;
          for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
            const int64_t i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
            const bool v0 = i0 >= 0 && i0 < g.in[0];
            for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
              const int64_t i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
              const bool v1 = v0 && i1 >= 0 && i1 < g.in[1];
              const T* xr = xc + (i0 * g.in[1] + i1) * g.in[2];
              for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++idx) {
                const int64_t i2 = o2 * g.stride[2] - g.pad[2] + k2 * g.dil[2];
                row[idx] = (v1 && i2 >= 0 && i2 < g.in[2]) ? xr[i2] : T(0);
              }
            }
          }
          row += ovol;
        }
  }
}

template <typename T>
void run(const Tensor& x, const Tensor& w, const Tensor* bias, const Geometry& g, const Tensor& y) {
  // x, w: contiguous in T; y: contiguous [n, o, ovol] in T.
  const T* xp = static_cast<const T*>(x.data());
  const T* wp = static_cast<const T*>(w.data());
  T* yp = static_cast<T*>(y.data());
  const int64_t kk = g.cg * g.k_vol(), ovol = g.out_vol();
  const bool pointwise = g.k_vol() == 1 && g.pad[0] == 0 && g.pad[1] == 0 && g.pad[2] == 0 && g.stride[0] == 1 &&
                         g.stride[1] == 1 && g.stride[2] == 1;
  std::vector<T> cols(pointwise ? 0 : static_cast<size_t>(kk * ovol));
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xg = xp + (b * g.c + grp * g.cg) * g.in_vol();
      const T* src = xg;
      if (!pointwise) {
        im2col(xg, g, cols.data());
        src = cols.data();
      }
      blas_gemm(false, false, g.og, ovol, kk, T(1), wp + grp * g.og * kk, kk, src, ovol, T(0),
                yp + (b * g.o + grp * g.og) * ovol, ovol);
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

// The output's layout (allocated only when needed: a fused convolution may
// write into a tensor it was given) of a checked convolution, and its
// geometry.
struct OutputLayout {
  std::vector<int64_t> sizes, strides;
  int32_t dtype;
  Tensor allocate() const { return empty_tensor(sizes, strides, dtype); }
};
OutputLayout checked_output(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                            const char* op, bool channels_last, Geometry& g) {
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
  g = Geometry{};
  g.n = input.sizes[0];
  g.c = input.sizes[1];
  g.o = weight.sizes[0];
  g.groups = p.groups;
  if (g.groups < 1) fail_arg(op, "groups", "must be positive, got " + std::to_string(g.groups));
  if (g.c % g.groups != 0 || g.o % g.groups != 0) fail_arg(op, "groups", "must divide the input and output channels");
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  if (weight.sizes[1] != g.cg) {
    fail_arg(op, "weight",
             "has " + std::to_string(weight.sizes[1]) + " input channels per group, expected " + std::to_string(g.cg));
  }
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
    if (g.stride[s] < 1) fail_arg(op, "stride", "must be positive");
    if (g.dil[s] < 1) fail_arg(op, "dilation", "must be positive");
    if (g.pad[s] < 0) fail_arg(op, "padding", "must be non-negative");
    const int64_t span = g.dil[s] * (g.k[s] - 1) + 1;
    const int64_t o = (g.in[s] + 2 * g.pad[s] - span) / g.stride[s] + 1;
    if (g.in[s] + 2 * g.pad[s] < span || o < 1) {
      fail_arg(op, "input", "is smaller than the (dilated) kernel at spatial dim " + std::to_string(d));
    }
    g.out[s] = o;
    out_sizes.push_back(o);
  }
  if (bias != nullptr) {
    expect_dim(*bias, 1, op, "bias");
    if (bias->sizes[0] != g.o) fail_arg(op, "bias", "must have one element per output channel");
  }
  std::vector<int64_t> out_strides = contiguous_strides(out_sizes);
  // Only 2-d convolutions produce channels-last outputs here (4-d strides
  // like NHWC; ambiguous size-1 cases contiguous, as PyTorch): for 3-d ones
  // PyTorch's float32 CPU path returns a contiguous output (checked against
  // libtorch in tests/shim/differential_test.cpp; its bfloat16 path returns
  // channels_last_3d, which the shim does not follow: docs/SHIM.md).
  if ((channels_last && nd >= 2) || is_channels_last(input) || is_channels_last(weight)) {
    out_strides = channels_last_strides(out_sizes);
  }
  return OutputLayout{out_sizes, out_strides, dt};
}

// out = conv(input): oneDNN for float32, else (or where oneDNN has no
// implementation) im2col + GEMM.
void compute(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p, const Geometry& g,
             const Tensor& out) {
  const int32_t dt = input.dtype;
  if (g.n == 0 || g.o == 0) return;
  if (dt == kFloat32 && convolution_onednn(input, weight, bias, p, out)) return;
  const int32_t ct = dt == kFloat64 ? kFloat64 : kFloat32;
  Tensor x = empty_contiguous(input.sizes, ct);
  copy_elements(x, input);
  Tensor w = empty_contiguous(weight.sizes, ct);
  copy_elements(w, weight);
  Tensor y = empty_contiguous({g.n, g.o, g.out_vol()}, ct);
  if (ct == kFloat64) {
    run<double>(x, w, bias, g, y);
  } else {
    run<float>(x, w, bias, g, y);
  }
  y.sizes = out.sizes;
  y.strides = contiguous_strides(out.sizes);
  copy_elements(out, y);
}

// [lo, hi) bytes a tensor's elements span (strides are >= 0 in the shim;
// empty for an empty tensor).
std::pair<const char*, const char*> span_of(const Tensor& t) {
  const char* lo = static_cast<const char*>(t.data());
  return {lo, lo + storage_nbytes_for(t.sizes, t.strides, 0, t.itemsize())};
}

bool overlaps(const Tensor& a, const Tensor& b) {
  // A deferred constant's plain bytes (mkldnn_blob.hpp) are an allocation of
  // its own that only its views share; asking for their address would make
  // them (a copy of a frozen weight the primitive never reads).
  if (a.storage->source() != nullptr || b.storage->source() != nullptr) return a.storage == b.storage;
  const auto x = span_of(a), y = span_of(b);
  return x.first < x.second && y.first < y.second && x.first < y.second && y.first < x.second;
}

// The result can be added into `acc` by oneDNN's sum post-op: a float32
// tensor of the output's sizes, laid out densely, that the convolution does
// not read from.
bool accumulates_in_place(const Tensor& acc, const Tensor& input, const Tensor& weight, const Tensor* bias) {
  return acc.dtype == kFloat32 && acc.is_non_overlapping_and_dense() && !acc.storage->read_only() &&
         !overlaps(acc, input) && !overlaps(acc, weight) && (bias == nullptr || !overlaps(acc, *bias));
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p, const char* op,
                   bool channels_last) {
  Geometry g;
  Tensor out = checked_output(input, weight, bias, p, op, channels_last, g).allocate();
  compute(input, weight, bias, p, g, out);
  return out;
}

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p, const char* op,
                   bool channels_last, const ConvEpilogue& epi) {
  Geometry g;
  const OutputLayout layout = checked_output(input, weight, bias, p, op, channels_last, g);
  const Tensor* acc = epi.accumulate;
  if (acc != nullptr && acc->sizes != layout.sizes) fail_arg(op, "other", "must have the output's sizes");
  const bool fusable = input.dtype == kFloat32 && g.n > 0 && g.o > 0;
  // A weight-bound frozen convolution as a packed GEMM, else oneDNN's
  // primitive with the epilogue as post-ops.
  if (fusable && acc != nullptr && accumulates_in_place(*acc, input, weight, bias) &&
      (convolution_packed_gemm(input, weight, bias, p, *acc, epi, op) ||
       convolution_onednn(input, weight, bias, p, *acc, &epi))) {
    return *acc;
  }
  Tensor out = layout.allocate();
  if (fusable && acc == nullptr &&
      (convolution_packed_gemm(input, weight, bias, p, out, epi, op) ||
       convolution_onednn(input, weight, bias, p, out, &epi))) {
    return out;
  }
  compute(input, weight, bias, p, g, out);
  if (acc == nullptr) {
    apply_unary(out, epi.unary);
    return out;
  }
  apply_binary(*acc, out, *acc, BinaryOp::kAdd, epi.unary, op);
  return *acc;
}

}  // namespace aotrun::shim::kernels

namespace {

using namespace aotrun::shim;

std::vector<int64_t> expand(const int64_t* p, int64_t len, int64_t nd, const char* op, const char* what) {
  if (len == 1 && p != nullptr) return std::vector<int64_t>(nd, p[0]);
  if (len != nd || (nd > 0 && p == nullptr)) {
    kernels::fail_arg(op, what, "has " + std::to_string(len) + " values, expected " + std::to_string(nd));
  }
  return std::vector<int64_t>(p, p + nd);
}

AOTITorchError conv_entry(const char* op, AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                          const int64_t* stride, int64_t stride_len, const int64_t* padding, int64_t padding_len,
                          const int64_t* dilation, int64_t dilation_len, int32_t transposed,
                          const int64_t* output_padding, int64_t output_padding_len, int64_t groups,
                          AtenTensorHandle* ret0) {
  return guard(op, [&] {
    const Tensor& in = as_tensor(input, "input");
    const Tensor& w = as_tensor(weight, "weight");
    const int64_t nd = in.dim() - 2;
    if (nd < 1) kernels::fail_arg(op, "input", "must have at least 3 dims");
    if (transposed == 0) {
      for (int64_t i = 0; i < output_padding_len; ++i) {
        if (output_padding != nullptr && output_padding[i] != 0) {
          kernels::fail_arg(op, "output_padding", "is non-zero, which is not supported");
        }
      }
    }
    kernels::ConvParams p;
    p.stride = expand(stride, stride_len, nd, op, "stride");
    p.padding = expand(padding, padding_len, nd, op, "padding");
    p.dilation = expand(dilation, dilation_len, nd, op, "dilation");
    p.groups = groups;
    const Tensor* b = nullptr;
    if (bias != nullptr && *bias != nullptr) {
      b = &as_tensor(*bias, "bias");
      if (!b->defined()) b = nullptr;
    }
    Tensor out = transposed != 0
                     ? kernels::convolution_transpose(
                           in, w, b, p, expand(output_padding, output_padding_len, nd, op, "output_padding"), op)
                     : kernels::convolution(in, w, b, p, op);
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_convolution(AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                                          const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                          int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
                                          int32_t transposed, const int64_t* output_padding,
                                          int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0) {
  return conv_entry(__func__, input, weight, bias, stride, stride_len_, padding, padding_len_, dilation, dilation_len_,
                    transposed, output_padding, output_padding_len_, groups, ret0);
}

}  // extern "C"
