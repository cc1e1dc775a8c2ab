// Reading struct_size-versioned args structs and writing out-structs, exactly
// as package_abi.h prescribes.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include <aotrun/package_abi.h>

#include "aotrun/sdk/error.hpp"

namespace aotrun {
namespace sdk {

// Copies min(p->struct_size, sizeof(T)) bytes into a zeroed T: fields the
// caller does not know keep their zero default. A struct_size below the
// struct's ABI 1.0 size cannot come from a correct caller and is rejected.
template <class T>
T read_args(const T* p, size_t min_size, const char* what) {
  if (p == nullptr) fail_invalid(std::string(what) + " is NULL");
  if (p->struct_size < min_size) {
    fail_invalid(std::string(what) + ".struct_size is " + std::to_string(p->struct_size) +
                 ", smaller than its ABI 1.0 size " + std::to_string(min_size));
  }
  T v;
  std::memset(&v, 0, sizeof(v));
  std::memcpy(&v, p, p->struct_size < sizeof(T) ? p->struct_size : sizeof(T));
  return v;
}

// Writes `full` into the caller's out-struct: only whole fields that fit in
// the caller's struct_size (its capacity), then stores back the number of
// bytes filled. The caller zeroed the struct, so unfilled fields read as 0.
inline void write_tensor_spec(const aotrun_pkg_tensor_spec& full, aotrun_pkg_tensor_spec* out) {
  if (out == nullptr) fail_invalid("tensor spec out-pointer is NULL");
  const size_t capacity = out->struct_size;
  if (capacity < sizeof(size_t)) {
    fail_invalid("aotrun_pkg_tensor_spec.struct_size is " + std::to_string(capacity) +
                 ": set it to the capacity of the struct before the call");
  }
  struct Field {
    size_t offset;
    size_t size;
  };
  static constexpr Field kFields[] = {
      {offsetof(aotrun_pkg_tensor_spec, name), sizeof(full.name)},
      {offsetof(aotrun_pkg_tensor_spec, dtype), sizeof(full.dtype)},
      {offsetof(aotrun_pkg_tensor_spec, ndim), sizeof(full.ndim)},
      {offsetof(aotrun_pkg_tensor_spec, shape), sizeof(full.shape)},
  };
  auto* dst = reinterpret_cast<unsigned char*>(out);
  const auto* src = reinterpret_cast<const unsigned char*>(&full);
  size_t filled = sizeof(size_t);
  for (const Field& f : kFields) {
    if (f.offset + f.size > capacity) break;
    std::memcpy(dst + f.offset, src + f.offset, f.size);
    filled = f.offset + f.size;
  }
  out->struct_size = filled;
}

}  // namespace sdk
}  // namespace aotrun
