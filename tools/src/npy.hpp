// Minimal reader and writer for NumPy .npy files (format versions 1.0, 2.0
// and 3.0): little-endian, C-order arrays of float32, float64, int8, int16,
// int32, int64 and uint8. Anything else is rejected with a message that says
// what the file holds.
#pragma once

#include <string>

#include "tensor.hpp"

namespace aotrun::cli {

// Reads `path` into a tensor named `name`. Throws Failure: NOT_FOUND (cannot
// open), INVALID_ARGUMENT (not .npy, unsupported dtype, byte order or
// Fortran order, truncated data).
HostTensor read_npy(const std::string& path, const std::string& name);

// Writes `tensor` to `path` (format 1.0, or 2.0 when the header needs it).
// Throws Failure: UNSUPPORTED (dtype), IO_ERROR (cannot write).
void write_npy(const std::string& path, const HostTensor& tensor);

// The .npy type string for a dtype ("<f4"), or "" when unsupported.
std::string npy_descr(DLDataType dtype);

}  // namespace aotrun::cli
