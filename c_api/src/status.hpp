// aotrun_status and the exception barrier of the C API: every entry point
// runs its body through guarded(), so no C++ exception crosses the boundary.
// What was caught is sorted by the one classifier (base/guard.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include <aotrun/aotrun.h>

#include "base/error.hpp"
#include "base/guard.hpp"

struct aotrun_status {
  aotrun_code code;
  std::string message;
};

namespace aotrun::capi {

// Never returns NULL for a failure: if the status itself cannot be
// allocated, a static out-of-memory status is returned (free ignores it).
aotrun_status* make_status(Code code, const std::string& message) noexcept;
aotrun_status* oom_status() noexcept;

template <typename F>
aotrun_status* guarded(F&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    // Sorted by base/guard.hpp's caught(), worded for the C API.
    const Caught c = caught();
    switch (c.kind) {
      case Caught::Kind::Error: return make_status(c.code, c.what);
      case Caught::Kind::OutOfMemory: return oom_status();
      case Caught::Kind::Exception: return make_status(Code::Internal, "internal error: " + c.what);
      default: return make_status(Code::Internal, "internal error: unknown exception");
    }
  }
}

// The value a C caller passed for an enum parameter, as the int it is. A C
// enum may carry any int; read through its C++ type, a negative value would
// print as 4294967295 (the enums' underlying type is unsigned here) and
// loading a value outside the enum's range is undefined. Taken by reference
// and copied as bytes, so the enum is never loaded as an enum.
template <typename E>
int32_t enum_value(const E& e) noexcept {
  static_assert(sizeof(E) == sizeof(int32_t), "C API enums are 32 bits");
  int32_t v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

// Throws Error(InvalidArgument, "<what> is NULL") for a NULL pointer.
inline void require(const void* p, const char* what) {
  if (p == nullptr) fail(Code::InvalidArgument, std::string(what) + " is NULL");
}

}  // namespace aotrun::capi
