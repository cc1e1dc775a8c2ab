#include "device/device_table.hpp"

#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun {
namespace {

bool always() { return true; }

// "a", "a<last>b", "a, b<last>c".
std::string joined(const std::vector<std::string>& parts, const char* last) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) s += i + 1 == parts.size() ? last : ", ";
    s += parts[i];
  }
  return s;
}

}  // namespace

const std::vector<DeviceKind>& device_kinds() {
  // One row per device.
  static const std::vector<DeviceKind> kinds = {
      {kDLCPU, "cpu", "CPU", cpu::make_runner_device, always},
      {kDLCUDA, "cuda", "CUDA", cuda::make_runner_device, cuda::compiled_in},
  };
  return kinds;
}

const DeviceKind* find_device(int32_t type) {
  for (const DeviceKind& k : device_kinds()) {
    if (k.type == type) return &k;
  }
  return nullptr;
}

const DeviceKind* find_device(const std::string& name) {
  for (const DeviceKind& k : device_kinds()) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

std::string device_names_quoted() {
  std::vector<std::string> parts;
  for (const DeviceKind& k : device_kinds()) parts.push_back(std::string("\"") + k.name + "\"");
  return joined(parts, " or ");
}

std::string device_labels() {
  std::vector<std::string> parts;
  for (const DeviceKind& k : device_kinds())
    parts.push_back(std::string(k.label) + " (" + std::to_string(k.type) + ")");
  return joined(parts, " and ");
}

void check_device_type(const DevicePackage& pkg, DLDevice device) {
  const int32_t type = device_type_of(device);
  if (find_device(type) == nullptr) {
    fail(Code::Unsupported, "package '" + pkg.name + "': device type " + std::to_string(type) +
                                " is not supported (aotrun runs on " + device_labels() + ")");
  }
  if (device_type_of(pkg.device) != type) {
    fail(Code::Unsupported, "package '" + pkg.name + "' was compiled for device type " +
                                std::to_string(device_type_of(pkg.device)) + "; running it on device type " +
                                std::to_string(type) + " is not supported");
  }
}

std::unique_ptr<RunnerDevice> make_runner_device(const DevicePackage& pkg, DLDevice device) {
  check_device_type(pkg, device);
  return find_device(device_type_of(device))->make(pkg, device.device_id);
}

}  // namespace aotrun
