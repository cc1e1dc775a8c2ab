#include "inputs.hpp"

#include "describe.hpp"
#include "error.hpp"
#include "npy.hpp"

namespace aotrun::cli {

namespace {

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string out;
  for (const TensorSpec& spec : specs) out += (out.empty() ? "" : ", ") + tensor_label(spec);
  return out.empty() ? "none" : out;
}

void check_against_spec(const HostTensor& t, const TensorSpec& spec, const std::string& path) {
  if (!spec.known) return;  // the package states nothing to check against
  const std::string where = "input '" + tensor_label(spec) + "' from '" + path + "'";
  if (t.dtype().code != spec.dtype.code || t.dtype().bits != spec.dtype.bits || t.dtype().lanes != spec.dtype.lanes) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT,
                  where + ": dtype " + dtype_name(t.dtype()) + ", the package expects " + dtype_name(spec.dtype));
  }
  if (t.shape().size() != spec.shape.size()) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, where + ": shape " + shape_text(t.shape()) + " has rank " +
                                                   std::to_string(t.shape().size()) + ", the package expects " +
                                                   spec_shape_text(spec.shape));
  }
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    if (spec.shape[d] >= 0 && spec.shape[d] != t.shape()[d]) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, where + ": shape " + shape_text(t.shape()) + ", the package expects " +
                                                     spec_shape_text(spec.shape));
    }
  }
}

// Per-input seeds: one scrambling round keeps input i and i+1 from sharing a
// shifted stream.
uint64_t input_seed(uint64_t seed, size_t index) {
  uint64_t z = seed ^ ((index + 1) * 0xD1B54A32D192ED03ull);
  z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDull;
  return z ^ (z >> 33);
}

}  // namespace

std::map<std::string, std::string> parse_input_options(const std::string& command,
                                                       const std::vector<std::string>& values) {
  std::map<std::string, std::string> files;
  for (const std::string& value : values) {
    const size_t eq = value.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
      throw UsageError(command, "--input needs NAME=FILE.npy, got '" + value + "'");
    }
    const std::string name = value.substr(0, eq);
    if (!files.emplace(name, value.substr(eq + 1)).second) {
      throw UsageError(command, "--input given twice for '" + name + "'");
    }
  }
  return files;
}

BuiltInputs build_inputs(const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  // --input by the placeholder or the model's own name; one file per input.
  std::vector<const std::string*> file_of(specs.size(), nullptr);
  for (const auto& [name, path] : plan.files) {
    const int i = find_spec(specs, name);
    if (i < 0) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "--input '" + name + "=" + path +
                                                     "': the package has no input named '" + name +
                                                     "' (inputs: " + names_of(specs) + ")");
    }
    if (file_of[i] != nullptr) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "--input '" + name + "=" + path + "': input '" +
                                                     tensor_label(specs[i]) + "' is also given as '" + *file_of[i] +
                                                     "'");
    }
    file_of[i] = &path;
  }

  BuiltInputs built;
  built.tensors.resize(specs.size());
  built.sources.resize(specs.size());
  std::optional<int64_t> batch = plan.batch;
  // Files first: they may fix the batch size that generated inputs follow.
  for (size_t i = 0; i < specs.size(); ++i) {
    if (file_of[i] == nullptr) continue;
    const std::string& file = *file_of[i];
    built.tensors[i] = read_npy(file, specs[i].name);
    check_against_spec(built.tensors[i], specs[i], file);
    built.sources[i] = "file " + file;
    for (size_t d = 0; d < specs[i].shape.size() && !batch; ++d) {
      if (specs[i].shape[d] < 0) batch = built.tensors[i].shape()[d];
    }
  }
  if (!batch && plan.accepts) {
    bool dynamic = false;
    for (const TensorSpec& s : specs) {
      for (int64_t d : s.shape) dynamic = dynamic || d < 0;
    }
    if (dynamic && !plan.accepts(1) && plan.accepts(2)) batch = 2;
  }
  built.batch = batch.value_or(1);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (file_of[i] != nullptr) continue;
    if (!specs[i].known) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "input '" + tensor_label(specs[i]) +
                                                     "' has no known dtype or shape (the package does not state "
                                                     "them); give it with --input " +
                                                     specs[i].name + "=FILE.npy");
    }
    std::vector<int64_t> shape = specs[i].shape;
    for (int64_t& d : shape) {
      if (d < 0) d = built.batch;
    }
    built.tensors[i] = HostTensor(specs[i].name, specs[i].dtype, shape);
    fill_random(built.tensors[i], input_seed(plan.seed, i));
    built.sources[i] = "random (seed " + std::to_string(plan.seed) + ")";
  }
  return built;
}

std::vector<DLTensor> views(std::vector<HostTensor>& tensors) {
  std::vector<DLTensor> out;
  out.reserve(tensors.size());
  for (HostTensor& t : tensors) out.push_back(t.view());
  return out;
}

}  // namespace aotrun::cli
