// Error type of the C++ core. The C API turns it into an aotrun_status; no
// other exception type is expected to reach the boundary.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace aotrun {

// Mirrors aotrun_code of the C API (same numbers), so the C layer can cast.
enum class Code : int32_t {
  Ok = 0,
  InvalidArgument = 1,
  NotFound = 2,
  LoadFailed = 3,
  AbiMismatch = 4,
  MissingSymbol = 5,
  Integrity = 6,
  BadPackage = 7,
  Unsupported = 8,
  Package = 9,
  OutOfMemory = 10,
  WouldBlock = 11,
  Timeout = 12,
  CaptureUnsupported = 13,
  CaptureInvalidated = 14,
  Device = 15,
  Internal = 16,
};

const char* code_name(Code code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const noexcept { return code_; }

 private:
  Code code_;
};

// A failure carried as a value where throwing would cost too much (hot path,
// worker threads).
struct Status {
  Code code = Code::Ok;
  std::string message;
  bool ok() const noexcept { return code == Code::Ok; }
  static Status Ok() { return {}; }
};

[[noreturn]] inline void fail(Code code, const std::string& message) { throw Error(code, message); }

}  // namespace aotrun
