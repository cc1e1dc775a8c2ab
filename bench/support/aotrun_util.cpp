#include "aotrun_util.hpp"

#include <cstdlib>

namespace aotrun_bench {

namespace {

[[noreturn]] void rethrow(const aotrun::cxx::Error& e, const std::string& what) {
  throw std::runtime_error(what + ": " + e.code_name() + ": " + e.what());
}

}  // namespace

void check(aotrun_status* st, const std::string& what) {
  try {
    aotrun::cxx::throw_on_error(st);
  } catch (const aotrun::cxx::Error& e) {
    rethrow(e, what);
  }
}

std::string packages_dir() {
  const char* env = std::getenv("AOTRUN_BENCH_PACKAGES");
  if (env != nullptr && *env != '\0') return env;
  return AOTRUN_BENCH_PACKAGES_DIR;
}

std::string package_path(const std::string& name) { return packages_dir() + "/" + name; }

Package open_package(const std::string& name) {
  const std::string path = package_path(name);
  try {
    return Package(path);
  } catch (const aotrun::cxx::Error& e) {
    rethrow(e, "aotrun_package_open(" + path + ")");
  }
}

Runner make_runner(const Package& package, const RunnerConfig& config) {
  std::string step = "aotrun_runner_options_create";
  try {
    aotrun::cxx::RunnerOptions options;
    step = "set_mode";
    options.mode(config.mode);
    step = "set_num_models";
    options.num_models(config.num_models);
    step = "set_strict";
    options.strict(config.strict);
    step = "set_max_inflight";
    if (config.max_inflight > 0) options.max_inflight(config.max_inflight);
    step = std::string("aotrun_runner_create(mode ") + aotrun_mode_name(config.mode) + ")";
    return Runner(package, options);
  } catch (const aotrun::cxx::Error& e) {
    rethrow(e, step);
  }
}

DLTensor float_tensor(void* data, int64_t* shape2) {
  return aotrun::cxx::tensor_view(data, aotrun::cxx::dtype_of<float>(), shape2, 2);
}

Tensor2D::Tensor2D(int64_t rows, int64_t cols, float fill)
    : data_(static_cast<size_t>(rows * cols), fill), shape_{rows, cols} {
  dl_ = float_tensor(data_.data(), shape_);
}

}  // namespace aotrun_bench
