// The device layers registered with the shim (include/aotrun_shim/device_layer.h):
// one per device type, looked up when a tensor of that type is made or copied.
#pragma once

#include <cstdint>

#include "aotrun_shim/device_layer.h"

namespace aotrun::shim {

// The layer of `device_type`, or nullptr when none is registered.
const aotrun_shim_device_layer* device_layer(int32_t device_type);

// The layer of `device_type`; throws ShimError naming `what`, the device type
// and the library that provides it when none is registered.
const aotrun_shim_device_layer* require_device_layer(int32_t device_type, const char* what);

}  // namespace aotrun::shim
