#include "tensor_args.hpp"

#include "cuda_state.hpp"

namespace aotrun::shim::cuda {
namespace {

void ok(AOTITorchError rc, const std::string& what) {
  if (rc != AOTI_TORCH_SUCCESS) throw CudaError(what + ": " + aotrun_shim_last_error());
}

}  // namespace

int64_t DevTensor::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

const char* dtype_label(int32_t dtype) {
  switch (dtype) {
    case kFloat32: return "float32";
    case kBFloat16: return "bfloat16";
    case kFloat16: return "float16";
    case kInt64: return "int64";
    default: return "another dtype";
  }
}

DevTensor read_cuda(AtenTensorHandle h, const char* arg, int64_t dim) {
  const std::string who = std::string("argument '") + arg + "'";
  if (h == nullptr) throw CudaError(who + " is a null tensor handle");
  DevTensor t;
  t.h = h;
  int32_t device_type = 0;
  int64_t nd = 0, *sizes = nullptr, *strides = nullptr;
  ok(aoti_torch_get_device_type(h, &device_type), who);
  if (device_type != 1)
    throw CudaError(who + " is not a CUDA tensor (device type " + std::to_string(device_type) + ")");
  ok(aoti_torch_get_dim(h, &nd), who);
  if (dim >= 0 && nd != dim) {
    throw CudaError(who + " must be " + std::to_string(dim) + "-d, got " + std::to_string(nd) + "-d");
  }
  ok(aoti_torch_get_sizes(h, &sizes), who);
  ok(aoti_torch_get_strides(h, &strides), who);
  ok(aoti_torch_get_data_ptr(h, &t.data), who);
  ok(aoti_torch_get_dtype(h, &t.dtype), who);
  ok(aoti_torch_get_device_index(h, &t.device_index), who);
  t.sizes.assign(sizes, sizes + nd);
  t.strides.assign(strides, strides + nd);
  return t;
}

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    st[d] = acc;
    acc *= sizes[d] > 1 ? sizes[d] : 1;
  }
  return st;
}

DevTensor new_cuda(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
                   int32_t device_index) {
  AtenTensorHandle h = nullptr;
  ok(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype, 1, device_index,
                              &h),
     "allocating a CUDA tensor");
  OwnedHandle owned(h);
  DevTensor t = read_cuda(h, "new tensor");
  owned.release();
  return t;
}

void copy_into(const DevTensor& dst, const DevTensor& src) {
  ok(aoti_torch_copy_(dst.h, src.h, 0), "copying on the device");
}

OwnedHandle::~OwnedHandle() {
  if (h_ != nullptr) (void)aoti_torch_delete_tensor_object(h_);
}

}  // namespace aotrun::shim::cuda
