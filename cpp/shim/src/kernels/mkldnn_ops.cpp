// The fused ops of frozen exports (torch._inductor.config.freezing, the CPU
// inference recipe), under their torch names: aoti_torch_cpu__linear_pointwise
// (+ _binary), aoti_torch_cpu_mkldnn__convolution_pointwise (+ _binary and the
// in-place _binary_) and aoti_torch_cpu_mkldnn__convolution_transpose_pointwise.
// Each runs the shim's own kernel (the GEMM, the oneDNN convolution, the
// transposed convolution) and then its elementwise post-ops
// (pointwise_fusion.cpp), in float32; a convolution's activation and
// in-place residual sum run inside its oneDNN primitive where oneDNN has
// them (kernels::ConvEpilogue). Weights come either as frozen
// constants in the mkldnn layout, which the shim unpacked once at load
// (mkldnn_blob.hpp), or as plain strided tensors; output layouts are the
// ones libtorch returns (a convolution's output is channels-last when its
// input or its plain weight is, and always with an mkldnn weight), because Inductor's generated kernels
// index them with those strides.
#include <memory>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "compute/packed_gemm.hpp"
#include "kernels.hpp"

namespace {

using namespace aotrun::shim;
using kernels::fail_arg;

const Tensor& f32_arg(AtenTensorHandle h, const char* op, const char* what) {
  const Tensor& t = as_tensor(h, what);
  kernels::expect_cpu_defined(t, op, what);
  if (t.dtype != kFloat32) {
    fail_arg(op, what, std::string("has dtype ") + dtype_name(t.dtype) + ", which is not supported (only float32)");
  }
  return t;
}

// An optional tensor (Tensor?): null, a pointer to null, or undefined: none.
const Tensor* optional_f32(AtenTensorHandle* h, const char* op, const char* what) {
  if (h == nullptr || *h == nullptr) return nullptr;
  const Tensor& t = as_tensor(*h, what);
  if (!t.defined()) return nullptr;
  return &f32_arg(*h, op, what);
}

// out [..., N] = x [..., K] @ wᵀ + b (+ addend, when not null: a residual
// connection's sum, of the result's shape as apply_binary requires), w
// [N, K]: one GEMM (contiguous result). A contiguous addend is added in the
// packed GEMM's store; a strided one, or any on the unpacked path, in a
// pass after it.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor* b, const char* op, const Tensor* addend = nullptr) {
  if (x.dim() < 1) fail_arg(op, "X", "must have at least 1 dim");
  kernels::expect_dim(w, 2, op, "W");
  const int64_t k = x.sizes.back(), n = w.sizes[0];
  if (w.sizes[1] != k) {
    fail_arg(op, "W",
             "has " + std::to_string(w.sizes[1]) + " input features, X has " + std::to_string(k) + " (W is [out, in])");
  }
  if (b != nullptr && (b->dim() != 1 || b->sizes[0] != n)) {
    fail_arg(op, "B", "must be 1-d with one element per output feature (" + std::to_string(n) + ")");
  }
  std::vector<int64_t> out_sizes(x.sizes.begin(), x.sizes.end() - 1);
  int64_t m = 1;
  for (int64_t s : out_sizes) m *= s;
  out_sizes.push_back(n);
  Tensor out = empty_contiguous(out_sizes, kFloat32);
  // X as a [M, K] view: itself when 2-d, its memory when contiguous, else a copy.
  Tensor x2 = x;
  if (x.dim() != 2) {
    if (!x.is_contiguous()) {
      x2 = empty_contiguous(x.sizes, kFloat32);
      copy_elements(x2, x);
    }
    x2.sizes = {m, k};
    x2.strides = {k, 1};
  }
  Tensor out2 = out;
  out2.sizes = {m, n};
  out2.strides = {n, 1};
  Tensor wt = w;  // [K, N] view of W
  wt.sizes = {k, n};
  wt.strides = {w.strides[1], w.strides[0]};
  // The addend as [M, N] rows, when it is out's shape and contiguous.
  Tensor add2;
  if (addend != nullptr && addend->sizes == out.sizes && addend->is_contiguous()) {
    add2 = *addend;
    add2.sizes = {m, n};
    add2.strides = {n, 1};
  }
  // A frozen weight is packed once (packed_gemm.hpp), the bias added in
  // the same pass; others per call, on top of the bias.
  const Tensor* fused = add2.defined() ? &add2 : nullptr;  // added by packed_linear when it runs
  if (!kernels::packed_linear(out2, x2, w, 0.0f, op, b, fused)) {
    fused = nullptr;
    if (b != nullptr) copy_elements(out2, *b);
    kernels::gemm(out2, x2, wt, 1.0, b != nullptr ? 1.0 : 0.0, op);
  }
  if (addend != nullptr && fused == nullptr) kernels::apply_binary(out, out, *addend, kernels::BinaryOp::kAdd, {}, op);
  return out;
}

