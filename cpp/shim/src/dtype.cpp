#include "dtype.hpp"

#include <cmath>
#include <cstdio>

namespace aotrun::shim {

size_t element_size(int32_t dtype) {
  switch (dtype) {
    case kUInt8:
    case kInt8:
    case kBool:
    case kFloat8E5M2:
    case kFloat8E4M3FN:
    case kFloat8E5M2FNUZ:
    case kFloat8E4M3FNUZ: return 1;
    case kInt16:
    case kUInt16:
    case kFloat16:
    case kBFloat16: return 2;
    case kInt32:
    case kUInt32:
    case kFloat32:
    case kComplex32: return 4;
    case kInt64:
    case kUInt64:
    case kFloat64:
    case kComplex64: return 8;
    case kComplex128: return 16;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case kUInt8: return "uint8";
    case kInt8: return "int8";
    case kInt16: return "int16";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kFloat16: return "float16";
    case kFloat32: return "float32";
    case kFloat64: return "float64";
    case kComplex32: return "complex32";
    case kComplex64: return "complex64";
    case kComplex128: return "complex128";
    case kBool: return "bool";
    case kBFloat16: return "bfloat16";
    case kFloat8E5M2: return "float8_e5m2";
    case kFloat8E4M3FN: return "float8_e4m3fn";
    case kFloat8E5M2FNUZ: return "float8_e5m2fnuz";
    case kFloat8E4M3FNUZ: return "float8_e4m3fnuz";
    case kUInt16: return "uint16";
    case kUInt32: return "uint32";
    case kUInt64: return "uint64";
    default: {
      static thread_local char buf[32];
      std::snprintf(buf, sizeof buf, "dtype %d", static_cast<int>(dtype));
      return buf;
    }
  }
}

bool is_floating(int32_t dtype) {
  return dtype == kFloat16 || dtype == kFloat32 || dtype == kFloat64 || dtype == kBFloat16;
}

bool is_convertible(int32_t dtype) {
  switch (dtype) {
    case kUInt8:
    case kInt8:
    case kInt16:
    case kInt32:
    case kInt64:
    case kUInt16:
    case kUInt32:
    case kUInt64:
    case kFloat16:
    case kFloat32:
    case kFloat64:
    case kBool:
    case kBFloat16: return true;
    default: return false;
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      u = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow (rounds to inf)
  if (abs < 0x38800000u) {                                               // subnormal or zero in half
    float a;
    std::memcpy(&a, &abs, sizeof a);
    // Scale so that the half subnormal unit (2^-24) becomes 1, round to nearest even.
    const float scaled = a * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  uint32_t r = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even at bit 13
  r -= 0x38000000u;                                // rebias exponent 127 -> 15
  return static_cast<uint16_t>(sign | (r >> 13));
}

double load_as_double(const void* p, int32_t dtype) {
  switch (dtype) {
    case kUInt8: return *static_cast<const uint8_t*>(p);
    case kInt8: return *static_cast<const int8_t*>(p);
    case kInt16: return *static_cast<const int16_t*>(p);
    case kInt32: return *static_cast<const int32_t*>(p);
    case kInt64: return static_cast<double>(*static_cast<const int64_t*>(p));
    case kUInt16: return *static_cast<const uint16_t*>(p);
    case kUInt32: return *static_cast<const uint32_t*>(p);
    case kUInt64: return static_cast<double>(*static_cast<const uint64_t*>(p));
    case kFloat16: return half_to_float(*static_cast<const uint16_t*>(p));
    case kBFloat16: return bf16_to_float(*static_cast<const uint16_t*>(p));
    case kFloat32: return *static_cast<const float*>(p);
    case kFloat64: return *static_cast<const double*>(p);
    case kBool: return *static_cast<const uint8_t*>(p) != 0 ? 1.0 : 0.0;
    default: return 0.0;
  }
}

namespace {
template <typename T>
T to_int(double v) {
  if (std::isnan(v)) return 0;
  return static_cast<T>(static_cast<int64_t>(v));
}
}  // namespace

void store_from_double(void* p, int32_t dtype, double v) {
  switch (dtype) {
    case kUInt8: *static_cast<uint8_t*>(p) = to_int<uint8_t>(v); break;
    case kInt8: *static_cast<int8_t*>(p) = to_int<int8_t>(v); break;
    case kInt16: *static_cast<int16_t*>(p) = to_int<int16_t>(v); break;
    case kInt32: *static_cast<int32_t*>(p) = to_int<int32_t>(v); break;
    case kInt64: *static_cast<int64_t*>(p) = to_int<int64_t>(v); break;
    case kUInt16: *static_cast<uint16_t*>(p) = to_int<uint16_t>(v); break;
    case kUInt32: *static_cast<uint32_t*>(p) = to_int<uint32_t>(v); break;
    case kUInt64: *static_cast<uint64_t*>(p) = std::isnan(v) || v < 0 ? 0 : static_cast<uint64_t>(v); break;
    case kFloat16: *static_cast<uint16_t*>(p) = float_to_half(static_cast<float>(v)); break;
    case kBFloat16: *static_cast<uint16_t*>(p) = float_to_bf16(static_cast<float>(v)); break;
    case kFloat32: *static_cast<float*>(p) = static_cast<float>(v); break;
    case kFloat64: *static_cast<double*>(p) = v; break;
    case kBool: *static_cast<uint8_t*>(p) = v != 0.0 ? 1 : 0; break;
    default: break;
  }
}

}  // namespace aotrun::shim
