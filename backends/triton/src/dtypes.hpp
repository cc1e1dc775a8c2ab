// The three spellings of a tensor element type the backend meets: DLPack's
// (aotrun's specs and tensors), Triton's enum (requests and responses) and
// the model configuration's "TYPE_FP32".
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

#include "triton_api.h"

namespace aotrun_triton {

// TRITONSERVER_TYPE_INVALID for a DLPack type Triton has no name for.
TRITONSERVER_DataType to_triton(DLDataType dtype) noexcept;
// Throws BackendError for a type aotrun cannot take (BYTES, INVALID).
DLDataType to_dlpack(TRITONSERVER_DataType dtype);
// "TYPE_FP32" <-> TRITONSERVER_TYPE_FP32; INVALID for an unknown name.
std::string config_name(TRITONSERVER_DataType dtype);
TRITONSERVER_DataType from_config_name(const std::string& name) noexcept;
// "FP32", as the HTTP/gRPC protocol names it (for messages).
const char* protocol_name(TRITONSERVER_DataType dtype) noexcept;
// Bytes per element; 0 for INVALID and BYTES.
uint64_t element_size(TRITONSERVER_DataType dtype) noexcept;

}  // namespace aotrun_triton
