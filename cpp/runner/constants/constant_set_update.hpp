// Building the constants of a new set from an update: the caller's named
// tensors (copied, so the caller may free them when the call returns) or a
// .safetensors file (mapped, never copied), checked against the package's
// constant list, merged with the constants of the active set that the update
// does not name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "package/package.hpp"
#include "runner/constants/constant_set.hpp"

namespace aotrun {

// One replacement: a constant's name and its new value (host memory).
struct NamedTensor {
  const char* name;
  const DLTensor* tensor;
};

// Every constant the package lets a caller update must be named.
constexpr uint32_t kUpdateFull = 1u;

// The entries and storage of the set that follows `active` after the update
// (generation not set, no container yet). Throws Error(InvalidArgument)
// naming the offending constant: unknown or folded name, a name given twice,
// dtype, shape or byte size unlike the package's, memory the host cannot
// read, non-contiguous strides, unknown flag bits, and with kUpdateFull the
// constants left out; OUT_OF_MEMORY when a copy cannot be allocated. Nothing
// changes on failure.
ConstantSet build_update(const Package& pkg, const ConstantSet& active, const NamedTensor* tensors, size_t count,
                         uint32_t flags, ConstantStorage shared = nullptr);

// The same from a .safetensors file: every tensor in it is a replacement.
// The file's own errors are SafetensorsFile::open's (NOT_FOUND, LOAD_FAILED,
// BAD_PACKAGE naming the file).
ConstantSet build_update_from_file(const Package& pkg, const ConstantSet& active, const std::string& path,
                                   uint32_t flags);

}  // namespace aotrun
