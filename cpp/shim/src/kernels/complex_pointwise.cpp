// The pointwise functions Inductor leaves to the C shim around an FFT (since
// aotrun-shim 1.4): it generates no code for complex tensors, so a model
// that multiplies a spectrum (irfft(rfft(x) * w)), slices it (X[..., :k]) or
// adds spectra (through a float view of them) calls
//   aoti_torch_cpu_mul_Tensor   self * other: broadcast, libtorch's type
//                               promotion (0-d tensors a lower priority
//                               class), result laid out as TensorIterator
//                               lays it out; complex products by the
//                               textbook formula libtorch's kernels use
//                               (re = ac - bd, im = ad + bc, no fused
//                               multiply-add), a real operand promoted to
//                               (x, 0) first, as libtorch's
//   aoti_torch_cpu_slice_Tensor a view: start/end clamped, step > 0
//   aoti_torch_cpu_view_dtype   a view of the same bytes as another dtype
// on complex64/complex128 and on every real dtype and bool.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

bool is_cpx(int32_t d) { return d == kComplex64 || d == kComplex128; }
bool is_flt(int32_t d) { return d == kFloat16 || d == kBFloat16 || d == kFloat32 || d == kFloat64; }
bool is_int(int32_t d) { return d == kUInt8 || d == kInt8 || d == kInt16 || d == kInt32 || d == kInt64; }

// The dtypes mul_Tensor computes in.
void expect_arithmetic(const Tensor& t, const char* op, const char* arg) {
  expect_cpu_defined(t, op, arg);
  if (!is_cpx(t.dtype) && !is_flt(t.dtype) && !is_int(t.dtype) && t.dtype != kBool) {
    fail_arg(op, arg, std::string("has unsupported dtype ") + dtype_name(t.dtype));
  }
}

// at::result_type of two tensors: tensors with dims outrank 0-d ones, which
// only raise the category (c10's combine_categories).
int32_t result_type(const Tensor& a, const Tensor& b, const char* op) {
  int32_t dim_r = -1, zero_r = -1;
  for (const Tensor* t : {&a, &b}) {
    int32_t& r = t->dim() > 0 ? dim_r : zero_r;
    r = r < 0 ? t->dtype : promote_types(r, t->dtype, op);
  }
  if (dim_r < 0) return zero_r;
  if (zero_r < 0) return dim_r;
  if (is_cpx(dim_r)) return dim_r;
  if (is_cpx(zero_r)) {
    if (dim_r == kFloat64) return kComplex128;
    if (is_flt(dim_r)) return kComplex64;
    return zero_r;
  }
  if (is_flt(dim_r)) return dim_r;
  if (dim_r == kBool || is_flt(zero_r)) return promote_types(dim_r, zero_r, op);
  return dim_r;
}

// The broadcast shape of a and b (libtorch's infer_size and its message).
std::vector<int64_t> broadcast_shape(const Tensor& a, const Tensor& b, const char* op) {
  const int64_t n = std::max(a.dim(), b.dim());
  std::vector<int64_t> out(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t da = i - (n - a.dim()), db = i - (n - b.dim());
    const int64_t sa = da >= 0 ? a.sizes[da] : 1, sb = db >= 0 ? b.sizes[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      fail_arg(op, "other",
               "The size of tensor a (" + std::to_string(sa) + ") must match the size of tensor b (" +
                   std::to_string(sb) + ") at non-singleton dimension " + std::to_string(i));
    }
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

// t's strides over `shape` (leading and broadcast dims: 0).
std::vector<int64_t> strides_over(const Tensor& t, const std::vector<int64_t>& shape) {
  const int64_t n = static_cast<int64_t>(shape.size());
  std::vector<int64_t> st(n, 0);
  for (int64_t i = 0; i < t.dim(); ++i) {
    const int64_t o = i + n - t.dim();
    st[o] = t.sizes[i] == 1 && shape[o] != 1 ? 0 : t.strides[i];
  }
  return st;
}

// The result's strides as TensorIterator allocates them: the operands'
// own when all have the result's shape and the same non-overlapping, dense
// strides (its fast set-up); otherwise dims ordered by the operands'
// strides, the first operand deciding (reorder_dimensions), laid out
// densely in that order (contiguous when the order is the row-major one).
std::vector<int64_t> result_strides(const std::vector<const Tensor*>& ops, const std::vector<int64_t>& shape) {
  bool same = true;
  for (const Tensor* t : ops) {
    same = same && t->sizes == shape && t->is_non_overlapping_and_dense() && t->strides == ops[0]->strides;
  }
  if (same) return ops[0]->strides;
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<std::vector<int64_t>> st;
  for (const Tensor* t : ops) st.push_back(strides_over(*t, shape));
  std::vector<int64_t> perm(nd);  // innermost first
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const auto& s : st) {
      if (s[d0] == 0 || s[d1] == 0) continue;
      if (s[d0] < s[d1]) return -1;
      if (s[d0] > s[d1]) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool inverted = true;
  for (int64_t i = 0; i < nd; ++i) inverted = inverted && perm[i] == nd - 1 - i;
  if (inverted) return contiguous_strides(shape);
  std::vector<int64_t> out(nd);
  int64_t next = 1;
  for (int64_t i = 0; i < nd; ++i) {
    out[perm[i]] = next;
    next *= shape[perm[i]];
  }
  return out;
}

// An element of dtype `d` at p, as the compute type T (complex<float/double>,
// float, double or an integer type; bool as 0/1).
template <typename T>
T load_as(int32_t d, const void* base, int64_t off) {
  auto cvt = [](auto v) -> T {
    using V = decltype(v);
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
      using R = typename T::value_type;
      if constexpr (std::is_same_v<V, std::complex<float>> || std::is_same_v<V, std::complex<double>>) {
        return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
      } else {
        return T(static_cast<R>(v), R(0));
      }
    } else {
      return static_cast<T>(v);
    }
  };
  switch (d) {
    case kComplex64:
      if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
        return cvt(load<std::complex<float>>(base, off));
      }
      break;
    case kComplex128:
      if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
        return cvt(load<std::complex<double>>(base, off));
      }
      break;
    case kFloat32: return cvt(load<float>(base, off));
    case kFloat64: return cvt(load<double>(base, off));
    case kFloat16: return cvt(half_to_float(load<uint16_t>(base, off)));
    case kBFloat16: return cvt(bf16_to_float(load<uint16_t>(base, off)));
    case kInt64: return cvt(load<int64_t>(base, off));
    case kInt32: return cvt(load<int32_t>(base, off));
    case kInt16: return cvt(load<int16_t>(base, off));
    case kInt8: return cvt(load<int8_t>(base, off));
    case kUInt8: return cvt(load<uint8_t>(base, off));
    case kBool: return cvt(static_cast<uint8_t>(load<uint8_t>(base, off) != 0));
    default: break;
  }
  return T{};
}

