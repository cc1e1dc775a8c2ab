// Dtype, device and layout codes (PyTorch's c10 enumerations, as the shim's
// getters return them) and per-dtype element access used by copies and kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace aotrun::shim {

// c10::ScalarType values.
enum Dtype : int32_t {
  kUInt8 = 0,
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kFloat16 = 5,
  kFloat32 = 6,
  kFloat64 = 7,
  kComplex32 = 8,
  kComplex64 = 9,
  kComplex128 = 10,
  kBool = 11,
  kBFloat16 = 15,
  kFloat8E5M2 = 23,
  kFloat8E4M3FN = 24,
  kFloat8E5M2FNUZ = 25,
  kFloat8E4M3FNUZ = 26,
  kUInt16 = 27,
  kUInt32 = 28,
  kUInt64 = 29,
};

// c10::DeviceType values.
enum DeviceType : int32_t {
  kCPU = 0,
  kCUDA = 1,
  kXPU = 12,
  kMPS = 13,
  kMeta = 14,
  kPrivateUse1 = 20,
};

// c10::Layout values.
enum Layout : int32_t {
  kStrided = 0,
  kSparseCoo = 1,
  kSparseCsr = 2,
  kMkldnn = 3,
  kSparseCsc = 4,
  kSparseBsr = 5,
  kSparseBsc = 6,
  kJagged = 7,
};

// c10::MemoryFormat values.
enum MemoryFormat : int32_t {
  kContiguousFormat = 0,
  kPreserveFormat = 1,
  kChannelsLast = 2,
  kChannelsLast3d = 3,
};

// Bytes per element, or 0 for a code this shim does not know.
size_t element_size(int32_t dtype);
// PyTorch's name of a dtype code ("float32"), or "dtype <n>".
const char* dtype_name(int32_t dtype);
bool is_floating(int32_t dtype);
// Dtypes whose elements copy_/clone/cumsum can convert between.
bool is_convertible(int32_t dtype);

// bfloat16 and float16 <-> float (round to nearest even, NaN kept).
inline float bf16_to_float(uint16_t v) {
  uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

// One element at `p` of `dtype` as double / written from double (value
// conversions as PyTorch's copy_ does them: truncation toward zero for
// integers, != 0 for bool). Only for is_convertible dtypes.
double load_as_double(const void* p, int32_t dtype);
void store_from_double(void* p, int32_t dtype, double v);

}  // namespace aotrun::shim
