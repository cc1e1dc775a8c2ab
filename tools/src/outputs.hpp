// Allocating output tensors with the shapes the runner reports.
#pragma once

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

}  // namespace aotrun::cli