// libtorch's complex product (c10::complex and its vectorized kernels):
// each product rounded, then the sum or difference.
template <typename R>
std::complex<R> cmul(std::complex<R> a, std::complex<R> b) {
  volatile R ac = a.real() * b.real(), bd = a.imag() * b.imag();
  volatile R ad = a.real() * b.imag(), bc = a.imag() * b.real();
  return std::complex<R>(ac - bd, ad + bc);
}

template <typename T>
T product(T a, T b) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return cmul(a, b);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wraps on overflow, as libtorch's
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// out = a * b over out's shape, computed in T, stored as out's dtype S;
// each operand first passed through its prep (the rounding of an operand
// converted to the result's dtype).
template <typename T, typename S>
void mul_into(const Tensor& out, const Tensor& a, const Tensor& b, S (*to_storage)(T), T (*prep_a)(T) = nullptr,
              T (*prep_b)(T) = nullptr) {
  const std::vector<int64_t> sa = strides_over(a, out.sizes), sb = strides_over(b, out.sizes);
  for_each_index(out.sizes, -1, [&](const std::vector<int64_t>& pos) {
    T x = load_as<T>(a.dtype, a.data(), offset_of(pos, sa));
    T y = load_as<T>(b.dtype, b.data(), offset_of(pos, sb));
    if (prep_a != nullptr) x = prep_a(x);
    if (prep_b != nullptr) y = prep_b(y);
    store<S>(out.data(), offset_of(pos, out.strides), to_storage(product(x, y)));
  });
}

template <typename T>
T same(T v) {
  return v;
}
uint16_t to_half(float v) { return float_to_half(v); }
uint16_t to_bf16(float v) { return float_to_bf16(v); }
uint8_t to_bool(uint8_t v) { return v != 0 ? 1 : 0; }
float round_half(float v) { return half_to_float(float_to_half(v)); }
float round_bf16(float v) { return bf16_to_float(float_to_bf16(v)); }

