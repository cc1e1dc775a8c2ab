// Errors inside a package and the thread-local "last error" that
// aotrun_pkg_get_last_error() returns.
//
// Inside the SDK and in model code, failures are C++ exceptions; every
// exported function and every launched piece of work turns them into a status
// at the edge (guarded()). Nothing here allocates on the error-reporting path:
// the message buffer is a fixed thread_local array, so a package registers no
// thread-local destructors (which would pin it in memory after dlclose).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "aotrun/sdk/config.hpp"

namespace aotrun {
namespace sdk {

// A failure with a package status code (AOTRUN_PKG_ERR_* or a status a host
// service returned, passed through unchanged).
class Error : public std::exception {
 public:
  Error(int32_t status, std::string message) : status_(status), message_(std::move(message)) {}
  int32_t status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  int32_t status_;
  std::string message_;
};

[[noreturn]] inline void fail(int32_t status, std::string message) { throw Error(status, std::move(message)); }
[[noreturn]] inline void fail_invalid(std::string message) {
  throw Error(AOTRUN_PKG_ERR_INVALID_ARGUMENT, std::move(message));
}

// Readable name of a package status, for messages.
inline const char* status_name(int32_t status) noexcept {
  switch (status) {
    case AOTRUN_PKG_OK: return "OK";
    case AOTRUN_PKG_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case AOTRUN_PKG_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case AOTRUN_PKG_ERR_RUNTIME: return "RUNTIME";
    case AOTRUN_PKG_ERR_UNSUPPORTED: return "UNSUPPORTED";
    case AOTRUN_PKG_ERR_INTERNAL: return "INTERNAL";
    case AOTRUN_PKG_NOT_READY: return "NOT_READY";
    case AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED: return "CAPTURE_UNSUPPORTED";
    case AOTRUN_PKG_ERR_CAPTURE_INVALIDATED: return "CAPTURE_INVALIDATED";
    default: return "UNKNOWN";
  }
}

namespace detail {

constexpr size_t kLastErrorCapacity = 1024;

// One buffer per thread and per package (hidden: two packages in one process
// never share it). Constant-initialised, so access needs no guard.
AOTRUN_SDK_HIDDEN inline char* last_error_buffer() noexcept {
  thread_local char buffer[kLastErrorCapacity] = {0};
  return buffer;
}

}  // namespace detail

inline const char* last_error() noexcept { return detail::last_error_buffer(); }

inline void clear_last_error() noexcept { detail::last_error_buffer()[0] = '\0'; }

// printf-style; truncates (with "...") instead of allocating.
__attribute__((format(printf, 1, 2))) inline void set_last_error(const char* format, ...) noexcept {
  char* buffer = detail::last_error_buffer();
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(buffer, detail::kLastErrorCapacity, format, ap);
  va_end(ap);
  if (n < 0) {
    std::snprintf(buffer, detail::kLastErrorCapacity, "(unformattable error message)");
  } else if (static_cast<size_t>(n) >= detail::kLastErrorCapacity) {
    std::memcpy(buffer + detail::kLastErrorCapacity - 4, "...", 4);
  }
}

// Runs f (returning void or int32_t status) and converts every exception to a
// status + last-error message. `where` prefixes messages of foreign exceptions
// so the user learns which step failed. Clears the last error first: after a
// successful call aotrun_pkg_get_last_error() returns "".
//   Error                 -> its status (0 is turned into INTERNAL)
//   std::bad_alloc        -> OUT_OF_MEMORY
//   other std::exception  -> RUNTIME (the model code failed)
//   anything else         -> INTERNAL
template <class F>
int32_t guarded(const char* where, F&& f) noexcept {
  clear_last_error();
  try {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      return AOTRUN_PKG_OK;
    } else {
      return static_cast<int32_t>(f());
    }
  } catch (const Error& e) {
    set_last_error("%s", e.what());
    return e.status() != AOTRUN_PKG_OK ? e.status() : AOTRUN_PKG_ERR_INTERNAL;
  } catch (const std::bad_alloc&) {
    set_last_error("%s: out of memory", where);
    return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error("%s: %s", where, e.what());
    return AOTRUN_PKG_ERR_RUNTIME;
  } catch (...) {
    set_last_error("%s: unknown exception", where);
    return AOTRUN_PKG_ERR_INTERNAL;
  }
}

}  // namespace sdk
}  // namespace aotrun
