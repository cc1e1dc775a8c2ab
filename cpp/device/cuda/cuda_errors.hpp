// cudaError_t -> package status / aotrun Status, and the thread-local text of
// the last failed host-services call. Internal to the CUDA backend (includes
// CUDA headers; never included by the core).
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include <aotrun/package_abi.h>

#include "base/error.hpp"

namespace aotrun::cuda::detail {

// "operation not permitted when stream is capturing (cudaErrorStreamCaptureUnsupported)"
inline std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
}

inline int32_t pkg_code(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return AOTRUN_PKG_OK;
    case cudaErrorNotReady: return AOTRUN_PKG_NOT_READY;
    // 906/907: also a call that a capture does not permit (907 is what an H100
    // returned for cudaEventQuery of an event recorded in a thread-local capture).
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent: return AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED;
    case cudaErrorStreamCaptureInvalidated: return AOTRUN_PKG_ERR_CAPTURE_INVALIDATED;
    case cudaErrorMemoryAllocation: return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle: return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
    default: return AOTRUN_PKG_ERR_RUNTIME;
  }
}

inline Code code_of(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return Code::Ok;
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent: return Code::CaptureUnsupported;
    case cudaErrorStreamCaptureInvalidated: return Code::CaptureInvalidated;
    case cudaErrorMemoryAllocation: return Code::OutOfMemory;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle: return Code::InvalidArgument;
    default: return Code::Device;
  }
}

std::string& last_failure_slot();

// A failed call of the host services: keeps its text for the runner and
// clears CUDA's per-thread last error, so that a non-sticky error here does
// not show up in the package's next cudaGetLastError() after a kernel launch.
inline int32_t fail_pkg(const char* call, cudaError_t e) {
  (void)cudaGetLastError();
  last_failure_slot() = std::string(call) + " failed: " + describe(e);
  return pkg_code(e);
}

inline int32_t fail_pkg(int32_t code, std::string message) {
  last_failure_slot() = std::move(message);
  return code;
}

inline Status status_of(const char* call, cudaError_t e) {
  (void)cudaGetLastError();
  return Status{code_of(e), std::string(call) + " failed: " + describe(e)};
}

// Makes `device` current for the scope and restores the caller's device.
// Resources (streams, events, cuBLAS handles) belong to the device that was
// current when they were created, and host services run on any thread.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current != device) {
      if (cudaSetDevice(device) == cudaSuccess) previous_ = current;
    }
    (void)cudaGetLastError();
  }
  ~DeviceGuard() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace aotrun::cuda::detail
