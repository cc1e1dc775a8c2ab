// Allocating output tensors with the shapes the runner reports.
#ifndef AOTRUN_TOOLS_OUTPUTS_H_
#define AOTRUN_TOOLS_OUTPUTS_H_

#include <vector>

#include <aotrun/aotrun.h>

#include "runtime.h"
#include "tensor.h"

namespace aotrun_cli {

// Asks the runner for the output shapes of `inputs` and allocates one
// zeroed host tensor per output of `specs`. Throws Failure with the
// library's code if the shapes cannot be computed.
std::vector<HostTensor> allocate_outputs(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                         const std::vector<TensorSpec>& specs);

}  // namespace aotrun_cli

#endif  // AOTRUN_TOOLS_OUTPUTS_H_
