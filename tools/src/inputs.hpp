// Building a package's input tensors from --input files or random data.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

struct InputPlan {
  std::map<std::string, std::string> files;  // input name -> .npy path
  std::optional<int64_t> batch;              // --batch, if given
  uint64_t seed = 0;
  // Without --batch or a file fixing it: the first of 1 and 2 the package
  // takes for its dynamic dims (a model exported with a dynamic dim is
  // compiled for 2 and up); none set: 1.
  std::function<bool(int64_t)> accepts;
};

// Parses "name=file.npy" values of --input. UsageError for a malformed value
// or a name given twice (`command` names the subcommand for the message).
std::map<std::string, std::string> parse_input_options(const std::string& command,
                                                       const std::vector<std::string>& values);

struct BuiltInputs {
  std::vector<HostTensor> tensors;   // in the package's input order
  std::vector<std::string> sources;  // "file x.npy" or "random (seed S)"
  int64_t batch = 1;                 // value used for dynamic dimensions
};

// Loads or generates every input of `specs`. Files are checked against the
// spec (dtype, rank, static dimensions) so a mismatch names the file.
// Dynamic dimensions of generated inputs get `plan.batch`, else the size that
// a file gave the first dynamic dimension, else 1.
// Throws Failure: INVALID_ARGUMENT (unknown input name, mismatch), NOT_FOUND,
// UNSUPPORTED (dtype that cannot be generated).
BuiltInputs build_inputs(const std::vector<TensorSpec>& specs, const InputPlan& plan);

// DLTensor views of `tensors` (valid while the tensors live).
std::vector<DLTensor> views(std::vector<HostTensor>& tensors);

}  // namespace aotrun::cli
