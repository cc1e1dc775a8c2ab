// DLPack data types: constructors for the common ones, comparison and names.
#pragma once

#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

namespace aotrun {
namespace sdk {
namespace dtype {

constexpr DLDataType make(uint8_t code, uint8_t bits, uint16_t lanes = 1) { return DLDataType{code, bits, lanes}; }
constexpr DLDataType float16() { return make(kDLFloat, 16); }
constexpr DLDataType float32() { return make(kDLFloat, 32); }
constexpr DLDataType float64() { return make(kDLFloat, 64); }
constexpr DLDataType bfloat16() { return make(kDLBfloat, 16); }
constexpr DLDataType int8() { return make(kDLInt, 8); }
constexpr DLDataType int32() { return make(kDLInt, 32); }
constexpr DLDataType int64() { return make(kDLInt, 64); }
constexpr DLDataType uint8() { return make(kDLUInt, 8); }
constexpr DLDataType boolean() { return make(kDLUInt, 8); }

}  // namespace dtype

constexpr bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// Bytes of one element (lanes included), rounded up to whole bytes.
constexpr size_t dtype_bytes(DLDataType t) { return (static_cast<size_t>(t.bits) * t.lanes + 7) / 8; }

// "float32", "int64", "bfloat16", "float32x4"; an unknown code as
// "code 7 (unknown, 32 bits)".
inline std::string dtype_name(DLDataType t) {
  std::string base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case 6: base = "bool"; break;  // kDLBool (DLPack 0.8)
    default:
      return "code " + std::to_string(t.code) + " (unknown, " + std::to_string(t.bits) + " bits" +
             (t.lanes != 1 ? ", " + std::to_string(t.lanes) + " lanes)" : std::string(")"));
  }
  base += std::to_string(t.bits);
  if (t.lanes != 1) base += "x" + std::to_string(t.lanes);
  return base;
}

}  // namespace sdk
}  // namespace aotrun