std::vector<int64_t> expand(const int64_t* p, int64_t len, int64_t nd, const char* op, const char* what) {
  if (len == 1 && p != nullptr) return std::vector<int64_t>(nd, p[0]);
  if (len != nd || (nd > 0 && p == nullptr)) {
    fail_arg(op, what, "has " + std::to_string(len) + " values, expected " + std::to_string(nd));
  }
  return std::vector<int64_t>(p, p + nd);
}

kernels::ConvParams conv_params(const Tensor& x, const char* op, const int64_t* padding, int64_t padding_len,
                                const int64_t* stride, int64_t stride_len, const int64_t* dilation,
                                int64_t dilation_len, int64_t groups) {
  const int64_t nd = x.dim() - 2;
  if (nd < 1) fail_arg(op, "X", "must have at least 3 dims (N, C, spatial...)");
  kernels::ConvParams p;
  p.padding = expand(padding, padding_len, nd, op, "padding");
  p.stride = expand(stride, stride_len, nd, op, "stride");
  p.dilation = expand(dilation, dilation_len, nd, op, "dilation");
  p.groups = groups;
  return p;
}

// The transposed convolution's weight in PyTorch's order [I, O/g, k...]. A
// frozen (mkldnn) constant holds oneDNN's order [O, I/g, k...] (groups
// outermost): its permuted copy is made once and kept with it.
struct KeptTensor {
  Tensor t;
};
Tensor transpose_weight(const Tensor& w, int64_t groups, const char* op) {
  if (w.layout != kMkldnn) return w;
  if (w.dim() < 3) fail_arg(op, "W", "must have at least 3 dims");
  if (groups < 1 || w.sizes[0] % groups != 0) fail_arg(op, "groups", "must divide W's output channels");
  const auto kept = std::static_pointer_cast<KeptTensor>(w.storage->derived({-1, groups}, [&] {
    const int64_t o = w.sizes[0], og = o / groups, ig = w.sizes[1];
    int64_t kvol = 1;
    for (int64_t d = 2; d < w.dim(); ++d) kvol *= w.sizes[d];
    std::vector<int64_t> sizes = w.sizes;
    sizes[0] = ig * groups;
    sizes[1] = og;
    auto k = std::make_shared<KeptTensor>();
    k->t = empty_contiguous(sizes, kFloat32);
    const std::shared_ptr<const void> held = w.read();
    const float* src = static_cast<const float*>(held.get());
    float* dst = static_cast<float*>(k->t.data());
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t oc = 0; oc < og; ++oc)
        for (int64_t ic = 0; ic < ig; ++ic) {
          const float* s = src + ((g * og + oc) * ig + ic) * kvol;
          float* d = dst + ((g * ig + ic) * og + oc) * kvol;
          for (int64_t i = 0; i < kvol; ++i) d[i] = s[i];
        }
    return std::shared_ptr<void>(k);
  }));
  return kept->t;
}

// The unary after a binary post-op: none (null) or relu, as libtorch accepts.
kernels::Unary unary_after_binary(const char** unary_attr, const char* op) {
  kernels::Unary u;
  if (unary_attr == nullptr || *unary_attr == nullptr) return u;
  if (std::string(*unary_attr) != "relu") {
    fail_arg(op, "unary_attr",
             "'" + std::string(*unary_attr) + "' is not supported after a binary op (only relu or none)");
  }
  u.kind = kernels::Unary::kRelu;
  return u;
}

