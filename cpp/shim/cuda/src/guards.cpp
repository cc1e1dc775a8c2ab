// Stream and device guards, and the thread's current stream (cuda.h).
#include "aotrun_shim/cuda.h"
#include "cuda_state.hpp"

using namespace aotrun::shim::cuda;

namespace {

struct StreamGuard {
  int device;
  int previous_device;
  cudaStream_t previous_stream;
};

struct DeviceGuard {
  int original;  // restored on delete
};

}  // namespace

extern "C" {

AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index, CUDAStreamGuardHandle* ret) {
  return guarded(__func__, [&] {
    if (ret == nullptr) throw CudaError("ret_guard is null");
    const int dev = resolve_device(device_index);
    int previous = 0;
    check(cudaGetDevice(&previous), "cudaGetDevice");
    if (previous != dev) check(cudaSetDevice(dev), "cudaSetDevice");
    auto* g = new StreamGuard{dev, previous, exchange_current_stream(dev, static_cast<cudaStream_t>(stream))};
    *ret = reinterpret_cast<CUDAStreamGuardHandle>(g);
  });
}

AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard) {
  return guarded(__func__, [&] {
    auto* g = reinterpret_cast<StreamGuard*>(guard);
    if (g == nullptr) throw CudaError("guard is null");
    exchange_current_stream(g->device, g->previous_stream);
    const int previous = g->previous_device, dev = g->device;
    delete g;
    if (previous != dev) check(cudaSetDevice(previous), "cudaSetDevice");
  });
}

AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle* ret) {
  return guarded(__func__, [&] {
    if (ret == nullptr) throw CudaError("ret_guard is null");
    int original = 0;
    check(cudaGetDevice(&original), "cudaGetDevice");
    const int dev = resolve_device(device_index);
    if (dev != original) check(cudaSetDevice(dev), "cudaSetDevice");
    *ret = reinterpret_cast<CUDAGuardHandle>(new DeviceGuard{original});
  });
}

AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index) {
  return guarded(__func__, [&] {
    if (guard == nullptr) throw CudaError("guard is null");
    check(cudaSetDevice(resolve_device(device_index)), "cudaSetDevice");
  });
}

AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard) {
  return guarded(__func__, [&] {
    auto* g = reinterpret_cast<DeviceGuard*>(guard);
    if (g == nullptr) throw CudaError("guard is null");
    const int original = g->original;
    delete g;
    check(cudaSetDevice(original), "cudaSetDevice");
  });
}

AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream) {
  return guarded(__func__, [&] {
    if (ret_stream == nullptr) throw CudaError("ret_stream is null");
    *ret_stream = current_stream(resolve_device(device_index));
  });
}

}  // extern "C"
