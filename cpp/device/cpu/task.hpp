// One unit of work on a CPU stream: a package's launched function, or an
// internal completion callback of the runner.
#pragma once

#include <functional>
#include <string>

#include <aotrun/package_abi.h>

#include "base/guard.hpp"
#include "base/error.hpp"

namespace aotrun::cpu {

struct Task {
  aotrun_pkg_host_fn fn = nullptr;
  void* ctx = nullptr;
  aotrun_pkg_ctx_destroy_fn destroy = nullptr;
  // Where the message of a failed fn comes from (the package's
  // aotrun_pkg_get_last_error, read on the thread that ran fn).
  aotrun_pkg_get_last_error_fn last_error = nullptr;
  // The package's name for messages; owned by the host context, which lives
  // as long as last_error's package.
  const std::string* package = nullptr;
  // Internal work (runner bookkeeping); used instead of fn when set.
  std::function<void()> internal;

  // Runs the package function and turns a failure, or a throw, into a
  // Status. Runs on worker threads and inside graph replays: never throws.
  Status execute() const noexcept {
    int32_t rc = AOTRUN_PKG_OK;
    Status st = guard_package_call(
        package_name(), "launched function", [this] { return fn(ctx); }, &rc);
    if (!st.ok() || rc == AOTRUN_PKG_OK) return st;
    const Code code = rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::InvalidArgument
                      : rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY  ? Code::OutOfMemory
                                                            : Code::Package;
    const char* msg = nullptr;
    int32_t ignored = 0;
    st = guard_package_call(
        package_name(), "get_last_error",
        [&] {
          msg = last_error ? last_error() : nullptr;
          return AOTRUN_PKG_OK;
        },
        &ignored);
    if (!st.ok()) return st;
    st.code = code;
    try {
      st.message = (msg && *msg) ? msg : "launched package work failed with status " + std::to_string(rc);
    } catch (...) {
      // No memory for the text: the code still tells.
    }
    return st;
  }

  // Releases the context (exactly once per launch, package_abi.h). A throw
  // from the package's destroy is reported like a failure of the work.
  Status release() const noexcept {
    if (destroy == nullptr) return Status::Ok();
    int32_t ignored = 0;
    return guard_package_call(
        package_name(), "launch context destroy",
        [this] {
          destroy(ctx);
          return AOTRUN_PKG_OK;
        },
        &ignored);
  }

 private:
  const std::string& package_name() const noexcept {
    static const std::string kHost = "(host)";
    return package != nullptr ? *package : kHost;
  }
};

}  // namespace aotrun::cpu
