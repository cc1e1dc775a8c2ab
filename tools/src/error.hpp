// Errors of the aotrun command line and how they become exit codes.
//
// Every failure is thrown as one of two exceptions and caught once in main():
//   UsageError  — the command line itself is wrong (unknown option, missing
//                 value, bad number). Exit code 2.
//   Failure     — the command line was fine but the work failed: the package,
//                 the runtime, or a file the user named. Exit code 1, printed
//                 as "aotrun: <CODE_NAME>: <message>".
#pragma once

#include <stdexcept>
#include <string>

#include <aotrun/aotrun.h>

namespace aotrun::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

class UsageError : public std::runtime_error {
 public:
  // `command` is the subcommand whose --help the message points to ("" = tool).
  UsageError(std::string command, const std::string& message)
      : std::runtime_error(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

class Failure : public std::runtime_error {
 public:
  // `code_name` is an aotrun_code_name() spelling, or a CLI-only name such as
  // "IO_ERROR" for failures that have no library code.
  Failure(std::string code_name, const std::string& message)
      : std::runtime_error(message), code_name_(std::move(code_name)) {}
  Failure(aotrun_code code, const std::string& message) : Failure(aotrun_code_name(code), message) {}
  const std::string& code_name() const { return code_name_; }

 private:
  std::string code_name_;
};

// Takes ownership of `status`: does nothing for NULL, else frees it and throws
// Failure with its code and message. `context` (may be empty) is prefixed to
// the message when the library's message alone would not say what failed.
void check(aotrun_status* status, const std::string& context = "");

}  // namespace aotrun::cli
