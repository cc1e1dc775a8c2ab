// aten::full (since aotrun-shim 1.4), which AOTInductor calls through the
// proxy executor for a complex tensor of one value (Inductor generates no
// code for complex tensors): torch.zeros_like(X[..., k:]) of a spectrum, or
// the zeros X[..., k:] = 0 scatters in. The size arrives in flatten_int_args,
// then fill_value when it is an int; a float, bool or complex fill_value, the
// dtype (torch.export's ScalarType code), layout, device and pin_memory are
// read from the node. As libtorch: the dtype inferred from fill_value when
// None (bool, int64, float32, complex64), a contiguous result, the value
// converted as Scalar::to does (integers truncated; refused with libtorch's
// message: a value out of an integer dtype's range, a finite value beyond a
// floating dtype's largest, a complex value with an imaginary part into a
// real dtype); every real dtype, bool and
// complex64/complex128; strided layout on the CPU only.
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/typed.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

// torch._export.serde.schema.ScalarType -> c10::ScalarType.
int32_t dtype_from_serialized(int64_t code, const std::string& op) {
  switch (code) {
    case 1: return kUInt8;
    case 2: return kInt8;
    case 3: return kInt16;
    case 4: return kInt32;
    case 5: return kInt64;
    case 6: return kFloat16;
    case 7: return kFloat32;
    case 8: return kFloat64;
    case 10: return kComplex64;
    case 11: return kComplex128;
    case 12: return kBool;
    case 13: return kBFloat16;
    default:
      kernels::fail_arg(op.c_str(), "dtype",
                        "is a dtype aotrun's shim does not make (torch.export code " + std::to_string(code) + ")");
  }
}

// The value, as c10::Scalar holds it.
struct FillValue {
  enum { kInt, kDouble, kBool, kComplex } kind = kInt;
  int64_t i = 0;
  std::complex<double> z;  // kDouble: real part only
  bool b = false;
};

template <typename K>
const char* c10_type_name() {
  if constexpr (std::is_same_v<K, int8_t>) return "int8_t";
  if constexpr (std::is_same_v<K, uint8_t>) return "uint8_t";
  if constexpr (std::is_same_v<K, int16_t>) return "int16_t";
  if constexpr (std::is_same_v<K, int32_t>) return "int";
  if constexpr (std::is_same_v<K, int64_t>) return "int64_t";
  if constexpr (std::is_same_v<K, double>) return "double";
  return "float";
}

[[noreturn]] void overflow(const std::string& op, const char* type) {
  kernels::fail_arg(op.c_str(), "fill_value",
                    std::string("value cannot be converted to type ") + type + " without overflow");
}

// c10::overflows for a floating destination of largest finite value hi: a
// finite value beyond it is refused; infinities and NaN convert as they are.
bool beyond(double x, double hi) { return std::isfinite(x) && (x > hi || x < -hi); }

// Fills t (contiguous) with v converted to t's dtype.
void fill_with(Tensor& t, const FillValue& v, const std::string& op) {
  const int64_t n = t.numel();
  const double re = v.kind == FillValue::kInt    ? static_cast<double>(v.i)
                    : v.kind == FillValue::kBool ? (v.b ? 1.0 : 0.0)
                                                 : v.z.real();
  const double im = v.kind == FillValue::kComplex ? v.z.imag() : 0.0;
  if (t.dtype == kComplex64 || t.dtype == kComplex128) {
    if (t.dtype == kComplex64 &&
        (beyond(re, std::numeric_limits<float>::max()) || beyond(im, std::numeric_limits<float>::max()))) {
      overflow(op, "c10::complex<float>");
    }
    for (int64_t i = 0; i < n; ++i) {
      if (t.dtype == kComplex64) {
        kernels::store(t.data(), i, std::complex<float>(static_cast<float>(re), static_cast<float>(im)));
      } else {
        kernels::store(t.data(), i, std::complex<double>(re, im));
      }
    }
    return;
  }
  kernels::dispatch_real(t.dtype, true, op.c_str(), "dtype", [&](auto s) {
    using S = decltype(s);
    using K = typename kernels::Elem<S>::Key;
    const char* name = t.dtype == kFloat16 ? "c10::Half" : t.dtype == kBFloat16 ? "c10::BFloat16" : c10_type_name<K>();
    if (im != 0) overflow(op, std::is_same_v<K, bool> ? "bool" : name);
    K k;
    if constexpr (std::is_same_v<K, bool>) {
      k = v.kind == FillValue::kInt ? v.i != 0 : re != 0;
    } else if constexpr (std::is_integral_v<K>) {
      if (v.kind == FillValue::kInt) {
        if (v.i < static_cast<int64_t>(std::numeric_limits<K>::min()) ||
            (std::is_same_v<K, uint8_t> ? v.i > 255 : v.i > static_cast<int64_t>(std::numeric_limits<K>::max()))) {
          // c10 lets uint8 take [-255, 255] (wrapping the negatives), as libtorch.
          if (!(std::is_same_v<K, uint8_t> && v.i >= -255)) overflow(op, name);
        }
        k = static_cast<K>(v.i);
      } else {
        const double lo = static_cast<double>(std::numeric_limits<K>::min());
        const double hi = static_cast<double>(std::numeric_limits<K>::max());
        if (!(re >= lo && re <= hi)) overflow(op, name);  // c10::overflows: NaN and inf included
        k = static_cast<K>(re);
      }
    } else {
      const double x = v.kind == FillValue::kInt ? static_cast<double>(v.i) : re;
      const double hi = t.dtype == kFloat16    ? 65504.0                // c10::Half's max
                        : t.dtype == kBFloat16 ? 3.3895313892515355e38  // c10::BFloat16's max
                                               : static_cast<double>(std::numeric_limits<K>::max());
      if (beyond(x, hi)) overflow(op, name);
      k = static_cast<K>(x);
    }
    const S e = kernels::Elem<S>::from(k);
    for (int64_t i = 0; i < n; ++i) kernels::store(t.data(), i, e);
  });
}

}  // namespace

