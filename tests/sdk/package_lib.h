// Test helper: a package .so opened with dlopen, its entry points resolved,
// and small owners for containers and float tensors.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "direct_host.h"

namespace aotrun {
namespace test {

inline std::string package_path(const std::string& file) { return std::string(AOTRUN_TEST_PACKAGES_DIR) + "/" + file; }

class PackageLib {
 public:
  explicit PackageLib(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("dlopen " + path + ": " + dlerror());
    abi_version = need<aotrun_pkg_abi_version_fn>(AOTRUN_PKG_SYM_ABI_VERSION);
    last_error = need<aotrun_pkg_get_last_error_fn>(AOTRUN_PKG_SYM_GET_LAST_ERROR);
    create = need<aotrun_pkg_container_create_fn>(AOTRUN_PKG_SYM_CONTAINER_CREATE);
    destroy = need<aotrun_pkg_container_destroy_fn>(AOTRUN_PKG_SYM_CONTAINER_DESTROY);
    num_inputs = need<aotrun_pkg_container_get_num_inputs_fn>(AOTRUN_PKG_SYM_GET_NUM_INPUTS);
    num_outputs = need<aotrun_pkg_container_get_num_outputs_fn>(AOTRUN_PKG_SYM_GET_NUM_OUTPUTS);
    input_spec = need<aotrun_pkg_container_get_input_spec_fn>(AOTRUN_PKG_SYM_GET_INPUT_SPEC);
    output_spec = need<aotrun_pkg_container_get_output_spec_fn>(AOTRUN_PKG_SYM_GET_OUTPUT_SPEC);
    output_shapes = need<aotrun_pkg_container_get_output_shapes_fn>(AOTRUN_PKG_SYM_GET_OUTPUT_SHAPES);
    run = need<aotrun_pkg_container_run_fn>(AOTRUN_PKG_SYM_RUN);
    run_single_threaded = reinterpret_cast<aotrun_pkg_container_run_single_threaded_fn>(
        dlsym(handle_, AOTRUN_PKG_SYM_RUN_SINGLE_THREADED));  // probed: may be NULL
  }
  ~PackageLib() {
    if (handle_) dlclose(handle_);
  }
  PackageLib(const PackageLib&) = delete;
  PackageLib& operator=(const PackageLib&) = delete;

  void* symbol(const char* name) const { return dlsym(handle_, name); }

  aotrun_pkg_abi_version_fn abi_version;
  aotrun_pkg_get_last_error_fn last_error;
  aotrun_pkg_container_create_fn create;
  aotrun_pkg_container_destroy_fn destroy;
  aotrun_pkg_container_get_num_inputs_fn num_inputs;
  aotrun_pkg_container_get_num_outputs_fn num_outputs;
  aotrun_pkg_container_get_input_spec_fn input_spec;
  aotrun_pkg_container_get_output_spec_fn output_spec;
  aotrun_pkg_container_get_output_shapes_fn output_shapes;
  aotrun_pkg_container_run_fn run;
  aotrun_pkg_container_run_single_threaded_fn run_single_threaded;

 private:
  template <class F>
  F need(const char* name) {
    void* p = dlsym(handle_, name);
    if (p == nullptr) throw std::runtime_error(std::string("missing symbol ") + name);
    return reinterpret_cast<F>(p);
  }
  void* handle_ = nullptr;
};

struct DirectHostDeleter {
  void operator()(aotrun_test_direct_host* h) const { aotrun_test_direct_host_free(h); }
};
using DirectHost = std::unique_ptr<aotrun_test_direct_host, DirectHostDeleter>;

inline DirectHost make_direct_host() {
  DirectHost h(aotrun_test_direct_host_new());
  if (!h) throw std::runtime_error("direct host: out of memory");
  return h;
}

inline aotrun_pkg_create_args create_args(const aotrun_pkg_host* host, int32_t num_models,
                                          const std::vector<aotrun_pkg_constant>* constants = nullptr) {
  aotrun_pkg_create_args a;
  std::memset(&a, 0, sizeof(a));
  a.struct_size = sizeof(a);
  a.num_models = num_models;
  a.device = DLDevice{kDLCPU, 0};
  a.host = host;
  a.constants = constants && !constants->empty() ? constants->data() : nullptr;
  a.num_constants = constants ? constants->size() : 0;
  return a;
}

// A float32 CPU tensor that owns its data and shape.
class FloatTensor {
 public:
  FloatTensor(std::vector<int64_t> shape, float fill = 0.0f) : shape_(std::move(shape)) {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    data_.assign(static_cast<size_t>(n), fill);
    refresh();
  }
  FloatTensor(std::vector<int64_t> shape, std::vector<float> values)
      : shape_(std::move(shape)), data_(std::move(values)) {
    refresh();
  }
  FloatTensor(const FloatTensor& o) : shape_(o.shape_), data_(o.data_), t_(o.t_) { refresh(); }

  DLTensor& dl() { return t_; }
  const DLTensor& dl() const { return t_; }
  std::vector<float>& values() { return data_; }
  const std::vector<float>& values() const { return data_; }

 private:
  void refresh() {
    std::memset(&t_, 0, sizeof(t_));
    t_.data = data_.empty() ? nullptr : data_.data();
    t_.device = DLDevice{kDLCPU, 0};
    t_.ndim = static_cast<int32_t>(shape_.size());
    t_.dtype = DLDataType{kDLFloat, 32, 1};
    t_.shape = shape_.data();
  }
  std::vector<int64_t> shape_;
  std::vector<float> data_;
  DLTensor t_;
};

inline aotrun_pkg_run_args run_args(const DLTensor* inputs, size_t ni, DLTensor* outputs, size_t no) {
  aotrun_pkg_run_args a;
  std::memset(&a, 0, sizeof(a));
  a.struct_size = sizeof(a);
  a.inputs = inputs;
  a.num_inputs = ni;
  a.outputs = outputs;
  a.num_outputs = no;
  a.stream = nullptr;
  return a;
}

}  // namespace test
}  // namespace aotrun
