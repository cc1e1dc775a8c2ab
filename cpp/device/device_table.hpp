// The devices aotrun runs on, in one table that manifest parsing, the package
// kinds and the runner's device checks all read. A new device is a folder
// under device/ with a RunnerDevice (and its GraphDevice) and one row in
// device_table.cpp; nothing else names devices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "device/runner_device.hpp"

namespace aotrun {

struct DeviceKind {
  int32_t type;       // its DLDeviceType
  const char* name;   // as manifests write it: "cpu"
  const char* label;  // as messages name it: "CPU"
  // The RunnerDevice of a runner of `pkg` on device `device_id`.
  std::unique_ptr<RunnerDevice> (*make)(const DevicePackage& pkg, int device_id);
  // Whether this build has the backend (CUDA needs the toolkit at build time).
  bool (*compiled_in)();
};

const std::vector<DeviceKind>& device_kinds();
// The row for a device type or a manifest name; nullptr when there is none.
const DeviceKind* find_device(int32_t type);
const DeviceKind* find_device(const std::string& name);
// For messages: "\"cpu\" or \"cuda\""; "CPU (1) and CUDA (2)".
std::string device_names_quoted();
std::string device_labels();

// UNSUPPORTED for a device type aotrun does not run on, and for a package
// compiled for another device type than `device`'s.
void check_device_type(const DevicePackage& pkg, DLDevice device);

// The device a runner of `pkg` uses on `device`: check_device_type's errors;
// UNSUPPORTED when this build lacks the device's backend; DEVICE when the
// device cannot be used (the message says why).
std::unique_ptr<RunnerDevice> make_runner_device(const DevicePackage& pkg, DLDevice device);

// What each device folder provides for its row.
namespace cpu {
std::unique_ptr<RunnerDevice> make_runner_device(const DevicePackage& pkg, int device_id);
}
namespace cuda {
std::unique_ptr<RunnerDevice> make_runner_device(const DevicePackage& pkg, int device_id);
bool compiled_in();
}  // namespace cuda

}  // namespace aotrun
