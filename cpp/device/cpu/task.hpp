// One unit of work on a CPU stream: a package's launched function, or an
// internal completion callback of the runner.
#pragma once

#include <functional>
#include <string>

#include <aotrun/package_abi.h>

#include "base/guard.hpp"
#include "base/error.hpp"

namespace aotrun::cpu {

// A package's launched function and its context.
struct PackageWork {
  aotrun_pkg_host_fn fn = nullptr;
  void* ctx = nullptr;
  aotrun_pkg_ctx_destroy_fn destroy = nullptr;
  // Where the message of a failed fn comes from (the package's
  // aotrun_pkg_get_last_error, read on the thread that ran fn).
  aotrun_pkg_get_last_error_fn last_error = nullptr;
  // The package's name for messages; owned by the host context, which lives
  // as long as last_error's package.
  const std::string* package = nullptr;

  // Runs the package function and turns a failure, or a throw, into a
  // Status. Runs on worker threads and inside graph replays: never throws.
  Status execute() const noexcept {
    int32_t rc = AOTRUN_PKG_OK;
    Status st = guard_package_call(
        package_name(), "launched function", [this] { return fn(ctx); }, &rc);
    if (!st.ok() || rc == AOTRUN_PKG_OK) return st;
    return failed(rc);
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

  // execute() then release(), as an inline stream runs work: true when both
  // succeeded, which builds no status; else *failure is execute()'s failure,
  // or release()'s when the work itself succeeded.
  bool run_and_release(Status* failure) const noexcept {
    int32_t rc = AOTRUN_PKG_OK;
    try {
      rc = fn(ctx);
    } catch (...) {
      *failure = package_threw(package_name(), "launched function");
      (void)release();
      return false;
    }
    if (rc != AOTRUN_PKG_OK) {
      *failure = failed(rc);
      (void)release();
      return false;
    }
    if (destroy == nullptr) return true;
    try {
      destroy(ctx);
    } catch (...) {
      *failure = package_threw(package_name(), "launch context destroy");
      return false;
    }
    return true;
  }

 private:
  // The status of fn's failure `rc`, with the package's message for it.
  Status failed(int32_t rc) const noexcept {
    const Code code = rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::InvalidArgument
                      : rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY  ? Code::OutOfMemory
                                                            : Code::Package;
    const char* msg = nullptr;
    int32_t ignored = 0;
    Status st = guard_package_call(
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

  const std::string& package_name() const noexcept {
    static const std::string kHost = "(host)";
    return package != nullptr ? *package : kHost;
  }
};

// One unit of work on a stream: a package's, or internal work.
struct Task : PackageWork {
  // Internal work (runner bookkeeping); used instead of fn when set.
  std::function<void()> internal;
};

}  // namespace aotrun::cpu
