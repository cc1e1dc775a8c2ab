// aoti_torch_cpu_cumsum: cumulative sum along one dim into a new contiguous
// tensor. The input is converted to the result dtype first (the given one, or
// self's with integers and bool promoted to int64); floating sums accumulate
// in double and are rounded at each stored prefix, integer sums in int64.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

Tensor cumsum(const Tensor& self, int64_t dim, int32_t dtype, const char* op) {
  expect_cpu_defined(self, op, "self");
  if (!is_convertible(self.dtype)) fail_arg(op, "self", std::string("has unsupported dtype ") + dtype_name(self.dtype));
  if (!is_convertible(dtype) || dtype == kBool) {
    fail_arg(op, "dtype", std::string("is ") + dtype_name(dtype) + ", which is not supported");
  }
  const int64_t nd = self.dim();
  const int64_t d = dim < 0 ? dim + std::max<int64_t>(nd, 1) : dim;
  if (d < 0 || d >= std::max<int64_t>(nd, 1)) fail_arg(op, "dim", std::to_string(dim) + " is out of range");
  Tensor out = empty_contiguous(self.sizes, dtype);
  copy_elements(out, self);
  if (nd == 0 || out.numel() == 0) return out;
  const int64_t len = self.sizes[d];
  int64_t inner = 1, outer = 1;
  for (int64_t i = d + 1; i < nd; ++i) inner *= self.sizes[i];
  for (int64_t i = 0; i < d; ++i) outer *= self.sizes[i];
  char* base = static_cast<char*>(out.data());
  const int64_t item = static_cast<int64_t>(out.itemsize());
  const bool floating = is_floating(dtype);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      char* p = base + (o * len * inner + in) * item;
      double acc = 0;
      int64_t iacc = 0;
      for (int64_t i = 0; i < len; ++i) {
        char* e = p + i * inner * item;
        if (floating) {
          acc += load_as_double(e, dtype);
          store_from_double(e, dtype, acc);
        } else if (dtype == kInt64) {
          int64_t v;
          std::memcpy(&v, e, 8);
          iacc += v;
          std::memcpy(e, &iacc, 8);
        } else {
          iacc += static_cast<int64_t>(load_as_double(e, dtype));
          store_from_double(e, dtype, static_cast<double>(iacc));
        }
      }
    }
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    int32_t dt = s.dtype;
    if (dtype != nullptr) {
      dt = *dtype;
    } else if (!is_floating(s.dtype)) {
      dt = kInt64;  // integer and bool sums are int64, as in PyTorch
    }
    Tensor out = kernels::cumsum(s, dim, dt, "aoti_torch_cpu_cumsum");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}
