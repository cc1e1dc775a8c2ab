// The measuring loop of `aotrun bench`: N caller threads running one runner,
// per-call latencies, and an optional live progress line.
#ifndef AOTRUN_TOOLS_BENCH_LOOP_H_
#define AOTRUN_TOOLS_BENCH_LOOP_H_

#include <cstdint>
#include <optional>
#include <vector>

#include <aotrun/aotrun.h>

#include "handles.h"

namespace aotrun_cli {

struct LoopConfig {
  int threads = 1;
  int warmup = 10;                // calls per thread before measuring
  std::optional<uint64_t> iters;  // calls per thread; else run for duration_s
  double duration_s = 2.0;
  bool progress = false;          // draw a progress line on stderr
};

struct LoopResult {
  std::vector<uint64_t> latencies_ns;  // every measured call, sorted ascending
  double wall_ns = 0;                  // start of measuring to the last call's end
};

// Runs the loop. Every thread has its own outputs (allocated with the shapes
// the runner reports) and shares the read-only `inputs`. The first failing
// call stops all threads and is thrown as Failure.
LoopResult run_loop(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                    const std::vector<TensorSpec>& output_specs, const LoopConfig& config);

struct Percentiles {
  uint64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0;
};
// Nearest-rank percentiles of sorted latencies (all zero when empty).
Percentiles percentiles(const std::vector<uint64_t>& sorted);

}  // namespace aotrun_cli

#endif  // AOTRUN_TOOLS_BENCH_LOOP_H_
