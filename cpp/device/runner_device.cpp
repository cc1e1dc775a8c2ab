#include "device/runner_device.hpp"

#include "package/package.hpp"
#include "runner/validate.hpp"

namespace aotrun {

void check_device_type(const Package& pkg, DLDevice device) {
  const int32_t type = device_type_of(device);
  if (type != kDLCPU && type != kDLCUDA) {
    fail(Code::Unsupported, "package '" + pkg.name() + "': device type " + std::to_string(type) +
                                " is not supported (aotrun runs on CPU (1) and CUDA (2))");
  }
  if (device_type_of(pkg.device()) != type) {
    fail(Code::Unsupported, "package '" + pkg.name() + "' was compiled for device type " +
                                std::to_string(device_type_of(pkg.device())) + "; running it on device type " +
                                std::to_string(type) + " is not supported");
  }
}

std::unique_ptr<RunnerDevice> make_runner_device(const Package& pkg, DLDevice device) {
  check_device_type(pkg, device);
  // One line per device: a new device is a folder under device/ and a line here.
  if (device_type_of(device) == kDLCUDA) return cuda::make_runner_device(pkg, device.device_id);
  return cpu::make_runner_device(pkg);
}

}  // namespace aotrun
