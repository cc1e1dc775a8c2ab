// Read-only properties of a tensor handle.
#include <string>

#include "aotrun_shim/shim.h"
#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"

using namespace aotrun::shim;

namespace {
int64_t wrap_dim(const Tensor& t, int64_t d) {
  const int64_t n = t.dim();
  const int64_t w = d < 0 ? d + n : d;
  if (w < 0 || w >= n) {
    throw ShimError("dimension " + std::to_string(d) + " is out of range for a " + std::to_string(n) + "-d tensor");
  }
  return w;
}
const Tensor& defined_tensor(AtenTensorHandle h) {
  const Tensor& t = as_tensor(h, "tensor");
  if (!t.defined()) throw ShimError("the tensor is undefined");
  return t;
}
}  // namespace

extern "C" {

AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined) {
  return guard(__func__, [&] { *out_arg(ret_is_defined, "ret_is_defined") = as_tensor(tensor, "tensor").defined(); });
}

AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr) {
  return guard(__func__, [&] {
    const Tensor& t = defined_tensor(tensor);
    // An mkldnn-layout constant: its blocked bytes, as libtorch gives them
    // (Storage::source; its plain copy is made only if a kernel needs it).
    const void* blocked = t.layout == kMkldnn && t.storage != nullptr ? t.storage->source() : nullptr;
    *out_arg(ret_data_ptr, "ret_data_ptr") = blocked != nullptr ? const_cast<void*>(blocked) : t.data();
  });
}

AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret_size) {
  return guard(__func__, [&] {
    *out_arg(ret_size, "ret_size") = static_cast<int64_t>(defined_tensor(tensor).storage->nbytes());
  });
}

AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret_numel) {
  return guard(__func__, [&] {
    const Tensor& t = defined_tensor(tensor);
    *out_arg(ret_numel, "ret_numel") = static_cast<int64_t>(t.storage->nbytes() / t.itemsize());
  });
}

AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret_storage_offset) {
  return guard(__func__,
               [&] { *out_arg(ret_storage_offset, "ret_storage_offset") = defined_tensor(tensor).storage_offset; });
}

// The arrays stay valid while the handle lives and is not reassigned.
AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes) {
  return guard(__func__, [&] { *out_arg(ret_sizes, "ret_sizes") = as_tensor(tensor, "tensor").sizes.data(); });
}

AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret_size) {
  return guard(__func__, [&] {
    const Tensor& t = as_tensor(tensor, "tensor");
    *out_arg(ret_size, "ret_size") = t.sizes[wrap_dim(t, d)];
  });
}

AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides) {
  return guard(__func__, [&] { *out_arg(ret_strides, "ret_strides") = as_tensor(tensor, "tensor").strides.data(); });
}

AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride) {
  return guard(__func__, [&] {
    const Tensor& t = as_tensor(tensor, "tensor");
    *out_arg(ret_stride, "ret_stride") = t.strides[wrap_dim(t, d)];
  });
}

AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim) {
  return guard(__func__, [&] { *out_arg(ret_dim, "ret_dim") = as_tensor(tensor, "tensor").dim(); });
}

AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel) {
  return guard(__func__, [&] { *out_arg(ret_numel, "ret_numel") = as_tensor(tensor, "tensor").numel(); });
}

AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype) {
  return guard(__func__, [&] { *out_arg(ret_dtype, "ret_dtype") = defined_tensor(tensor).dtype; });
}

AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type) {
  return guard(__func__, [&] { *out_arg(ret_device_type, "ret_device_type") = defined_tensor(tensor).device_type; });
}

AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index) {
  return guard(__func__, [&] { *out_arg(ret_device_index, "ret_device_index") = defined_tensor(tensor).device_index; });
}

AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout) {
  return guard(__func__, [&] {
    // strided, or mkldnn for a frozen constant created in that layout
    // (mkldnn_blob.hpp)
    *out_arg(ret_layout, "ret_layout") = defined_tensor(tensor).layout;
  });
}

AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous) {
  return guard(__func__,
               [&] { *out_arg(ret_is_contiguous, "ret_is_contiguous") = defined_tensor(tensor).is_contiguous(); });
}

}  // extern "C"
