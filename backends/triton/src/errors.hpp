// Errors at the Triton boundary: every failure inside the backend is a
// BackendError (a Triton code and a message); guarded() turns it, an
// aotrun error or anything else thrown into a TRITONSERVER_Error, so no
// exception ever reaches the server.
#pragma once

#include <aotrun/aotrun.hpp>

#include <stdexcept>
#include <string>

#include "triton_api.h"

namespace aotrun_triton {

class BackendError : public std::runtime_error {
 public:
  BackendError(TRITONSERVER_Error_Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  TRITONSERVER_Error_Code code() const noexcept { return code_; }

 private:
  TRITONSERVER_Error_Code code_;
};

// A user's mistake in a request or the model configuration.
[[noreturn]] inline void invalid(const std::string& message) {
  throw BackendError(TRITONSERVER_ERROR_INVALID_ARG, message);
}

// The Triton code for an aotrun code: argument errors stay the caller's,
// a full in-flight window is "try again", the rest is the server's problem.
TRITONSERVER_Error_Code triton_code(aotrun_code code) noexcept;

// "aotrun: CODE: message", as users see it in the Triton response.
std::string aotrun_message(const aotrun::cxx::Error& e);

// A new TRITONSERVER_Error for the exception being handled (call inside a
// catch block only).
TRITONSERVER_Error* current_exception_to_triton() noexcept;

// Takes ownership of a Triton error returned by the server: throws it as a
// BackendError (prefixed with `what`), or returns for nullptr.
void check(TRITONSERVER_Error* error, const char* what);

// Runs `fn` and converts whatever it throws; nullptr on success.
template <typename F>
TRITONSERVER_Error* guarded(F&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (...) {
    return current_exception_to_triton();
  }
}

// Logs through the server's log (never throws).
void log(TRITONSERVER_LogLevel level, const std::string& message) noexcept;

}  // namespace aotrun_triton
