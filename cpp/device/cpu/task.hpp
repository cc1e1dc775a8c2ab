// One unit of work on a CPU stream: a package's launched function, or an
// internal completion callback of the runner.
#pragma once

#include <functional>

#include <aotrun/package_abi.h>

#include "util/error.hpp"

namespace aotrun::cpu {

struct Task {
  aotrun_pkg_host_fn fn = nullptr;
  void* ctx = nullptr;
  aotrun_pkg_ctx_destroy_fn destroy = nullptr;
  // Where the message of a failed fn comes from (the package's
  // aotrun_pkg_get_last_error, read on the thread that ran fn).
  aotrun_pkg_get_last_error_fn last_error = nullptr;
  // Internal work (runner bookkeeping); used instead of fn when set.
  std::function<void()> internal;

  // Runs the package function and turns a failure into a Status.
  Status execute() const {
    int32_t rc = fn(ctx);
    if (rc == AOTRUN_PKG_OK) return Status::Ok();
    const char* msg = last_error ? last_error() : nullptr;
    Code code = rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::InvalidArgument
                : rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY  ? Code::OutOfMemory
                                                      : Code::Package;
    return Status{code, (msg && *msg) ? msg : "launched package work failed with status " + std::to_string(rc)};
  }
  void release() const {
    if (destroy != nullptr) destroy(ctx);
  }
};

}  // namespace aotrun::cpu