void check_alpha(const double* alpha, const char* op) {
  if (alpha != nullptr && *alpha != 1.0) {
    fail_arg(op, "alpha", std::to_string(*alpha) + " is not supported (only 1 or none, as libtorch)");
  }
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__linear_pointwise(AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B,
                                                const char* attr, const double** scalars, int64_t scalars_len_,
                                                const char** algorithm, AtenTensorHandle* ret0) {
  const char* op = __func__;
  return guard(op, [&] {
    const kernels::Unary u =
        kernels::parse_unary(op, "attr", attr, scalars, scalars_len_, algorithm != nullptr ? *algorithm : nullptr);
    Tensor out = linear(f32_arg(X, op, "X"), f32_arg(W, op, "W"), optional_f32(B, op, "B"), op);
    kernels::apply_unary(out, u);
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

AOTITorchError aoti_torch_cpu__linear_pointwise_binary(AtenTensorHandle X, AtenTensorHandle other, AtenTensorHandle W,
                                                       AtenTensorHandle* B, const char* attr, AtenTensorHandle* ret0) {
  const char* op = __func__;
  return guard(op, [&] {
    const kernels::BinaryOp bop = kernels::parse_binary(op, "attr", attr);
    const Tensor& o = f32_arg(other, op, "other");
    const bool add = bop == kernels::BinaryOp::kAdd;  // the residual sum: with the GEMM (linear above)
    Tensor out = linear(f32_arg(X, op, "X"), f32_arg(W, op, "W"), optional_f32(B, op, "B"), op, add ? &o : nullptr);
    if (!add) kernels::apply_binary(out, out, o, bop, kernels::Unary{}, op);
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise(
    AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_, int64_t groups,
    const char* attr, const double** scalars, int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0) {
  const char* op = __func__;
  return guard(op, [&] {
    const kernels::Unary u =
        kernels::parse_unary(op, "attr", attr, scalars, scalars_len_, algorithm != nullptr ? *algorithm : nullptr);
    const Tensor& x = f32_arg(X, op, "X");
    const kernels::ConvParams p =
        conv_params(x, op, padding, padding_len_, stride, stride_len_, dilation, dilation_len_, groups);
    const Tensor& w = f32_arg(W, op, "W");
    kernels::ConvEpilogue epi;
    epi.unary = u;
    Tensor out = kernels::convolution(x, w, optional_f32(B, op, "B"), p, op, w.layout == kMkldnn, epi);
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary(
    AtenTensorHandle X, AtenTensorHandle other, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
    int64_t padding_len_, const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_,
    int64_t groups, const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) {
  const char* op = __func__;
  return guard(op, [&] {
    (void)unary_scalars, (void)unary_scalars_len_, (void)unary_algorithm;  // relu takes none
    const kernels::BinaryOp bop = kernels::parse_binary(op, "binary_attr", binary_attr);
    check_alpha(alpha, op);
    const kernels::Unary u = unary_after_binary(unary_attr, op);
    const Tensor& x = f32_arg(X, op, "X");
    const Tensor& o = f32_arg(other, op, "other");
    const kernels::ConvParams p =
        conv_params(x, op, padding, padding_len_, stride, stride_len_, dilation, dilation_len_, groups);
    const Tensor& w = f32_arg(W, op, "W");
    Tensor out = kernels::convolution(x, w, optional_f32(B, op, "B"), p, op, w.layout == kMkldnn);
    kernels::apply_binary(out, out, o, bop, u, op);
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

// In place: other = unary(conv(X) + other); ret0 is another handle to other.
AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary_(
    AtenTensorHandle other, AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
    int64_t padding_len_, const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_,
    int64_t groups, const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) {
  const char* op = __func__;
  return guard(op, [&] {
    (void)unary_scalars, (void)unary_scalars_len_, (void)unary_algorithm;
    const kernels::BinaryOp bop = kernels::parse_binary(op, "binary_attr", binary_attr);
    if (bop != kernels::BinaryOp::kAdd) {
      fail_arg(op, "binary_attr",
               "'" + std::string(binary_attr) + "' is not supported in place (only add, as libtorch)");
    }
    check_alpha(alpha, op);
    const kernels::Unary u = unary_after_binary(unary_attr, op);
    const Tensor& x = f32_arg(X, op, "X");
    const Tensor& o = f32_arg(other, op, "other");
    const kernels::ConvParams p =
        conv_params(x, op, padding, padding_len_, stride, stride_len_, dilation, dilation_len_, groups);
    const Tensor& w = f32_arg(W, op, "W");
    kernels::ConvEpilogue epi;
    epi.unary = u;
    epi.accumulate = &o;
    *out_arg(ret0, "ret0") =
        new_handle(kernels::convolution(x, w, optional_f32(B, op, "B"), p, op, w.layout == kMkldnn, epi));
  });
}

AOTITorchError aoti_torch_cpu_mkldnn__convolution_transpose_pointwise(
    AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* output_padding, int64_t output_padding_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* dilation, int64_t dilation_len_, int64_t groups, const char* attr, const double** scalars,
    int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0) {
  const char* op = __func__;
  return guard(op, [&] {
    const kernels::Unary u =
        kernels::parse_unary(op, "attr", attr, scalars, scalars_len_, algorithm != nullptr ? *algorithm : nullptr);
    const Tensor& x = f32_arg(X, op, "X");
    const kernels::ConvParams p =
        conv_params(x, op, padding, padding_len_, stride, stride_len_, dilation, dilation_len_, groups);
    const Tensor& packed = f32_arg(W, op, "W");
    const Tensor w = transpose_weight(packed, groups, op);
    Tensor out = kernels::convolution_transpose(
        x, w, optional_f32(B, op, "B"), p,
        expand(output_padding, output_padding_len_, x.dim() - 2, op, "output_padding"), op, packed.layout == kMkldnn);
    kernels::apply_unary(out, u);
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

}  // extern "C"
