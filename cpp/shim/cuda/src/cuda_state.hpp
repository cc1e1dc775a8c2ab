// The CUDA layer's per-thread and per-device state: the current stream of
// each device (set by stream guards), the stream-ordered pool of each device,
// and CUDA errors turned into ShimError-style exceptions.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace aotrun::shim::cuda {

// Thrown by the layer's helpers; caught at the C boundary (guard).
class CudaError : public std::runtime_error {
 public:
  explicit CudaError(const std::string& msg) : std::runtime_error(msg) {}
};

// Throws CudaError "<what> failed: <CUDA's text> (<name>)" unless rc is success.
void check(cudaError_t rc, const char* what);

// device_index, or the current device for -1.
int resolve_device(int device_index);

// The thread's current stream of `device` (NULL: the legacy default stream).
cudaStream_t current_stream(int device);
// Sets it; returns the previous one.
cudaStream_t exchange_current_stream(int device, cudaStream_t stream);

// The stream-ordered pool of `device` (created on first use, keeps freed
// memory for reuse: release threshold unlimited); nullptr with create=false
// before its first use.
cudaMemPool_t device_pool(int device, bool create = true);

// A pool of its own (cuda.h, aotrun_shim_cuda_pool_create).
struct OwnPool {
  cudaMemPool_t pool = nullptr;
  int device = 0;
};
// A new pool on `device` that keeps freed memory for reuse.
cudaMemPool_t create_pool(int device);
// The pool the calling thread's allocations on `device` come from: the
// thread's own pool when it is of that device, else the device's shared one.
cudaMemPool_t allocation_pool(int device);
// Sets the thread's own pool (nullptr: none); returns the previous one.
OwnPool* exchange_thread_pool(OwnPool* pool);

// The id of the capture active on `stream`, 0 when none. Throws when the
// capture was invalidated.
unsigned long long capture_id(cudaStream_t stream);

// Makes `device` current for the scope (nothing when it already is).
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace aotrun::shim::cuda

#include "aotrun_shim/device_layer.h"

namespace aotrun::shim::cuda {

// Runs `f` at a C boundary: any exception becomes AOTI_TORCH_FAILURE with
// "<fn>: <message>" as the shim's last error.
template <typename F>
AOTITorchError guarded(const char* fn, F&& f) noexcept {
  try {
    f();
    return AOTI_TORCH_SUCCESS;
  } catch (const std::exception& e) {
    aotrun_shim_set_last_error((std::string(fn) + ": " + e.what()).c_str());
  } catch (...) {
    aotrun_shim_set_last_error((std::string(fn) + ": unknown error").c_str());
  }
  return AOTI_TORCH_FAILURE;
}

}  // namespace aotrun::shim::cuda
