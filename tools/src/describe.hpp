// Human- and JSON-facing names for the library's values: dtypes, devices,
// ABI versions, modes, shapes, durations and byte counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <aotrun/aotrun.h>

namespace aotrun::cli {

// DLPack's bool (kDLBool, code 6, one byte per element, since DLPack 0.8;
// Debian's dlpack.h 0.6 has no enumerator for it): what .pt2 bool tensors are.
constexpr uint8_t kDtypeCodeBool = 6;
inline bool is_bool(DLDataType d) { return d.code == kDtypeCodeBool && d.bits == 8 && d.lanes == 1; }

// "float32", "int64", "bfloat16", "bool", "float32x4" for vector lanes, or
// "dtype(code=C,bits=B,lanes=L)" for codes DLPack does not name.
std::string dtype_name(DLDataType dtype);
// Bytes per element, 0 for sub-byte or unknown widths.
size_t dtype_size(DLDataType dtype);

// "cpu", "cuda", "cuda_host", ... ; "device(N)" for unknown types.
std::string device_type_name(DLDeviceType type);
// "cpu:0"
std::string device_name(DLDevice device);

// (major << 16) | minor -> "major.minor"
std::string abi_version_string(uint32_t version);

// "threaded" | "single_threaded" | "graph" -> mode; nullopt otherwise.
std::optional<aotrun_mode> parse_mode(const std::string& text);

// Text form of a spec shape: "[batch, 4]"; a dynamic leading dimension is
// "batch", any other dynamic dimension "?".
std::string spec_shape_text(const std::vector<int64_t>& shape);
// Text form of a concrete shape: "[2, 4]".
std::string shape_text(const std::vector<int64_t>& shape);

// "1.234 ms", "56.7 us", "890 ns", "2.50 s"
std::string duration_text(double nanoseconds);
// "1.5 KiB", "12 B"
std::string bytes_text(uint64_t bytes);

}  // namespace aotrun::cli
