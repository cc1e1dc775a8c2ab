#include "device_layers.hpp"

#include <atomic>
#include <string>

#include "dtype.hpp"
#include "error.hpp"

namespace aotrun::shim {
namespace {

constexpr int32_t kMaxDeviceType = 32;
std::atomic<const aotrun_shim_device_layer*> g_layers[kMaxDeviceType] = {};

// Fields a layer must provide: everything up to copy_strided.
constexpr size_t kMinLayerSize = offsetof(aotrun_shim_device_layer, copy_strided) + sizeof(void*);

}  // namespace

const aotrun_shim_device_layer* device_layer(int32_t device_type) {
  if (device_type < 0 || device_type >= kMaxDeviceType) return nullptr;
  return g_layers[device_type].load(std::memory_order_acquire);
}

const aotrun_shim_device_layer* require_device_layer(int32_t device_type, const char* what) {
  if (const aotrun_shim_device_layer* layer = device_layer(device_type)) return layer;
  std::string msg = std::string(what) + ": device type " + std::to_string(device_type);
  if (device_type == kCUDA) {
    msg +=
        " (cuda) needs aotrun's CUDA layer, libaotrun_shim_cuda.so.1, which is not loaded (a CUDA model loads it "
        "through its libtorch_cuda.so stand-in; an aotrun built without CUDA has none)";
  } else {
    msg += " is not supported by aotrun's shim (CPU and CUDA tensors only)";
  }
  throw ShimError(msg);
}

}  // namespace aotrun::shim

extern "C" AOTRUN_SHIM_API AOTITorchError aotrun_shim_register_device_layer(const aotrun_shim_device_layer* layer) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    if (layer == nullptr || layer->struct_size < kMinLayerSize) throw ShimError("the layer table is null or too short");
    if (layer->device_type <= kCPU || layer->device_type >= kMaxDeviceType) {
      throw ShimError("device type " + std::to_string(layer->device_type) + " cannot have a layer");
    }
    const aotrun_shim_device_layer* expected = nullptr;
    if (!g_layers[layer->device_type].compare_exchange_strong(expected, layer) && expected != layer) {
      throw ShimError(std::string("device type ") + std::to_string(layer->device_type) + " already has a layer (" +
                      expected->name + ")");
    }
  });
}
