// The per-thread work of `aotrun bench --mode async`: submissions with
// aotrun_runner_run_async kept in a ring of events.
#pragma once

#include <memory>
#include <vector>

#include <aotrun/aotrun.h>

#include "bench_loop.hpp"
#include "runtime.hpp"

namespace aotrun::cli {

// Work that keeps up to `depth` runs of its own in flight. Each ring slot has
// its own outputs, reused only after the slot's event completed; when the
// ring is full the oldest event is waited first. A run's latency is from the
// call to aotrun_runner_run_async (so it includes any wait for a window slot)
// to its completion, timestamped by the event's completion callback. The
// shared `inputs` must outlive the work.
std::unique_ptr<CallerWork> make_async_work(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                            const std::vector<TensorSpec>& output_specs, int depth);

}  // namespace aotrun::cli
