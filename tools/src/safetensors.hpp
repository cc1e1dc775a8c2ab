// Minimal reader of .safetensors files (reference data for `aotrun compat`):
// an 8-byte little-endian header length, a JSON header, then the data.
#pragma once

#include <string>
#include <vector>

#include "tensor.hpp"

namespace aotrun::cli {

// Every tensor of `path`, in data-offset order, named by its key. dtypes:
// F64 F32 F16 BF16 I64 I32 I16 I8 U8 U16 U32 U64, and BOOL read as uint8. Throws Failure:
// NOT_FOUND (cannot open), INVALID_ARGUMENT (malformed, unsupported dtype).
std::vector<HostTensor> read_safetensors(const std::string& path);

}  // namespace aotrun::cli
