// aotrun_status and the exception barrier of the C API: every entry point
// runs its body through guarded(), so no C++ exception crosses the boundary.
#pragma once

#include <new>
#include <string>

#include <aotrun/aotrun.h>

#include "util/error.hpp"

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
  } catch (const Error& e) {
    return make_status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return oom_status();
  } catch (const std::exception& e) {
    return make_status(Code::Internal, std::string("internal error: ") + e.what());
  } catch (...) {
    return make_status(Code::Internal, "internal error: unknown exception");
  }
}

// Throws Error(InvalidArgument, "<what> is NULL") for a NULL pointer.
inline void require(const void* p, const char* what) {
  if (p == nullptr) fail(Code::InvalidArgument, std::string(what) + " is NULL");
}

}  // namespace aotrun::capi
