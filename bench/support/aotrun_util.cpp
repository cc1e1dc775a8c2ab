#include "aotrun_util.hpp"

#include <cstdlib>

namespace aotrun_bench {

void check(aotrun_status* st, const std::string& what) {
  if (st == nullptr) return;
  std::string msg = what + ": " + aotrun_code_name(aotrun_status_code(st)) + ": " + aotrun_status_message(st);
  aotrun_status_free(st);
  throw std::runtime_error(msg);
}

std::string packages_dir() {
  const char* env = std::getenv("AOTRUN_BENCH_PACKAGES");
  if (env != nullptr && *env != '\0') return env;
  return AOTRUN_BENCH_PACKAGES_DIR;
}

std::string package_path(const std::string& name) { return packages_dir() + "/" + name; }

PackagePtr open_package(const std::string& name) {
  const std::string path = package_path(name);
  aotrun_package* p = nullptr;
  check(aotrun_package_open(path.c_str(), nullptr, &p), "aotrun_package_open(" + path + ")");
  return PackagePtr(p);
}

RunnerPtr make_runner(aotrun_package* package, const RunnerConfig& config) {
  aotrun_runner_options* raw = nullptr;
  check(aotrun_runner_options_create(&raw), "aotrun_runner_options_create");
  std::unique_ptr<aotrun_runner_options, void (*)(aotrun_runner_options*)> options(
      raw, aotrun_runner_options_free);
  check(aotrun_runner_options_set_mode(raw, config.mode), "set_mode");
  check(aotrun_runner_options_set_num_models(raw, config.num_models), "set_num_models");
  check(aotrun_runner_options_set_strict(raw, config.strict ? 1 : 0), "set_strict");
  if (config.max_inflight > 0) {
    check(aotrun_runner_options_set_max_inflight(raw, config.max_inflight), "set_max_inflight");
  }
  aotrun_runner* r = nullptr;
  check(aotrun_runner_create(package, raw, &r),
        std::string("aotrun_runner_create(mode ") + aotrun_mode_name(config.mode) + ")");
  return RunnerPtr(r);
}

aotrun_runner_stats runner_stats(const aotrun_runner* runner) {
  aotrun_runner_stats s{};
  s.struct_size = sizeof(s);
  check(aotrun_runner_get_stats(runner, &s), "aotrun_runner_get_stats");
  return s;
}

DLTensor float_tensor(void* data, int64_t* shape2) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape2;
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

Tensor2D::Tensor2D(int64_t rows, int64_t cols, float fill)
    : data_(static_cast<size_t>(rows * cols), fill), shape_{rows, cols} {
  dl_ = float_tensor(data_.data(), shape_);
}

}  // namespace aotrun_bench
