// Running one package several times in one mode for `aotrun check`, keeping
// every run's outputs.
#pragma once

#include <vector>

#include <aotrun/aotrun.h>

#include "runtime.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

struct ModeRuns {
  aotrun_mode effective = AOTRUN_MODE_THREADED;
  aotrun_runner_stats stats{};                   // strings in it are dead once run_mode returns
  std::vector<std::vector<HostTensor>> outputs;  // [run][output]
};

// Creates a runner with `config` and runs `inputs` `runs` times, each run into
// fresh outputs pre-filled with 0xFF bytes (so an output a run leaves unwritten
// cannot pass for a result). Synchronous runs go one after another; with
// `async` every run is submitted with aotrun_runner_run_async before any is
// waited, so they may overlap up to the runner's window. Throws Failure with
// the library's code when the runner cannot be created or a run fails (after
// every submitted run has completed). With `allocating` (a model whose output
// sizes depend on input values; synchronous only) each run is a run_alloc,
// whose outputs are copied out (run_allocating).
ModeRuns run_mode(const Package& package, const RunnerConfig& config, bool async, const std::vector<DLTensor>& inputs,
                  const std::vector<TensorSpec>& output_specs, int runs, bool allocating = false);

}  // namespace aotrun::cli
