// Directories of .npy files named after tensors: what `run --output-dir` /
// `--save-inputs` write and what `check --reference` reads.
#ifndef AOTRUN_TOOLS_TENSOR_FILES_H_
#define AOTRUN_TOOLS_TENSOR_FILES_H_

#include <string>
#include <vector>

#include "tensor.h"

namespace aotrun_cli {

// The file name ("<stem>.npy") of each tensor name, in order: characters
// outside [A-Za-z0-9._-] become '_', an empty or dot-only stem becomes
// "tensor<i>", and a stem already used gets "_<i>" appended.
std::vector<std::string> tensor_file_names(const std::vector<std::string>& names);

// Creates `dir` if needed and writes each tensor to dir/<file name>.
// Returns the paths written. Throws Failure: IO_ERROR, UNSUPPORTED (dtype).
std::vector<std::string> write_tensors(const std::string& dir, const std::vector<HostTensor>& tensors);

}  // namespace aotrun_cli

#endif  // AOTRUN_TOOLS_TENSOR_FILES_H_
