// Overflow-checked size arithmetic. Every size aotrun derives from something
// it does not control (a package's request, a caller's tensor, a file) goes
// through these: a wrapped size turns into a small buffer labelled as a big
// one. Each returns false on overflow and leaves *out unspecified then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace aotrun {

template <class T>
[[nodiscard]] inline bool checked_add(T a, T b, T* out) noexcept {
  static_assert(std::is_integral_v<T>, "integers only");
  return !__builtin_add_overflow(a, b, out);
}

template <class T>
[[nodiscard]] inline bool checked_mul(T a, T b, T* out) noexcept {
  static_assert(std::is_integral_v<T>, "integers only");
  return !__builtin_mul_overflow(a, b, out);
}

// Rounds `bytes` up to a multiple of `align` (a power of two, > 0).
[[nodiscard]] inline bool checked_round_up(size_t bytes, size_t align, size_t* out) noexcept {
  size_t padded;
  if (align == 0 || (align & (align - 1)) != 0) return false;
  if (__builtin_add_overflow(bytes, align - 1, &padded)) return false;
  *out = padded & ~(align - 1);
  return true;
}

// Product of `ndim` dims; false if one is negative or the product does not
// fit 64 bits. An empty shape (a zero dim) is 0 whatever the others say.
[[nodiscard]] inline bool checked_numel(const int64_t* shape, int ndim, uint64_t* out) noexcept {
  uint64_t n = 1;
  bool empty = false;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] < 0) return false;
    empty |= shape[d] == 0;
  }
  if (empty) {
    *out = 0;
    return true;
  }
  for (int d = 0; d < ndim; ++d) {
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(shape[d]), &n)) return false;
  }
  *out = n;
  return true;
}

// a * b / a + b, or the type's maximum when that overflows (sort keys,
// counters: where "very large" is the right answer). Unsigned types only.
template <class T>
inline T saturating_mul(T a, T b) noexcept {
  static_assert(std::is_unsigned_v<T>, "unsigned integers only");
  T r;
  return __builtin_mul_overflow(a, b, &r) ? static_cast<T>(~T(0)) : r;
}

template <class T>
inline T saturating_add(T a, T b) noexcept {
  static_assert(std::is_unsigned_v<T>, "unsigned integers only");
  T r;
  return __builtin_add_overflow(a, b, &r) ? static_cast<T>(~T(0)) : r;
}

}  // namespace aotrun
