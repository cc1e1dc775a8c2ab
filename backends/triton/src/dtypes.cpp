#include "dtypes.hpp"

#include "errors.hpp"

namespace aotrun_triton {
namespace {

// kDLBool (DLPack 0.8) as aotrun spells it; Debian's dlpack.h predates it.
constexpr uint8_t kBoolCode = 6;

struct Row {
  TRITONSERVER_DataType triton;
  const char* name;  // protocol name; the config name is "TYPE_" + name
  uint8_t code;      // DLDataTypeCode
  uint8_t bits;
};

// BYTES (variable-length strings) has no DLPack form and is left out.
constexpr Row kRows[] = {
    {TRITONSERVER_TYPE_BOOL, "BOOL", kBoolCode, 8},    {TRITONSERVER_TYPE_UINT8, "UINT8", kDLUInt, 8},
    {TRITONSERVER_TYPE_UINT16, "UINT16", kDLUInt, 16}, {TRITONSERVER_TYPE_UINT32, "UINT32", kDLUInt, 32},
    {TRITONSERVER_TYPE_UINT64, "UINT64", kDLUInt, 64}, {TRITONSERVER_TYPE_INT8, "INT8", kDLInt, 8},
    {TRITONSERVER_TYPE_INT16, "INT16", kDLInt, 16},    {TRITONSERVER_TYPE_INT32, "INT32", kDLInt, 32},
    {TRITONSERVER_TYPE_INT64, "INT64", kDLInt, 64},    {TRITONSERVER_TYPE_FP16, "FP16", kDLFloat, 16},
    {TRITONSERVER_TYPE_FP32, "FP32", kDLFloat, 32},    {TRITONSERVER_TYPE_FP64, "FP64", kDLFloat, 64},
    {TRITONSERVER_TYPE_BF16, "BF16", kDLBfloat, 16},
};

const Row* find(TRITONSERVER_DataType t) noexcept {
  for (const Row& r : kRows)
    if (r.triton == t) return &r;
  return nullptr;
}

}  // namespace

TRITONSERVER_DataType to_triton(DLDataType dtype) noexcept {
  if (dtype.lanes != 1) return TRITONSERVER_TYPE_INVALID;
  for (const Row& r : kRows)
    if (r.code == dtype.code && r.bits == dtype.bits) return r.triton;
  return TRITONSERVER_TYPE_INVALID;
}

DLDataType to_dlpack(TRITONSERVER_DataType dtype) {
  const Row* r = find(dtype);
  if (r == nullptr) invalid(std::string("data type ") + protocol_name(dtype) + " is not supported by aotrun");
  return DLDataType{r->code, r->bits, 1};
}

std::string config_name(TRITONSERVER_DataType dtype) {
  const Row* r = find(dtype);
  return r == nullptr ? "TYPE_INVALID" : std::string("TYPE_") + r->name;
}

TRITONSERVER_DataType from_config_name(const std::string& name) noexcept {
  for (const Row& r : kRows)
    if (name == std::string("TYPE_") + r.name) return r.triton;
  return TRITONSERVER_TYPE_INVALID;
}

const char* protocol_name(TRITONSERVER_DataType dtype) noexcept {
  if (dtype == TRITONSERVER_TYPE_BYTES) return "BYTES";
  const Row* r = find(dtype);
  return r == nullptr ? "INVALID" : r->name;
}

uint64_t element_size(TRITONSERVER_DataType dtype) noexcept {
  const Row* r = find(dtype);
  return r == nullptr ? 0 : r->bits / 8;
}

}  // namespace aotrun_triton
