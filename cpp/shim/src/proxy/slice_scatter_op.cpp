// aten::slice_scatter (since aotrun-shim 1.4), which AOTInductor calls
// through the proxy executor for a complex tensor written in part (Inductor
// generates no code for complex tensors): a spectrum zeroed in place,
// X[..., k:] = 0, becomes slice_scatter(X, full(..., 0), -1, k). dim, then
// start and end unless None (as_none in the node: no int passed), then step
// arrive in flatten_int_args. As libtorch: a copy of self (clone_preserve
// strides: self's strides when self has no internal overlap, else a clone
// laid out densely like it) with self[dim, start:end:step] (bounds clamped as
// slice's) replaced by src, whose sizes must be the slice's exactly (src
// converted to self's dtype as copy_ converts). Every real dtype, bool and
// complex64/complex128, any strides.
#include <limits>
#include <string>
#include <vector>

#include "compute/typed.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

bool has_internal_overlap(const Tensor& t) {
  if (t.is_non_overlapping_and_dense()) return false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides[d] == 0 && t.sizes[d] > 1) return true;
  }
  return false;
}

}  // namespace

void slice_scatter(const ExternCall& c) {
  const std::string& op = c.node.target;
  const char* o = op.c_str();
  if (c.inputs.size() != 2) throw ShimError(op + ": expected two tensor inputs (self, src)");
  if (c.outputs.size() != 1) throw ShimError(op + ": expected one output");
  const Tensor& self = *c.inputs[0];
  const Tensor& src = *c.inputs[1];
  kernels::expect_cpu_defined(self, o, "self");
  kernels::expect_cpu_defined(src, o, "src");
  for (const auto& [t, arg] : {std::make_pair(&self, "self"), std::make_pair(&src, "src")}) {
    if (t->dtype != kComplex64 && t->dtype != kComplex128 && !is_convertible(t->dtype)) {
      kernels::fail_arg(o, arg, std::string("has unsupported dtype ") + dtype_name(t->dtype));
    }
  }
  int64_t dim = 0, step = 1;
  bool has_start = false, has_end = false;
  int64_t start = 0, end = std::numeric_limits<int64_t>::max();
  size_t k = 0;
  for (const ExternArg& a : c.node.inputs) {
    const size_t n = a.kind == ExternArg::kInts ? a.ints.size() : a.kind == ExternArg::kInt ? 1 : 0;
    if (k + n > c.ints.size()) throw ShimError(op + ": too few int arguments were passed");
    if (a.kind == ExternArg::kInt) {
      if (a.name == "dim") dim = c.ints[k];
      if (a.name == "start") has_start = true, start = c.ints[k];
      if (a.name == "end") has_end = true, end = c.ints[k];
      if (a.name == "step") step = c.ints[k];
    }
    k += n;
  }
  // clone_preserve_strides.
  const std::vector<int64_t> strides =
      has_internal_overlap(self) || self.is_non_overlapping_and_dense()
          ? (self.is_non_overlapping_and_dense() ? self.strides : kernels::dense_strides_like(self.sizes, self.strides))
          : self.strides;
  Tensor out = empty_tensor(self.sizes, strides, self.dtype);
  if (out.numel() > 0) copy_host_elements(out, self);
  // The part src replaces, a view (slice_Tensor's checks and clamping).
  const Tensor slice = kernels::slice_tensor(out, dim, has_start ? &start : nullptr, has_end ? &end : nullptr, step, o);
  if (slice.sizes != src.sizes) {
    kernels::fail_arg(o, "src",
                      "expected src to have a size equal to the slice of self. src size = " + shape_str(src.sizes) +
                          ", slice size = " + shape_str(slice.sizes));
  }
  if (slice.numel() > 0) copy_host_elements(slice, src);
  set_output(c, 0, out);
}

}  // namespace aotrun::shim::proxy
