// The one set of DLTensor helpers: element and byte sizes, layout, device
// type, and the text messages use for dtypes and shapes. The small ones are
// inline: every run validates its tensors with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <dlpack/dlpack.h>

#include "base/checked_math.hpp"

namespace aotrun {

// "float32", "int8x4", "code 9 (unknown, 16 bits)".
std::string dtype_name(DLDataType t);
// "[2, 3]"; a NULL shape prints as zeros.
std::string shape_string(const int64_t* shape, int ndim);

// The device type as an integer: a DLDeviceType from a C caller may hold any
// value, and loading an out-of-range enum is undefined in C++.
inline int32_t device_type_of(const DLDevice& d) {
  int32_t v;
  static_assert(sizeof(d.device_type) == sizeof(v), "DLDeviceType is not 32 bits");
  std::memcpy(&v, &d.device_type, sizeof(v));
  return v;
}

// Bytes of one element.
inline size_t element_bytes(DLDataType t) { return (static_cast<size_t>(t.bits) * t.lanes + 7) / 8; }

// Number of elements (negative dims count as 0; UINT64_MAX when the count
// overflows, never a wrapped value: it must never wrap to "empty", which
// would let NULL data through).
inline uint64_t numel(const DLTensor& t) {
  uint64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] <= 0) return 0;
  }
  for (int d = 0; d < t.ndim; ++d) n = saturating_mul(n, static_cast<uint64_t>(t.shape[d]));
  return n;
}

// Byte size of t, false if it overflows (or a dim is negative). An empty
// tensor (a zero dim) is 0 bytes whatever the other dims say.
inline bool checked_bytes(const DLTensor& t, uint64_t* bytes) {
  uint64_t elems = 0, n = 0;
  if (!checked_numel(t.shape, t.ndim, &elems)) return false;
  if (!checked_mul<uint64_t>(elems, element_bytes(t.dtype), &n)) return false;
  // Addressable and representable as a signed stride product; the element
  // count too, so a zero-byte dtype does not make any shape acceptable.
  constexpr uint64_t kLimit = uint64_t(1) << 62;
  if (n > kLimit || elems > kLimit) return false;
  if (bytes != nullptr) *bytes = n;
  return true;
}

// Row-major with no gaps: strides NULL, or matching on every dim of size
// other than 1 (false when the stride product overflows).
inline bool is_row_major(const int64_t* shape, const int64_t* strides, int ndim) {
  if (strides == nullptr) return true;
  int64_t expect = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expect) return false;
    if (!checked_mul<int64_t>(expect, shape[d], &expect)) return false;
  }
  return true;
}
inline bool is_compact(const DLTensor& t) { return is_row_major(t.shape, t.strides, t.ndim); }

}  // namespace aotrun
