// The CUDA backend of a build without CUDA (AOTRUN_ENABLE_CUDA=OFF or no
// toolkit found): nothing is usable, and creating a Context says why.
#include "device/cuda/cuda_context.hpp"

namespace aotrun::cuda {

namespace {
constexpr const char* kNotBuilt = "aotrun was built without CUDA";
}

bool compiled_in() { return false; }

bool usable(int, std::string* why) {
  if (why != nullptr) *why = kNotBuilt;
  return false;
}

Status allocate_device_memory(int, size_t, void**) { return Status{Code::Unsupported, kNotBuilt}; }
void release_device_memory(void*) {}

const std::string& last_failure() {
  static const std::string empty;
  return empty;
}
void clear_last_failure() {}

std::unique_ptr<Context> Context::create(int device_id, std::string package_name, aotrun_pkg_get_last_error_fn,
                                         LogHooks) {
  throw Error(Code::Unsupported, "package '" + package_name + "' needs CUDA device " + std::to_string(device_id) +
                                     ", but " + kNotBuilt +
                                     " (configure with -DAOTRUN_ENABLE_CUDA=ON and a CUDA toolkit)");
}

}  // namespace aotrun::cuda
