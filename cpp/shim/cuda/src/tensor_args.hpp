// Tensor handles as the CUDA kernels see them, read through the shim's
// public getters (the layer never touches the shim's tensor objects).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aotrun_shim/shim.h"

namespace aotrun::shim::cuda {

constexpr int32_t kFloat16 = 5, kFloat32 = 6, kInt64 = 4, kBFloat16 = 15;

struct DevTensor {
  AtenTensorHandle h = nullptr;
  void* data = nullptr;
  int32_t dtype = 0;
  int32_t device_index = 0;
  std::vector<int64_t> sizes, strides;
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;
};

// Reads `h`; throws CudaError "argument '<arg>' ..." unless it is a defined
// CUDA tensor of `dim` dims (any when dim < 0).
DevTensor read_cuda(AtenTensorHandle h, const char* arg, int64_t dim = -1);

// A new CUDA tensor (the caller owns the handle).
DevTensor new_cuda(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
                   int32_t device_index);
std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes);

// dst <- src through the shim (aoti_torch_copy_), on the current stream.
void copy_into(const DevTensor& dst, const DevTensor& src);

// Owns a handle made here; deletes it at scope exit unless released.
class OwnedHandle {
 public:
  explicit OwnedHandle(AtenTensorHandle h = nullptr) : h_(h) {}
  ~OwnedHandle();
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  // Takes `h` (deleting the handle held before).
  void reset(AtenTensorHandle h) {
    OwnedHandle old(h_);
    h_ = h;
  }
  AtenTensorHandle release() {
    AtenTensorHandle h = h_;
    h_ = nullptr;
    return h;
  }

 private:
  AtenTensorHandle h_;
};

const char* dtype_label(int32_t dtype);

}  // namespace aotrun::shim::cuda
