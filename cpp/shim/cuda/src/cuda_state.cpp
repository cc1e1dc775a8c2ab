#include "cuda_state.hpp"

#include <cstdint>
#include <mutex>
#include <vector>

namespace aotrun::shim::cuda {
namespace {

constexpr int kMaxDevices = 64;
thread_local cudaStream_t t_current[kMaxDevices] = {};
thread_local OwnPool* t_own_pool = nullptr;

std::mutex g_pool_mu;
cudaMemPool_t g_pools[kMaxDevices] = {};

void check_range(int device) {
  if (device < 0 || device >= kMaxDevices)
    throw CudaError("device index " + std::to_string(device) + " is out of range");
}

}  // namespace

void check(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();  // a sticky-free error is cleared for the next call
  throw CudaError(std::string(what) + " failed: " + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")");
}

int resolve_device(int device_index) {
  if (device_index >= 0) {
    check_range(device_index);
    return device_index;
  }
  int d = 0;
  check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

cudaStream_t current_stream(int device) {
  check_range(device);
  return t_current[device];
}

cudaStream_t exchange_current_stream(int device, cudaStream_t stream) {
  check_range(device);
  cudaStream_t old = t_current[device];
  t_current[device] = stream;
  return old;
}

cudaMemPool_t device_pool(int device, bool create) {
  check_range(device);
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (g_pools[device] != nullptr || !create) return g_pools[device];
  g_pools[device] = create_pool(device);
  return g_pools[device];
}

cudaMemPool_t allocation_pool(int device) {
  const OwnPool* own = t_own_pool;
  return own != nullptr && own->device == device ? own->pool : device_pool(device);
}

OwnPool* exchange_thread_pool(OwnPool* pool) {
  OwnPool* old = t_own_pool;
  t_own_pool = pool;
  return old;
}

cudaMemPool_t create_pool(int device) {
  check_range(device);
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  uint64_t keep = UINT64_MAX;  // freed memory stays in the pool for the next runs
  if (const cudaError_t rc = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep); rc != cudaSuccess) {
    (void)cudaMemPoolDestroy(pool);
    check(rc, "cudaMemPoolSetAttribute");
  }
  return pool;
}

unsigned long long capture_id(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  check(cudaStreamGetCaptureInfo(stream, &status, &id), "cudaStreamGetCaptureInfo");
  if (status == cudaStreamCaptureStatusInvalidated) {
    throw CudaError("the stream's capture was invalidated by an earlier call");
  }
  return status == cudaStreamCaptureStatusActive ? id : 0;
}

DeviceScope::DeviceScope(int device) {
  int current = 0;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    previous_ = current;
  }
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace aotrun::shim::cuda
