// Output tensors: allocated with the shapes the runner reports, or taken
// from a run whose outputs the runner allocates.
#pragma once

#include <string>
#include <vector>

#include <aotrun/aotrun.h>

#include "runtime.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

// Asks the runner for the output shapes of `inputs` and allocates one
// zeroed host tensor per output of `specs`. Throws Failure with the
// library's code if the shapes cannot be computed.
std::vector<HostTensor> allocate_outputs(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                         const std::vector<TensorSpec>& specs);

// Runs `inputs` with aotrun_runner_run_alloc (CPU runners: the outputs are
// host memory) and copies each output into a host tensor named by `specs`.
// This also runs a model whose output sizes depend on the input values,
// where no shape query can answer before the run. Throws Failure with the
// library's code, `what` naming the run.
std::vector<HostTensor> run_allocating(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                       const std::vector<TensorSpec>& specs, const std::string& what);

}  // namespace aotrun::cli
