// aoti_torch_cpu_logcumsumexp: log(cumsum(exp(x))) along one dim into a new
// contiguous tensor of self's dtype, computed as libtorch's CPU kernel does:
// the running value starts at -inf and takes each element through
//   lo = min(x, acc), hi = max(x, acc) (NaN in acc wins; std::min/max keep x
//   when x is NaN), then log1p(exp(lo - hi)) + hi, or x itself when
//   lo == hi and both are infinite,
// in libtorch's CPU accumulation type (double for float32 and float64, float
// for bfloat16 and float16), each prefix rounded to the result type when
// stored. So NaN propagates, -inf elements leave the sum alone (all -inf:
// -inf), and +inf sticks. Floating dtypes only (libtorch refuses integers and
// bool; complex is not supported here).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {

namespace {

template <typename A>
A log_add_exp(A x, A acc) {
  const A lo = std::isnan(acc) ? acc : std::min(x, acc);
  const A hi = std::isnan(acc) ? acc : std::max(x, acc);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return x;  // both +inf or both -inf
}

template <typename S, typename A>
void run(const Tensor& self, int64_t d, const Tensor& out) {
  const void* in = self.data();
  void* o = out.data();
  if (self.dim() == 0) {
    store<S>(o, 0, load<S>(in, 0));
    return;
  }
  const std::vector<int64_t> ost = contiguous_strides(self.sizes);
  const int64_t len = self.sizes[d], ist = self.strides[d], os = ost[d];
  for_each_index(self.sizes, d, [&](const std::vector<int64_t>& idx) {
    const int64_t ibase = offset_of(idx, self.strides), obase = offset_of(idx, ost);
    A acc = -std::numeric_limits<A>::infinity();
    for (int64_t i = 0; i < len; ++i) {
      const A x = static_cast<A>(Elem<S>::key(load<S>(in, ibase + i * ist)));
      acc = log_add_exp(x, acc);
      store<S>(o, obase + i * os, Elem<S>::from(static_cast<typename Elem<S>::Key>(acc)));
    }
  });
}

}  // namespace

Tensor logcumsumexp(const Tensor& self, int64_t dim, const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  if (!is_floating(self.dtype)) {
    fail_arg(op, "self",
             std::string("has dtype ") + dtype_name(self.dtype) + "; it must be float32, float64, bfloat16 or float16");
  }
  Tensor out = empty_contiguous(self.sizes, self.dtype);
  if (self.numel() == 0) return out;
  switch (self.dtype) {
    case kFloat32: run<float, double>(self, d, out); break;
    case kFloat64: run<double, double>(self, d, out); break;
    case kBFloat16: run<BF16, float>(self, d, out); break;
    case kFloat16: run<F16, float>(self, d, out); break;
    default: fail_arg(op, "self", std::string("has unsupported dtype ") + dtype_name(self.dtype));
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_logcumsumexp(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    Tensor out = kernels::logcumsumexp(as_tensor(self, "self"), dim, "aoti_torch_cpu_logcumsumexp");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}
