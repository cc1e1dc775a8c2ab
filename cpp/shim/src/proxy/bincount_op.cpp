// aten::bincount (torch.bincount(x, weights, minlength), since aotrun-shim
// 1.8), which has no C shim function in torch 2.15: AOTInductor calls it
// through the proxy executor, minlength in flatten_int_args, weights a
// tensor or None, into an uninitialized output (its size is known only
// after the run: max(x) + 1, at least minlength). As libtorch's CPU kernel
// (_bincount_cpu): self 1-d of an integer dtype (uint8, int8, int16, int32,
// int64) with no negative element; an empty self gives minlength int64
// zeros whatever the weights; without weights int64 counts, with weights
// (1-d, self's length) their sums in order, float32 for float32 weights,
// float64 for float64 ones and float64 (the weights converted) for any
// other real dtype or bool. Refused as libtorch refuses: minlength < 0, a
// self that is not 1-d, negative or not of an integer dtype, weights of
// another shape. (Complex weights, which libtorch converts dropping the
// imaginary part with a warning, are refused.)
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "kernels/kernels.hpp"
#include "compute/typed.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

template <typename I>
void bincount_of(const ExternCall& c, const Tensor& self, const Tensor* weights, int64_t minlength) {
  const char* op = c.node.target.c_str();
  const int64_t n = self.sizes[0];
  const int64_t step = self.strides[0];
  std::vector<int64_t> x(static_cast<size_t>(n));
  int64_t top = -1;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<int64_t>(kernels::load<I>(self.data(), i * step));
    if (x[i] < 0) {
      kernels::fail_arg(op, "self",
                        "has a negative element (" + std::to_string(x[i]) + " at " + std::to_string(i) +
                            "): bincount only supports 1-d non-negative integral inputs");
    }
    top = std::max(top, x[i]);
  }
  const int64_t nbins = std::max(top + 1, minlength);
  if (weights == nullptr) {
    Tensor out = empty_contiguous({nbins}, kInt64);
    auto* o = static_cast<int64_t*>(out.data());
    std::fill(o, o + nbins, 0);
    for (int64_t v : x) ++o[v];
    set_output(c, 0, out);
    return;
  }
  const Tensor& w = *weights;
  const int64_t ws = w.strides[0];
  auto sums = [&](auto acc_tag, int32_t out_dtype) {
    using A = decltype(acc_tag);
    Tensor out = empty_contiguous({nbins}, out_dtype);
    auto* o = static_cast<A*>(out.data());
    std::fill(o, o + nbins, A(0));
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<A, float>) {
        o[x[i]] += kernels::load<float>(w.data(), i * ws);
      } else if (w.dtype == kFloat64) {
        o[x[i]] += kernels::load<double>(w.data(), i * ws);
      } else {
        o[x[i]] +=
            load_as_double(static_cast<const char*>(w.data()) + i * ws * static_cast<int64_t>(w.itemsize()), w.dtype);
      }
    }
    set_output(c, 0, out);
  };
  if (w.dtype == kFloat32) {
    sums(float{}, kFloat32);
  } else {
    sums(double{}, kFloat64);
  }
}

}  // namespace

void bincount(const ExternCall& c) {
  const std::string& op = c.node.target;
  const char* name = op.c_str();
  const ExternArg* w_arg = c.node.input("weights");
  const bool has_weights = w_arg != nullptr && w_arg->kind == ExternArg::kTensor;
  if (c.inputs.size() != (has_weights ? 2u : 1u)) {
    throw ShimError(op + ": expected " +
                    std::string(has_weights ? "two tensor inputs (self, weights)" : "one tensor input (self)"));
  }
  if (c.outputs.size() != 1) throw ShimError(op + ": expected 1 output");
  const ExternArg* ml_arg = c.node.input("minlength");
  int64_t minlength = 0;
  if (ml_arg != nullptr) {
    if (ml_arg->kind != ExternArg::kInt || c.ints.size() != 1)
      throw ShimError(op + ": argument 'minlength' must be one int");
    minlength = c.ints[0];
  } else if (!c.ints.empty()) {
    throw ShimError(op + ": the wrapper passed ints, the node has no minlength");
  }
  const Tensor& self = *c.inputs[0];
  kernels::expect_cpu_defined(self, name, "self");
  const Tensor* weights = has_weights ? c.inputs[1] : nullptr;
  if (weights != nullptr) kernels::expect_cpu_defined(*weights, name, "weights");
  switch (self.dtype) {
    case kUInt8:
    case kInt8:
    case kInt16:
    case kInt32:
    case kInt64: break;
    default: kernels::fail_arg(name, "self", std::string("has unsupported dtype ") + dtype_name(self.dtype));
  }
  if (weights != nullptr &&
      (!is_convertible(weights->dtype) || weights->dtype == kComplex64 || weights->dtype == kComplex128)) {
    kernels::fail_arg(name, "weights", std::string("has unsupported dtype ") + dtype_name(weights->dtype));
  }
  if (minlength < 0) kernels::fail_arg(name, "minlength", "should be >= 0, got " + std::to_string(minlength));
  if (self.dim() == 1 && self.sizes[0] == 0) {
    Tensor out = empty_contiguous({minlength}, kInt64);
    std::fill(static_cast<int64_t*>(out.data()), static_cast<int64_t*>(out.data()) + minlength, 0);
    set_output(c, 0, out);
    return;
  }
  if (self.dim() != 1) {
    kernels::fail_arg(
        name, "self",
        "is " + std::to_string(self.dim()) + "-d: bincount only supports 1-d non-negative integral inputs");
  }
  if (weights != nullptr && (weights->dim() != 1 || weights->sizes[0] != self.sizes[0])) {
    kernels::fail_arg(name, "weights", "should be 1-d and have the same length as input");
  }
  switch (self.dtype) {
    case kUInt8: bincount_of<uint8_t>(c, self, weights, minlength); break;
    case kInt8: bincount_of<int8_t>(c, self, weights, minlength); break;
    case kInt16: bincount_of<int16_t>(c, self, weights, minlength); break;
    case kInt32: bincount_of<int32_t>(c, self, weights, minlength); break;
    default: bincount_of<int64_t>(c, self, weights, minlength); break;
  }
}

}  // namespace aotrun::shim::proxy
