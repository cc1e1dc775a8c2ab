// Filling a caller's struct that starts with struct_size: the C API's one
// rule for structs that grow by appending fields (ABI.md).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.hpp"

namespace aotrun::capi {

// Copies min(caller's struct_size, ours) bytes of `full` into `out`, keeping
// the caller's struct_size, so an older caller's smaller struct is never
// overrun. INVALID_ARGUMENT when struct_size is not set; `name` (the
// parameter's) prefixes that message.
template <typename T>
void copy_out(const T& full, T* out, const char* name = nullptr) {
  if (out->struct_size < sizeof(size_t)) {
    fail(Code::InvalidArgument,
         (name != nullptr ? std::string(name) + "->" : std::string()) + "struct_size is not set");
  }
  const size_t caller = out->struct_size;
  std::memcpy(static_cast<void*>(out), &full, std::min(caller, sizeof(T)));
  out->struct_size = caller;
}

}  // namespace aotrun::capi
