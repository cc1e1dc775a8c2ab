#include "base/dltensor.hpp"

namespace aotrun {

std::string dtype_name(DLDataType t) {
  const char* base = nullptr;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLOpaqueHandle: base = "opaque"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case 6: base = "bool"; break;  // kDLBool (DLPack 0.8; this dlpack.h may predate it)
    default: break;
  }
  const std::string lanes = t.lanes != 1 ? "x" + std::to_string(t.lanes) : std::string();
  // An unknown code is named as the number it is, not glued to the bits.
  if (base == nullptr)
    return "code " + std::to_string(t.code) + " (unknown, " + std::to_string(t.bits) + " bits" +
           (t.lanes != 1 ? ", " + std::to_string(t.lanes) + " lanes)" : std::string(")"));
  return base + std::to_string(t.bits) + lanes;
}

std::string shape_string(const int64_t* shape, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape ? shape[i] : 0);
  return s + "]";
}

}  // namespace aotrun