void full(const ExternCall& c) {
  const std::string& op = c.node.target;
  if (!c.inputs.empty()) throw ShimError(op + ": expected no tensor inputs");
  if (c.outputs.size() != 1) throw ShimError(op + ": expected one output");
  std::vector<int64_t> size;
  FillValue value;
  bool have_value = false;
  int32_t dtype = -1;
  size_t k = 0;
  for (const ExternArg& a : c.node.inputs) {
    const size_t n = a.kind == ExternArg::kInts ? a.ints.size() : a.kind == ExternArg::kInt ? 1 : 0;
    if (k + n > c.ints.size()) throw ShimError(op + ": too few int arguments were passed");
    if (a.name == "size" && a.kind == ExternArg::kInts) size.assign(c.ints.begin() + k, c.ints.begin() + k + n);
    if (a.name == "fill_value") {
      have_value = true;
      if (a.kind == ExternArg::kInt) {
        value.kind = FillValue::kInt;
        value.i = c.ints[k];
      } else if (a.kind == ExternArg::kFloat) {
        value.kind = FillValue::kDouble;
        value.z = a.f;
      } else if (a.kind == ExternArg::kBool) {
        value.kind = FillValue::kBool;
        value.b = a.b;
      } else if (a.kind == ExternArg::kComplex) {
        value.kind = FillValue::kComplex;
        value.z = {a.f, a.f_imag};
      } else {
        kernels::fail_arg(op.c_str(), "fill_value", "is passed as " + a.serialized_kind + ", not a number");
      }
    }
    if (a.name == "dtype" && a.kind == ExternArg::kScalarType) dtype = dtype_from_serialized(a.i, op);
    if (a.name == "layout" && a.kind == ExternArg::kLayout && a.i != 7) {
      kernels::fail_arg(
          op.c_str(), "layout",
          "is not torch.strided (torch.export code " + std::to_string(a.i) + "), which aotrun's shim does not make");
    }
    if (a.name == "device" && a.kind == ExternArg::kDevice && a.s != "cpu") {
      kernels::fail_arg(op.c_str(), "device", "is " + a.s + ", not cpu: aotrun's proxy executor runs on the CPU");
    }
    if (a.name == "pin_memory" && a.kind == ExternArg::kBool && a.b) {
      kernels::fail_arg(op.c_str(), "pin_memory", "is true, which aotrun's shim does not do");
    }
    k += n;
  }
  if (!have_value) throw ShimError(op + ": the node has no fill_value");
  if (dtype < 0) {  // libtorch's infer_full_options
    dtype = value.kind == FillValue::kBool      ? kBool
            : value.kind == FillValue::kInt     ? kInt64
            : value.kind == FillValue::kComplex ? kComplex64
                                                : kFloat32;
  }
  for (int64_t s : size) {
    if (s < 0) {
      std::string shape;
      for (int64_t x : size) shape += (shape.empty() ? "" : ", ") + std::to_string(x);
      kernels::fail_arg(op.c_str(), "size",
                        "Trying to create tensor with negative dimension " + std::to_string(s) + ": [" + shape + "]");
    }
  }
  Tensor out = empty_contiguous(size, dtype);
  fill_with(out, value, op);
  set_output(c, 0, out);
}

}  // namespace aotrun::shim::proxy