Tensor mul_tensor(const Tensor& self, const Tensor& other, const char* op) {
  expect_arithmetic(self, op, "self");
  expect_arithmetic(other, op, "other");
  const std::vector<int64_t> shape = broadcast_shape(self, other, op);
  const int32_t dtype = result_type(self, other, op);
  Tensor out = empty_tensor(shape, result_strides({&self, &other}, shape), dtype);
  if (out.numel() == 0) return out;
  switch (dtype) {
    case kComplex64: mul_into<std::complex<float>>(out, self, other, &same<std::complex<float>>); break;
    case kComplex128: mul_into<std::complex<double>>(out, self, other, &same<std::complex<double>>); break;
    case kFloat32: mul_into<float>(out, self, other, &same<float>); break;
    case kFloat64: mul_into<double>(out, self, other, &same<double>); break;
    // 16-bit results, as libtorch: operands converted to the result's dtype
    // (rounded), except a one-element other, which its kernel reads at its
    // own precision into float; the product in float, rounded once.
    case kFloat16:
      mul_into<float>(out, self, other, &to_half, &round_half, other.numel() == 1 ? nullptr : &round_half);
      break;
    case kBFloat16:
      mul_into<float>(out, self, other, &to_bf16, &round_bf16, other.numel() == 1 ? nullptr : &round_bf16);
      break;
    case kInt64: mul_into<int64_t>(out, self, other, &same<int64_t>); break;
    case kInt32: mul_into<int32_t>(out, self, other, &same<int32_t>); break;
    case kInt16: mul_into<int16_t>(out, self, other, &same<int16_t>); break;
    case kInt8: mul_into<int8_t>(out, self, other, &same<int8_t>); break;
    case kUInt8: mul_into<uint8_t>(out, self, other, &same<uint8_t>); break;
    case kBool: mul_into<uint8_t>(out, self, other, &to_bool); break;  // a && b
    default: fail_arg(op, "self", std::string("has unsupported dtype ") + dtype_name(dtype));
  }
  return out;
}

}  // namespace

Tensor slice_tensor(const Tensor& self, int64_t dim, const int64_t* start, const int64_t* end, int64_t step,
                    const char* op) {
  expect_cpu_defined(self, op, "self");
  if (self.dim() == 0) fail_arg(op, "self", "slice() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, self.dim(), op, "dim");
  if (step <= 0) fail_arg(op, "step", "slice step must be positive");
  const int64_t size = self.sizes[d];
  int64_t s = start != nullptr ? *start : 0, e = end != nullptr ? *end : std::numeric_limits<int64_t>::max();
  if (s < 0) s += size;
  if (e < 0) e += size;
  if (s < 0) {
    s = 0;
  } else if (s >= size) {
    s = size;
  }
  if (e < s) {
    e = s;
  } else if (e >= size) {
    e = size;
  }
  Tensor out = self;  // shares the storage
  out.storage_offset += s * self.strides[d];
  out.sizes[d] = (e - s + step - 1) / step;
  out.strides[d] *= step;
  return out;
}

namespace {

Tensor view_dtype(const Tensor& self, int32_t dtype, const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t from = static_cast<int64_t>(element_size(self.dtype)), to = static_cast<int64_t>(element_size(dtype));
  if (to == 0) fail_arg(op, "dtype", "is not a dtype aotrun's shim knows (" + std::to_string(dtype) + ")");
  Tensor out = self;  // shares the storage
  out.dtype = dtype;
  if (from == to) return out;
  const std::string what =
      std::string(" to view ") + dtype_name(self.dtype) + " as " + dtype_name(dtype) + " (different element sizes)";
  if (self.dim() == 0) fail_arg(op, "self", "self.dim() cannot be 0" + what);
  if (self.strides.back() != 1) {
    fail_arg(op, "self", "self.stride(-1) must be 1" + what + ", but got " + std::to_string(self.strides.back()));
  }
  if (from > to) {
    const int64_t r = from / to;
    for (size_t i = 0; i + 1 < out.strides.size(); ++i) out.strides[i] *= r;
    out.sizes.back() *= r;
    out.storage_offset *= r;
    return out;
  }
  const int64_t r = to / from;
  if (self.sizes.back() % r != 0) {
    fail_arg(op, "self",
             "self.size(-1) must be divisible by " + std::to_string(r) + what + ", but got " +
                 std::to_string(self.sizes.back()));
  }
  if (self.storage_offset % r != 0) {
    fail_arg(op, "self",
             "self.storage_offset() must be divisible by " + std::to_string(r) + what + ", but got " +
                 std::to_string(self.storage_offset));
  }
  for (size_t i = 0; i + 1 < out.strides.size(); ++i) {
    if (self.strides[i] % r != 0) {
      fail_arg(op, "self",
               "self.stride(" + std::to_string(i) + ") must be divisible by " + std::to_string(r) + what +
                   ", but got " + std::to_string(self.strides[i]));
    }
    out.strides[i] /= r;
  }
  out.sizes.back() /= r;
  out.storage_offset /= r;
  return out;
}

}  // namespace
}  // namespace aotrun::shim::kernels

using namespace aotrun::shim;

extern "C" AOTITorchError aoti_torch_cpu_mul_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                                    AtenTensorHandle* ret0) {
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    const Tensor& o = as_tensor(other, "other");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::mul_tensor(s, o, "aoti_torch_cpu_mul_Tensor"));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start, int64_t* end,
                                                      int64_t step, AtenTensorHandle* ret0) {
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::slice_tensor(s, dim, start, end, step, "aoti_torch_cpu_slice_Tensor"));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret0) {
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::view_dtype(s, dtype, "aoti_torch_cpu_view_dtype"));
  });
}
