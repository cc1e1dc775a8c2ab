#include "runner/container/options.hpp"

#include <string>

#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun {

void validate_device_option(const DLDevice& device) {
  if (device.device_id < 0) {
    fail(Code::InvalidArgument, "device_id must be >= 0, got " + std::to_string(device.device_id));
  }
  // The host is one device: a CPU id other than 0 would be accepted here and
  // then refuse every CPU tensor (which DLPack gives id 0).
  if (device_type_of(device) == kDLCPU && device.device_id != 0) {
    fail(Code::InvalidArgument,
         "device_id " + std::to_string(device.device_id) + " is not a CPU device: the CPU is device (1, 0)");
  }
}

}  // namespace aotrun
