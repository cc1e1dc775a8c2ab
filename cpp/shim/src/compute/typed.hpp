// Element access by dtype for the shim's index-like kernels (sort, topk,
// searchsorted, nonzero, masked_select, scatter): a dispatch from a dtype code
// to a C++ storage type, the value used to compare or combine elements of
// that type (Elem<S>::Key: float for the 16-bit floating types, the type
// itself otherwise), and row-major walks over strided positions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype.hpp"
#include "kernels/kernels.hpp"
#include "tensor.hpp"

namespace aotrun::shim::kernels {

// Storage types of the dtypes without a C++ type of their own.
struct BF16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};
struct Bool8 {
  uint8_t byte;
};

template <typename S>
struct Elem {
  using Key = S;
  static Key key(S v) { return v; }
  static S from(Key k) { return k; }
};
template <>
struct Elem<BF16> {
  using Key = float;
  static float key(BF16 v) { return bf16_to_float(v.bits); }
  static BF16 from(float f) { return BF16{float_to_bf16(f)}; }
};
template <>
struct Elem<F16> {
  using Key = float;
  static float key(F16 v) { return half_to_float(v.bits); }
  static F16 from(float f) { return F16{float_to_half(f)}; }
};
template <>
struct Elem<Bool8> {
  using Key = bool;
  static bool key(Bool8 v) { return v.byte != 0; }
  static Bool8 from(bool b) { return Bool8{static_cast<uint8_t>(b ? 1 : 0)}; }
};

template <typename S>
inline S load(const void* base, int64_t offset) {
  S v;
  std::memcpy(&v, static_cast<const char*>(base) + offset * static_cast<int64_t>(sizeof(S)), sizeof(S));
  return v;
}
template <typename S>
inline void store(void* base, int64_t offset, S v) {
  std::memcpy(static_cast<char*>(base) + offset * static_cast<int64_t>(sizeof(S)), &v, sizeof(S));
}
template <typename S>
inline typename Elem<S>::Key load_key(const void* base, int64_t offset) {
  return Elem<S>::key(load<S>(base, offset));
}

template <typename K>
inline bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// Calls f(S{}) with the storage type of `dtype`: the real dtypes (floating,
// signed and unsigned integers) and, when `allow_bool`, bool. Anything else
// fails naming op and argument.
template <typename F>
void dispatch_real(int32_t dtype, bool allow_bool, const char* op, const char* arg, F&& f) {
  switch (dtype) {
    case kFloat32: f(float{}); return;
    case kFloat64: f(double{}); return;
    case kBFloat16: f(BF16{}); return;
    case kFloat16: f(F16{}); return;
    case kInt64: f(int64_t{}); return;
    case kInt32: f(int32_t{}); return;
    case kInt16: f(int16_t{}); return;
    case kInt8: f(int8_t{}); return;
    case kUInt8: f(uint8_t{}); return;
    case kBool:
      if (allow_bool) {
        f(Bool8{});
        return;
      }
      break;
    default: break;
  }
  fail_arg(op, arg, std::string("has unsupported dtype ") + dtype_name(dtype));
}

// A dim wrapped into [0, ndim) (a 0-d tensor accepts 0 and -1, as PyTorch).
inline int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op, const char* arg = "dim") {
  const int64_t n = ndim > 0 ? ndim : 1;
  const int64_t d = dim < 0 ? dim + n : dim;
  if (d < 0 || d >= n) {
    fail_arg(op, arg, std::to_string(dim) + " is out of range for a " + std::to_string(ndim) + "-d tensor");
  }
  return d;
}

// Calls f(index) for every position of `sizes` in row-major order, dim
// `skip` held at 0 (-1: none skipped). Nothing when a size is 0.
template <typename F>
void for_each_index(const std::vector<int64_t>& sizes, int64_t skip, F&& f) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  for (int64_t d = 0; d < nd; ++d) {
    if (d != skip && sizes[d] == 0) return;
  }
  std::vector<int64_t> idx(nd, 0);
  while (true) {
    f(static_cast<const std::vector<int64_t>&>(idx));
    int64_t d = nd - 1;
    for (; d >= 0; --d) {
      if (d == skip) continue;
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Σ index[d] * strides[d].
inline int64_t offset_of(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

// PyTorch's dense strides for a result laid out like an input of these
// strides (infer_dense_strides: dims ordered by stride, insertion-sorted the
// way TensorIterator orders them; stride-0 dims keep their place).
std::vector<int64_t> dense_strides_like(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

}  // namespace aotrun::shim::kernels
