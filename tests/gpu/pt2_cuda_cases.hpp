// The CUDA .pt2 fixtures of the GPU suite as test cases: what
// tests/gpu/pt2/export_cuda_fixtures.py wrote into AOTRUN_CUDA_PT2_DIR (each
// case's inputs and eager PyTorch's outputs as .npy), device buffers for
// them, and the comparison with eager (PyTorch's float32 tolerances, widened
// for TF32-free cuBLAS against cuBLAS: 2e-3 absolute + 2e-3 relative).
#pragma once

#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../shim/npy.hpp"

namespace aotrun_gpu {

inline std::string cuda_pt2_dir() {
  const char* d = std::getenv("AOTRUN_CUDA_PT2_DIR");
  return d != nullptr ? d : "";
}

inline bool readable(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

// One exported shape: the inputs and eager's outputs.
struct Pt2Case {
  std::vector<Npy> in, out;
};

// The cases of fixture `name` (NAME.s<k>.in<i>.npy, NAME.s<k>.out<j>.npy);
// empty when there are none.
inline std::vector<Pt2Case> load_cases(const std::string& name) {
  std::vector<Pt2Case> cases;
  const std::string dir = cuda_pt2_dir();
  if (dir.empty()) return cases;
  for (int k = 0;; ++k) {
    const std::string base = dir + "/" + name + ".s" + std::to_string(k);
    if (!readable(base + ".in0.npy")) break;
    Pt2Case c;
    for (int i = 0; readable(base + ".in" + std::to_string(i) + ".npy"); ++i)
      c.in.push_back(read_npy(base + ".in" + std::to_string(i) + ".npy"));
    for (int j = 0; readable(base + ".out" + std::to_string(j) + ".npy"); ++j)
      c.out.push_back(read_npy(base + ".out" + std::to_string(j) + ".npy"));
    cases.push_back(std::move(c));
  }
  return cases;
}

inline DLDataType dl_dtype_of(const Npy& a) {
  if (a.descr == "<f4") return DLDataType{kDLFloat, 32, 1};
  if (a.descr == "<i8") return DLDataType{kDLInt, 64, 1};
  ADD_FAILURE() << "unexpected .npy dtype " << a.descr;
  return DLDataType{kDLFloat, 32, 1};
}

// A row-major tensor in device memory (cudaMalloc), as a DLTensor.
class DeviceArray {
 public:
  // Holds a copy of `host`.
  explicit DeviceArray(const Npy& host) : DeviceArray(host.shape, dl_dtype_of(host)) {
    if (!host.data.empty()) {
      EXPECT_EQ(cudaMemcpy(data_, host.data.data(), host.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
  }
  // Uninitialised, of `shape` and `dtype`.
  DeviceArray(std::vector<int64_t> shape, DLDataType dtype) : shape_(std::move(shape)) {
    size_t n = 1;
    for (int64_t d : shape_) n *= static_cast<size_t>(d);
    bytes_ = n * dtype.bits / 8;
    if (cudaMalloc(&data_, bytes_ == 0 ? 1 : bytes_) != cudaSuccess) {
      (void)cudaGetLastError();
      ADD_FAILURE() << "cudaMalloc of " << bytes_ << " bytes failed";
    }
    dl_ = DLTensor{data_, {kDLCUDA, 0}, static_cast<int32_t>(shape_.size()), dtype, shape_.data(), nullptr, 0};
  }
  ~DeviceArray() {
    if (data_ != nullptr) (void)cudaFree(data_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  DLTensor* dl() { return &dl_; }
  // A byte pattern, so that a run that wrote nothing is noticed.
  void poison() {
    (void)cudaMemset(data_, 0x7f, bytes_);
    (void)cudaDeviceSynchronize();
  }
  std::vector<float> download() const { return download_floats(data_, bytes_ / sizeof(float)); }

  static std::vector<float> download_floats(const void* device, size_t n) {
    std::vector<float> host(n);
    if (n != 0 && cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
      (void)cudaGetLastError();
      ADD_FAILURE() << "cudaMemcpy device->host failed";
    }
    return host;
  }

 private:
  std::vector<int64_t> shape_;
  size_t bytes_ = 0;
  void* data_ = nullptr;
  DLTensor dl_{};
};

// Device copies of a case's inputs and room for its outputs.
struct CaseBuffers {
  std::vector<std::unique_ptr<DeviceArray>> in, out;
  explicit CaseBuffers(const Pt2Case& c) {
    for (const Npy& a : c.in) in.push_back(std::make_unique<DeviceArray>(a));
    for (const Npy& a : c.out) out.push_back(std::make_unique<DeviceArray>(a.shape, DLDataType{kDLFloat, 32, 1}));
    poison();
  }
  void poison() {
    for (auto& o : out) o->poison();
  }
  std::vector<DLTensor> inputs() const { return tensors(in); }
  std::vector<DLTensor> outputs() const { return tensors(out); }

 private:
  static std::vector<DLTensor> tensors(const std::vector<std::unique_ptr<DeviceArray>>& v) {
    std::vector<DLTensor> t;
    for (const auto& a : v) t.push_back(*a->dl());
    return t;
  }
};

// "" when `got` equals eager's `want` within the tolerance, else what differs.
inline std::string differs(const std::vector<float>& got, const Npy& want) {
  if (want.descr != "<f4") return "reference is " + want.descr + ", not float32";
  if (got.size() != static_cast<size_t>(want.numel())) {
    return std::to_string(got.size()) + " elements, eager has " + std::to_string(want.numel());
  }
  const float* ref = reinterpret_cast<const float*>(want.data.data());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]);
    if (!(err <= 2e-3 + 2e-3 * std::fabs(ref[i]))) ++bad;
    if (std::isnan(got[i]) || err > worst) worst = std::isnan(got[i]) ? INFINITY : err;
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(got.size()) + " elements differ from eager, worst " +
         std::to_string(worst);
}

// "" when every output in `bufs` equals eager's for case `c`.
inline std::string outputs_differ(const CaseBuffers& bufs, const Pt2Case& c) {
  for (size_t j = 0; j < c.out.size(); ++j) {
    const std::string d = differs(bufs.out[j]->download(), c.out[j]);
    if (!d.empty()) return "output " + std::to_string(j) + ": " + d;
  }
  return "";
}

}  // namespace aotrun_gpu
