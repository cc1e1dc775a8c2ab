// Directories of .npy files named after tensors: what `run --output-dir` /
// `--save-inputs` write and what `check --reference` reads.
#pragma once

#include <string>
#include <vector>

#include "tensor.hpp"

namespace aotrun::cli {

// The file name ("<stem>.npy") of each tensor name, in order: characters
// outside [A-Za-z0-9._-] become '_', an empty or dot-only stem becomes
// "tensor<i>", and a stem already used gets "_<i>" appended.
std::vector<std::string> tensor_file_names(const std::vector<std::string>& names);

// Creates `dir` if needed and writes each tensor to dir/<file name>.
// Returns the paths written. Throws Failure: IO_ERROR, UNSUPPORTED (dtype).
std::vector<std::string> write_tensors(const std::string& dir, const std::vector<HostTensor>& tensors);

}  // namespace aotrun::cli
