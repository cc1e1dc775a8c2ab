// One package with one input and one output (float32 [batch, in] ->
// [batch, out]), opened twice: directly (DirectPackage, the floor) and
// through aotrun. Hands out the call paths the paired benchmarks compare, all
// on the same tensors.
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "direct_package.hpp"
#include "aotrun_util.hpp"

namespace aotrun_bench {

class Calls {
 public:
  Calls(const std::string& package, int64_t batch, int64_t in_cols, int64_t out_cols)
      : direct_(package_path(package), 1),
        package_(open_package(package)),
        x_(batch, in_cols, 0.5f),
        y_(batch, out_cols) {}

  Runner runner(aotrun_mode mode) {
    RunnerConfig c;
    c.mode = mode;
    return make_runner(package_, c);
  }

  // The package's thread-safe `run`, called directly.
  auto direct_run() {
    return [this] {
      const int32_t rc = direct_.run(x_.dl(), 1, y_.dl(), 1);
      return rc == AOTRUN_PKG_OK || direct_failed("run", rc);
    };
  }
  // The package's `run_single_threaded`, called directly.
  auto direct_single_threaded() {
    return [this] {
      const int32_t rc = direct_.run_single_threaded(x_.dl(), 1, y_.dl(), 1);
      return rc == AOTRUN_PKG_OK || direct_failed("run_single_threaded", rc);
    };
  }
  // aotrun_runner_run on `r`.
  auto via(aotrun_runner* r) {
    return [this, r] { return ok(aotrun_runner_run(r, x_.dl(), 1, y_.dl(), 1), "aotrun_runner_run", &error); };
  }

  // Runs `reference`, then `subject` on a poisoned output, and checks both
  // produced the same bytes (a replayed graph must really compute). False
  // with `error` set otherwise.
  template <class Subject, class Reference>
  bool outputs_match(Subject&& subject, Reference&& reference) {
    if (!reference()) return false;
    const std::vector<float> expected(y_.data(), y_.data() + y_.size());
    std::fill(y_.data(), y_.data() + y_.size(), std::numeric_limits<float>::quiet_NaN());
    if (!subject()) return false;
    if (std::memcmp(expected.data(), y_.data(), expected.size() * sizeof(float)) != 0) {
      error = "the output through aotrun differs from the direct call's";
      return false;
    }
    return true;
  }

  std::string error;  // the last failure of any path

 private:
  bool direct_failed(const char* what, int32_t rc) {
    error = std::string("direct ") + what + ": status " + std::to_string(rc) + ": " + direct_.last_error();
    return false;
  }

  DirectPackage direct_;
  Package package_;
  Tensor2D x_, y_;
};

}  // namespace aotrun_bench
