// The measuring loop of `aotrun bench`: N caller threads sharing one runner,
// per-run latencies, and an optional live progress line. What each thread
// does per run (a synchronous call, or an asynchronous submission) is a
// CallerWork; the loop only coordinates the threads and the clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <aotrun/aotrun.h>

#include "runtime.hpp"

namespace aotrun::cli {

using Clock = std::chrono::steady_clock;

struct LoopConfig {
  int threads = 1;
  int warmup = 10;                // runs per thread before measuring
  std::optional<uint64_t> iters;  // runs per thread; else run for duration_s
  double duration_s = 2.0;
  bool progress = false;  // draw a progress line on stderr
};

// The work of one caller thread, used by that thread only. Every method
// returns NULL or the first failure (the caller owns the status).
class CallerWork {
 public:
  virtual ~CallerWork() = default;
  // `runs` unmeasured runs; all have completed when it returns.
  virtual aotrun_status* warm_up(int runs) = 0;
  // Starts one measured run (a synchronous run also completes it). The
  // latency of every run that completes is appended to `latencies`.
  virtual aotrun_status* start_run(std::vector<uint64_t>& latencies) = 0;
  // Completes every run still outstanding, appending their latencies. Also
  // called after a failure: on return no run uses this thread's buffers.
  virtual aotrun_status* finish(std::vector<uint64_t>& latencies) = 0;
  // When the latest measured run completed (time_point{} if none did).
  virtual Clock::time_point last_completion() const = 0;
};

// Makes the work of caller thread `index`, on the coordinating thread,
// before any caller thread starts.
using WorkFactory = std::function<std::unique_ptr<CallerWork>(int index)>;

struct LoopResult {
  std::vector<uint64_t> latencies_ns;  // every measured run, sorted ascending
  double wall_ns = 0;                  // start of measuring to the last completion
};

// Runs the loop. The first failure of any thread stops all threads (each
// still finishes its outstanding runs) and is thrown as Failure.
LoopResult run_loop(const WorkFactory& make_work, const LoopConfig& config);

// Work that calls aotrun_runner_run: one run at a time, timed around the
// call. Every thread has its own outputs and shares the read-only `inputs`
// (which must outlive the work).
std::unique_ptr<CallerWork> make_sync_work(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                           const std::vector<TensorSpec>& output_specs);

struct Percentiles {
  uint64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0;
};
// Nearest-rank percentiles of sorted latencies (all zero when empty).
Percentiles percentiles(const std::vector<uint64_t>& sorted);

}  // namespace aotrun::cli
