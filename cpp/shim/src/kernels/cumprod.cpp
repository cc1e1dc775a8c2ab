// aoti_torch_cpu_cumprod: cumulative product along one dim into a new
// contiguous tensor, cumsum's twin. The input is converted to the result
// dtype first (the given one, or self's with integers and bool promoted to
// int64). Products accumulate as PyTorch's CPU kernel does: float32 and
// float64 in double, bfloat16 and float16 in float, each prefix rounded to
// the result type when stored; integers in int64, wrapping on overflow.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

Tensor cumprod(const Tensor& self, int64_t dim, int32_t dtype, const char* op) {
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
  const bool half = dtype == kBFloat16 || dtype == kFloat16;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      char* p = base + (o * len * inner + in) * item;
      double acc = 1;
      float facc = 1;
      uint64_t iacc = 1;  // unsigned: wraps like libtorch's int64 product
      for (int64_t i = 0; i < len; ++i) {
        char* e = p + i * inner * item;
        if (half) {
          facc *= static_cast<float>(load_as_double(e, dtype));
          store_from_double(e, dtype, facc);
        } else if (is_floating(dtype)) {
          acc *= load_as_double(e, dtype);
          store_from_double(e, dtype, acc);
        } else if (dtype == kInt64) {
          int64_t v;
          std::memcpy(&v, e, 8);
          iacc *= static_cast<uint64_t>(v);
          std::memcpy(e, &iacc, 8);
        } else {
          iacc *= static_cast<uint64_t>(static_cast<int64_t>(load_as_double(e, dtype)));
          // Stored as the low bits of the int64 product, as a narrowing cast does.
          const int64_t wide = static_cast<int64_t>(iacc);
          switch (dtype) {
            case kInt32: {
              const int32_t v = static_cast<int32_t>(wide);
              std::memcpy(e, &v, 4);
              break;
            }
            case kInt16: {
              const int16_t v = static_cast<int16_t>(wide);
              std::memcpy(e, &v, 2);
              break;
            }
            case kInt8:
            case kUInt8: {
              const uint8_t v = static_cast<uint8_t>(wide);
              std::memcpy(e, &v, 1);
              break;
            }
            case kUInt16: {
              const uint16_t v = static_cast<uint16_t>(wide);
              std::memcpy(e, &v, 2);
              break;
            }
            case kUInt32: {
              const uint32_t v = static_cast<uint32_t>(wide);
              std::memcpy(e, &v, 4);
              break;
            }
            default: std::memcpy(e, &iacc, 8); break;  // uint64
          }
        }
      }
    }
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                 AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    int32_t dt = s.dtype;
    if (dtype != nullptr) {
      dt = *dtype;
    } else if (!is_floating(s.dtype)) {
      dt = kInt64;  // integer and bool products are int64, as in PyTorch
    }
    Tensor out = kernels::cumprod(s, dim, dt, "aoti_torch_cpu_cumprod");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}
