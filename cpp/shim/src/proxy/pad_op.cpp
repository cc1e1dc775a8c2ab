// aten::constant_pad_nd (since aotrun-shim 1.4), which has no C shim
// function in torch 2.15: AOTInductor calls it through the proxy executor
// for a spectrum zero-padded back to its length (torch.fft.irfft(X[..., :k],
// n) pads the k bins to n / 2 + 1), and for complex tensors generally, for
// which Inductor generates no code. The pad list arrives in flatten_int_args
// (pairs from the last dim backwards: before, after), then the value when it
// is an int; a float value is read from the node (the wrapper passes no
// floats). As libtorch: negative pads crop, the result is contiguous and
// filled with the value, self copied into its place. Every real dtype, bool
// and complex64/complex128 (a real value v becomes (v, 0)).
#include <algorithm>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"
#include "compute/typed.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

// Fills t (contiguous) with v converted to t's dtype.
void fill(Tensor& t, double v, bool value_is_int, int64_t iv, const std::string& op) {
  const int64_t n = t.numel();
  if (n == 0) return;
  if (t.dtype == kComplex64 || t.dtype == kComplex128) {
    for (int64_t i = 0; i < n; ++i) {
      if (t.dtype == kComplex64) {
        kernels::store(t.data(), i, std::complex<float>(static_cast<float>(v), 0.f));
      } else {
        kernels::store(t.data(), i, std::complex<double>(v, 0.0));
      }
    }
    return;
  }
  kernels::dispatch_real(t.dtype, true, op.c_str(), "self", [&](auto s) {
    using S = decltype(s);
    using K = typename kernels::Elem<S>::Key;
    K k;
    if constexpr (std::is_same_v<K, bool>) {
      k = value_is_int ? iv != 0 : v != 0;
    } else if constexpr (std::is_integral_v<K>) {
      k = value_is_int ? static_cast<K>(iv) : static_cast<K>(v);
    } else {
      k = static_cast<K>(v);
    }
    const S e = kernels::Elem<S>::from(k);
    for (int64_t i = 0; i < n; ++i) kernels::store(t.data(), i, e);
  });
}

}  // namespace

void constant_pad_nd(const ExternCall& c) {
  const std::string& op = c.node.target;
  if (c.inputs.size() != 1) throw ShimError(op + ": expected one tensor input (self)");
  if (c.outputs.size() != 1) throw ShimError(op + ": expected one output");
  const Tensor& self = *c.inputs[0];
  kernels::expect_cpu_defined(self, op.c_str(), "self");
  std::vector<int64_t> pad;
  bool value_is_int = false;
  int64_t int_value = 0;
  double value = 0;
  size_t k = 0;
  for (const ExternArg& a : c.node.inputs) {
    const size_t n = a.kind == ExternArg::kInts ? a.ints.size() : a.kind == ExternArg::kInt ? 1 : 0;
    if (k + n > c.ints.size()) throw ShimError(op + ": too few int arguments were passed");
    if (a.name == "pad" && a.kind == ExternArg::kInts) pad.assign(c.ints.begin() + k, c.ints.begin() + k + n);
    if (a.name == "value" && a.kind == ExternArg::kInt) {
      value_is_int = true;
      int_value = c.ints[k];
      value = static_cast<double>(int_value);
    }
    if (a.name == "value" && a.kind == ExternArg::kFloat) value = a.f;
    k += n;
  }
  const int64_t nd = self.dim();
  if (pad.size() % 2 != 0) {
    kernels::fail_arg(op.c_str(), "pad",
                      "Length of pad must be even but instead it equals " + std::to_string(pad.size()));
  }
  if (static_cast<int64_t>(pad.size()) / 2 > nd) {
    kernels::fail_arg(op.c_str(), "pad",
                      "Length of pad should be no more than twice the number of dimensions of the input. Pad length "
                      "is " +
                          std::to_string(pad.size()) + " while the input has " + std::to_string(nd) + " dimensions.");
  }
  // Per dim: the elements cropped before it (negative pads) and where the
  // kept ones start in the result.
  std::vector<int64_t> out_sizes = self.sizes, crop(nd, 0), at(nd, 0), kept = self.sizes;
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    const int64_t d = nd - 1 - static_cast<int64_t>(p);
    const int64_t before = pad[2 * p], after = pad[2 * p + 1];
    out_sizes[d] = self.sizes[d] + before + after;
    if (out_sizes[d] < 0) {
      kernels::fail_arg(op.c_str(), "pad",
                        "The input size " + std::to_string(self.sizes[d]) + ", plus negative padding " +
                            std::to_string(before) + " and " + std::to_string(after) +
                            " resulted in a negative output size, which is invalid. Check dimension " +
                            std::to_string(d) + " of your input.");
    }
    crop[d] = before < 0 ? -before : 0;
    at[d] = before > 0 ? before : 0;
    kept[d] = std::max<int64_t>(0, self.sizes[d] - crop[d] - (after < 0 ? -after : 0));
    kept[d] = std::min(kept[d], out_sizes[d]);
  }
  Tensor out = empty_contiguous(out_sizes, self.dtype);
  fill(out, value, value_is_int, int_value, op);
  // The kept part of self, as views, copied into its place.
  Tensor src = self, dst = out;
  for (int64_t d = 0; d < nd; ++d) {
    src.storage_offset += crop[d] * self.strides[d];
    dst.storage_offset += at[d] * out.strides[d];
  }
  src.sizes = kept;
  dst.sizes = kept;
  if (src.numel() > 0) copy_host_elements(dst, src);
  set_output(c, 0, out);
}

}  // namespace aotrun::shim::proxy
