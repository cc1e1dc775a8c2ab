// The dtypes the differential suites build tensors of: one enum (Dt) for
// every suite, its name in failure messages, its code under either provider
// (each ShimApi answers aoti_torch_dtype_*() for itself), and the bytes a
// list of doubles becomes in it. Values are chosen by each suite; encode only
// converts them (integers truncate toward zero and wrap, as static_cast does).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shim_api.hpp"
#include "tensor_probe.hpp"

namespace aotrun_shim_test {

enum class Dt { F32, F64, BF16, F16, I64, I32, I16, I8, U8, U16, U32, U64, Bool, C64, C128 };

inline const char* dt_name(Dt d) {
  switch (d) {
    case Dt::F32: return "f32";
    case Dt::F64: return "f64";
    case Dt::BF16: return "bf16";
    case Dt::F16: return "f16";
    case Dt::I64: return "i64";
    case Dt::I32: return "i32";
    case Dt::I16: return "i16";
    case Dt::I8: return "i8";
    case Dt::U8: return "u8";
    case Dt::U16: return "u16";
    case Dt::U32: return "u32";
    case Dt::U64: return "u64";
    case Dt::Bool: return "bool";
    case Dt::C64: return "c64";
    case Dt::C128: return "c128";
  }
  return "?";
}

// d's dtype code as provider `a` numbers it.
inline int32_t code(const ShimApi& a, Dt d) {
  switch (d) {
    case Dt::F32: return a.aoti_torch_dtype_float32();
    case Dt::F64: return a.aoti_torch_dtype_float64();
    case Dt::BF16: return a.aoti_torch_dtype_bfloat16();
    case Dt::F16: return a.aoti_torch_dtype_float16();
    case Dt::I64: return a.aoti_torch_dtype_int64();
    case Dt::I32: return a.aoti_torch_dtype_int32();
    case Dt::I16: return a.aoti_torch_dtype_int16();
    case Dt::I8: return a.aoti_torch_dtype_int8();
    case Dt::U8: return a.aoti_torch_dtype_uint8();
    case Dt::U16: return a.aoti_torch_dtype_uint16();
    case Dt::U32: return a.aoti_torch_dtype_uint32();
    case Dt::U64: return a.aoti_torch_dtype_uint64();
    case Dt::Bool: return a.aoti_torch_dtype_bool();
    case Dt::C64: return a.aoti_torch_dtype_complex64();
    case Dt::C128: return a.aoti_torch_dtype_complex128();
  }
  return -1;
}

// Real floating dtypes (not complex).
inline bool is_float(Dt d) { return d == Dt::F32 || d == Dt::F64 || d == Dt::BF16 || d == Dt::F16; }
inline bool is_complex(Dt d) { return d == Dt::C64 || d == Dt::C128; }

// float -> IEEE half, rounded to nearest even; NaN stays NaN, what is too
// large becomes inf, what is too small a subnormal or zero.
inline uint16_t f16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (ax < 0x38800000u) {                                               // below 2^-14: subnormal
    float a;
    std::memcpy(&a, &ax, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t h = ((((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffffu) >> 13));
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | h);
}

inline double f16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * std::ldexp(m, -24);
  if (e == 31) return m ? std::nan("") : s * HUGE_VAL;
  return s * std::ldexp(1024 + m, e - 25);
}

// v as dtype d would hold it (floating dtypes round; others unchanged).
inline double rounded(double v, Dt d) {
  switch (d) {
    case Dt::F32:
    case Dt::C64: return static_cast<float>(v);
    case Dt::BF16: return bf16_value(bf16_bits(static_cast<float>(v)));
    case Dt::F16: return f16_value(f16_bits(static_cast<float>(v)));
    default: return v;
  }
}

namespace dtypes_detail {
template <typename T>
void append(std::vector<char>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}
}  // namespace dtypes_detail

// The storage bytes of dtype d holding `v`, one element per value. Complex
// elements are v + (-v)i (a suite that needs other imaginary parts encodes
// interleaved pairs as the matching real dtype). Integers: static_cast
// (unsigned ones through int64_t, so negatives wrap); bool: v != 0.
inline std::vector<char> encode(const std::vector<double>& v, Dt d) {
  using dtypes_detail::append;
  std::vector<char> out;
  out.reserve(v.size() * 16);
  for (double x : v) {
    switch (d) {
      case Dt::F32: append(out, static_cast<float>(x)); break;
      case Dt::F64: append(out, x); break;
      case Dt::BF16: append(out, bf16_bits(static_cast<float>(x))); break;
      case Dt::F16: append(out, f16_bits(static_cast<float>(x))); break;
      case Dt::I64: append(out, static_cast<int64_t>(x)); break;
      case Dt::I32: append(out, static_cast<int32_t>(x)); break;
      case Dt::I16: append(out, static_cast<int16_t>(x)); break;
      case Dt::I8: append(out, static_cast<int8_t>(x)); break;
      case Dt::U8: append(out, static_cast<uint8_t>(static_cast<int64_t>(x))); break;
      case Dt::U16: append(out, static_cast<uint16_t>(static_cast<int64_t>(x))); break;
      case Dt::U32: append(out, static_cast<uint32_t>(static_cast<int64_t>(x))); break;
      case Dt::U64: append(out, static_cast<uint64_t>(static_cast<int64_t>(x))); break;
      case Dt::Bool: append(out, static_cast<uint8_t>(x != 0 ? 1 : 0)); break;
      case Dt::C64:
        append(out, static_cast<float>(x));
        append(out, static_cast<float>(-x));
        break;
      case Dt::C128:
        append(out, x);
        append(out, -x);
        break;
    }
  }
  return out;
}

}  // namespace aotrun_shim_test
