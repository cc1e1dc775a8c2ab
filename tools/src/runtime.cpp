#include "runtime.hpp"

namespace aotrun::cli {

namespace {

// `model_name(i)`: the model's own name for tensor i (== its name if none).
std::vector<TensorSpec> copy_specs(const std::vector<aotrun_tensor_info>& infos,
                                   const std::function<std::string(size_t)>& model_name) {
  std::vector<TensorSpec> specs;
  specs.reserve(infos.size());
  for (const aotrun_tensor_info& info : infos) {
    TensorSpec spec;
    spec.name = info.name != nullptr ? info.name : "";
    std::string own = model_name(specs.size());
    if (own != spec.name) spec.model_name = std::move(own);
    spec.dtype = info.dtype;
    spec.known = info.ndim >= 0;
    if (info.ndim > 0 && info.shape != nullptr) spec.shape.assign(info.shape, info.shape + info.ndim);
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace

Package open_package(const std::string& path, bool verify_hashes) {
  return Package(path, aotrun::cxx::PackageOptions().verify_hashes(verify_hashes));
}

Package open_package(const std::string& path, const Args& args) {
  aotrun::cxx::PackageOptions options;
  options.verify_hashes(!args.has("no-verify"));
  if (args.has("pad-batch")) options.pt2_pad_batch(true);
  if (args.has("above-compiled-max")) options.pt2_above_compiled_max(true);
  return Package(path, options);
}

std::string open_options_help(size_t column) {
  return help_rows(
      column,
      {
          {"--pad-batch",
           {"a .pt2 whose dim 0 is a batch of independent rows", "runs requests below its compiled minimum padded"}},
          {"--above-compiled-max",
           {"a .pt2 runs sizes above the maximum its checks", "state (docs/PT2.md, \"Upper bounds\")"}},
      });
}

Runner create_runner(const Package& package, const RunnerConfig& config) {
  aotrun::cxx::RunnerOptions options;
  options.mode(config.mode).num_models(config.num_models).strict(config.strict);
  if (config.max_inflight > 0) options.max_inflight(config.max_inflight);
  Runner runner(package, options);
  apply_weights(runner, config.weights);
  return runner;
}

std::vector<TensorSpec> package_inputs(const Package& package) {
  return copy_specs(package.inputs(), [&](size_t i) { return package.input_model_name(i); });
}

std::vector<TensorSpec> package_outputs(const Package& package) {
  return copy_specs(package.outputs(), [&](size_t i) { return package.output_model_name(i); });
}

std::string tensor_label(const TensorSpec& spec) {
  return spec.model_name.empty() ? spec.name : spec.model_name + " (" + spec.name + ")";
}

int find_spec(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) return static_cast<int>(i);
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].model_name.empty() && specs[i].model_name == name) return static_cast<int>(i);
  }
  return -1;
}

std::function<bool(int64_t)> dynamic_size_probe(const Package& package, const std::vector<TensorSpec>& inputs) {
  auto runner = std::make_shared<std::unique_ptr<Runner>>();
  return [&package, inputs, runner](int64_t size) {
    if (!*runner) *runner = std::make_unique<Runner>(package);
    std::vector<std::vector<int64_t>> shapes;
    std::vector<DLDataType> dtypes;
    for (const TensorSpec& s : inputs) {
      if (!s.known) return true;  // nothing to ask about
      shapes.push_back(s.shape);
      for (int64_t& d : shapes.back()) {
        if (d < 0) d = size;
      }
      dtypes.push_back(s.dtype);
    }
    try {
      return (*runner)->accepts(dtypes, shapes, 4096);
    } catch (const aotrun::cxx::Error&) {
      return true;  // not a refusal of the size: the run says what is wrong
    }
  };
}

}  // namespace aotrun::cli
