// The dtypes of the .safetensors format aotrun reads, by the format's names:
// one table for the package layer's weights files (package/safetensors.cpp)
// and the CLI's reference files (tools/src/safetensors.cpp), so both accept
// the same files. Inline: the CLI includes it without linking a layer.
#pragma once

#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

namespace aotrun {

// "F32" -> float32, ...; BOOL reads as uint8 (one byte per element). False
// for a name not in the table (F8 kinds, complex).
inline bool safetensors_dtype(const std::string& name, DLDataType* out) {
  struct Entry {
    const char* name;
    uint8_t code;
    uint8_t bits;
  };
  static constexpr Entry kTable[] = {
      {"F64", kDLFloat, 64}, {"F32", kDLFloat, 32}, {"F16", kDLFloat, 16}, {"BF16", kDLBfloat, 16},
      {"I64", kDLInt, 64},   {"I32", kDLInt, 32},   {"I16", kDLInt, 16},   {"I8", kDLInt, 8},
      {"U64", kDLUInt, 64},  {"U32", kDLUInt, 32},  {"U16", kDLUInt, 16},  {"U8", kDLUInt, 8},
      {"BOOL", kDLUInt, 8},
  };
  for (const Entry& e : kTable) {
    if (name == e.name) {
      *out = DLDataType{e.code, e.bits, 1};
      return true;
    }
  }
  return false;
}

}  // namespace aotrun
