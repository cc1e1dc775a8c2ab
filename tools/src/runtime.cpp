#include "runtime.hpp"

namespace aotrun::cli {

namespace {

std::vector<TensorSpec> copy_specs(const std::vector<aotrun_tensor_info>& infos) {
  std::vector<TensorSpec> specs;
  specs.reserve(infos.size());
  for (const aotrun_tensor_info& info : infos) {
    TensorSpec spec;
    spec.name = info.name != nullptr ? info.name : "";
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

Runner create_runner(const Package& package, const RunnerConfig& config) {
  aotrun::cxx::RunnerOptions options;
  options.mode(config.mode).num_models(config.num_models).strict(config.strict);
  if (config.max_inflight > 0) options.max_inflight(config.max_inflight);
  Runner runner(package, options);
  apply_weights(runner, config.weights);
  return runner;
}

std::vector<TensorSpec> package_inputs(const Package& package) { return copy_specs(package.inputs()); }

std::vector<TensorSpec> package_outputs(const Package& package) { return copy_specs(package.outputs()); }

}  // namespace aotrun::cli
