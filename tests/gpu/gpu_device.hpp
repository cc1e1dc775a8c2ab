// Helpers of the GPU suites that need no libaotrun: is there a CUDA device
// (asked through the CUDA runtime, never assumed), device tensors over
// cudaMalloc, package paths, error measure.
#pragma once

#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace aotrun_gpu {

// True when CUDA device 0 exists; otherwise *why says why not (the CUDA
// error of cudaGetDeviceCount, or "0 devices").
inline bool cuda_device_present(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
    return false;
  }
  if (count == 0) {
    *why = "the CUDA driver reports 0 devices";
    return false;
  }
  return true;
}

#define AOTRUN_REQUIRE_CUDA_DEVICE()                 \
  do {                                               \
    std::string _why;                                \
    if (!::aotrun_gpu::cuda_device_present(&_why)) { \
      GTEST_SKIP() << "no CUDA device: " << _why;    \
    }                                                \
  } while (0)

inline std::string pkg_path(const std::string& name) { return std::string(AOTRUN_TEST_PACKAGES_DIR) + "/" + name; }

#define AOTRUN_GPU_CHECK_CUDA(expr)                                        \
  do {                                                                     \
    const cudaError_t _e = (expr);                                         \
    ASSERT_EQ(_e, cudaSuccess) << #expr << ": " << cudaGetErrorString(_e); \
  } while (0)

// A float32 tensor in device memory (cudaMalloc), row-major.
class DeviceTensor {
 public:
  explicit DeviceTensor(std::vector<int64_t> shape) : shape_(std::move(shape)) {
    numel_ = 1;
    for (int64_t d : shape_) numel_ *= static_cast<size_t>(d);
    if (numel_ != 0 && cudaMalloc(&data_, numel_ * sizeof(float)) != cudaSuccess) {
      (void)cudaGetLastError();
      data_ = nullptr;
      ADD_FAILURE() << "cudaMalloc of " << numel_ * sizeof(float) << " bytes failed";
    }
    dl_.data = data_;
    dl_.device = DLDevice{kDLCUDA, 0};
    dl_.ndim = static_cast<int32_t>(shape_.size());
    dl_.dtype = DLDataType{kDLFloat, 32, 1};
    dl_.shape = shape_.data();
    dl_.strides = nullptr;
    dl_.byte_offset = 0;
  }
  ~DeviceTensor() {
    if (data_ != nullptr) (void)cudaFree(data_);
  }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  void upload(const std::vector<float>& host) {
    ASSERT_EQ(host.size(), numel_);
    if (numel_ == 0) return;
    AOTRUN_GPU_CHECK_CUDA(cudaMemcpy(data_, host.data(), numel_ * sizeof(float), cudaMemcpyHostToDevice));
    // A pageable copy may return before its DMA lands; aotrun's streams are
    // non-blocking, so nothing else orders them after it.
    AOTRUN_GPU_CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::vector<float> download() const {
    std::vector<float> host(numel_);
    if (numel_ != 0 && cudaMemcpy(host.data(), data_, numel_ * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
      (void)cudaGetLastError();
      ADD_FAILURE() << "cudaMemcpy device->host failed";
    }
    return host;
  }
  // Fills with a byte pattern, so that a run that wrote nothing is noticed.
  void poison() {
    if (numel_ == 0) return;
    (void)cudaMemset(data_, 0x7f, numel_ * sizeof(float));
    (void)cudaDeviceSynchronize();
  }

  DLTensor* dl() { return &dl_; }
  size_t numel() const { return numel_; }

 private:
  std::vector<int64_t> shape_;
  size_t numel_ = 0;
  void* data_ = nullptr;
  DLTensor dl_{};
};

// Largest |got - want| / max(1, |want|).
inline double worst_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const double d = std::abs(double(got[i]) - double(want[i])) / std::max(1.0, std::abs(double(want[i])));
    worst = std::max(worst, d);
  }
  return got.size() == want.size() ? worst : 1e30;
}

}  // namespace aotrun_gpu
