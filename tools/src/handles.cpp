#include "handles.h"

#include "error.h"

namespace aotrun_cli {

namespace {

struct PackageOptionsFree {
  void operator()(aotrun_package_options* o) const { aotrun_package_options_free(o); }
};
struct RunnerOptionsFree {
  void operator()(aotrun_runner_options* o) const { aotrun_runner_options_free(o); }
};

using GetTensorFn = aotrun_status* (*)(const aotrun_package*, size_t, aotrun_tensor_info*);

std::vector<TensorSpec> tensor_specs(const aotrun_package* package, size_t count, GetTensorFn get,
                                     const char* kind) {
  std::vector<TensorSpec> specs;
  specs.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    aotrun_tensor_info info{};
    info.struct_size = sizeof(info);
    check(get(package, i, &info), std::string("reading ") + kind + " " + std::to_string(i));
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

PackagePtr open_package(const std::string& path, bool verify_hashes) {
  aotrun_package_options* raw_options = nullptr;
  check(aotrun_package_options_create(&raw_options));
  std::unique_ptr<aotrun_package_options, PackageOptionsFree> options(raw_options);
  check(aotrun_package_options_set_verify_hashes(options.get(), verify_hashes ? 1 : 0));
  aotrun_package* package = nullptr;
  check(aotrun_package_open(path.c_str(), options.get(), &package));
  return PackagePtr(package);
}

RunnerPtr create_runner(aotrun_package* package, const RunnerConfig& config) {
  aotrun_runner_options* raw_options = nullptr;
  check(aotrun_runner_options_create(&raw_options));
  std::unique_ptr<aotrun_runner_options, RunnerOptionsFree> options(raw_options);
  check(aotrun_runner_options_set_mode(options.get(), config.mode));
  check(aotrun_runner_options_set_num_models(options.get(), config.num_models));
  check(aotrun_runner_options_set_strict(options.get(), config.strict ? 1 : 0));
  if (config.max_inflight > 0) {
    check(aotrun_runner_options_set_max_inflight(options.get(), config.max_inflight));
  }
  aotrun_runner* runner = nullptr;
  check(aotrun_runner_create(package, options.get(), &runner));
  return RunnerPtr(runner);
}

aotrun_package_info package_info(const aotrun_package* package) {
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  check(aotrun_package_get_info(package, &info), "reading package info");
  return info;
}

aotrun_runner_stats runner_stats(const aotrun_runner* runner) {
  aotrun_runner_stats stats{};
  stats.struct_size = sizeof(stats);
  check(aotrun_runner_get_stats(runner, &stats), "reading runner stats");
  return stats;
}

std::vector<TensorSpec> package_inputs(const aotrun_package* package) {
  return tensor_specs(package, package_info(package).num_inputs, aotrun_package_get_input,
                      "input");
}

std::vector<TensorSpec> package_outputs(const aotrun_package* package) {
  return tensor_specs(package, package_info(package).num_outputs, aotrun_package_get_output,
                      "output");
}

std::vector<aotrun_symbol_info> package_symbols(const aotrun_package* package) {
  const size_t count = package_info(package).num_symbols;
  std::vector<aotrun_symbol_info> symbols;
  symbols.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    aotrun_symbol_info info{};
    info.struct_size = sizeof(info);
    check(aotrun_package_get_symbol(package, i, &info), "reading symbol " + std::to_string(i));
    symbols.push_back(info);
  }
  return symbols;
}

}  // namespace aotrun_cli
