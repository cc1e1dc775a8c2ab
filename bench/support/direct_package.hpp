// A model package called without aotrun: dlopen its library, resolve the
// entry points with dlsym, map its weights and create a container over the
// inline host (inline_host.hpp). This is the floor every benchmark compares
// the runner with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

namespace aotrun_bench {

class DirectPackage {
 public:
  // `path`: a package directory (manifest.json) or a bare .so.
  // `num_models` instances are created. Throws std::runtime_error naming the
  // file or the entry point on any failure.
  DirectPackage(const std::string& path, int32_t num_models);
  ~DirectPackage();
  DirectPackage(const DirectPackage&) = delete;
  DirectPackage& operator=(const DirectPackage&) = delete;

  // The package's thread-safe `run` on the host's (inline) default stream.
  int32_t run(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs) {
    const aotrun_pkg_run_args args = make_args(inputs, num_inputs, outputs, num_outputs);
    return run_(container_, &args);
  }
  // `run_single_threaded` (ABI 1.1); INVALID_ARGUMENT if the package lacks it.
  int32_t run_single_threaded(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs) {
    if (run_st_ == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
    const aotrun_pkg_run_args args = make_args(inputs, num_inputs, outputs, num_outputs);
    return run_st_(container_, &args);
  }
  bool has_single_threaded() const { return run_st_ != nullptr; }
  // The package's message for the last failure on this thread.
  std::string last_error() const;

 private:
  static aotrun_pkg_run_args make_args(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                       size_t num_outputs) {
    aotrun_pkg_run_args args{};
    args.struct_size = sizeof(args);
    args.inputs = inputs;
    args.num_inputs = num_inputs;
    args.outputs = outputs;
    args.num_outputs = num_outputs;
    args.stream = nullptr;  // the host's default stream: inline
    return args;
  }
  void init(const std::string& path, int32_t num_models);
  void release();
  void map_weights(const std::string& file);
  void* resolve(const char* symbol, bool required);

  struct Mapping {
    void* addr = nullptr;
    size_t size = 0;
  };
  struct ConstantStorage {
    std::string name;
    std::vector<int64_t> shape;
  };

  std::string library_path_;
  void* handle_ = nullptr;
  std::vector<Mapping> mappings_;
  std::vector<ConstantStorage> storage_;  // names and shapes the constants point to
  std::vector<aotrun_pkg_constant> constants_;
  aotrun_pkg_container* container_ = nullptr;
  aotrun_pkg_container_destroy_fn destroy_ = nullptr;
  aotrun_pkg_container_run_fn run_ = nullptr;
  aotrun_pkg_container_run_single_threaded_fn run_st_ = nullptr;
  aotrun_pkg_get_last_error_fn last_error_ = nullptr;
};

}  // namespace aotrun_bench
