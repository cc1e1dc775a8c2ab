// Scalar access: item getters of one-element tensors (converting from the
// tensor's dtype, as PyTorch does) and 0-d tensors made from scalars.
#include <cstring>
#include <string>

#include "aotrun_shim/shim.h"
#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"

using namespace aotrun::shim;

namespace {

template <typename T>
AOTITorchError item(const char* fn, AtenTensorHandle h, int32_t dtype, T* ret) {
  return guard(fn, [&] {
    const Tensor& t = as_tensor(h, "tensor");
    if (!t.defined()) throw ShimError("the tensor is undefined");
    if (t.numel() != 1) {
      throw ShimError("a tensor with " + std::to_string(t.numel()) + " elements cannot be converted to a scalar");
    }
    out_arg(ret, "ret_value");
    // A device tensor's element is read through a host copy (synchronous).
    Tensor host = t;
    if (t.device_type != kCPU) {
      host = empty_contiguous({}, t.dtype);
      Tensor one = t;
      one.sizes.clear();
      one.strides.clear();
      copy_elements(host, one);
    }
    if (t.dtype == dtype) {
      std::memcpy(ret, host.data(), sizeof(T));
      return;
    }
    // Another dtype: converted, as PyTorch's item() then to<T>() does.
    if (!is_convertible(t.dtype)) {
      throw ShimError(std::string("cannot convert a ") + dtype_name(t.dtype) + " item to " + dtype_name(dtype));
    }
    char buf[8];
    store_from_double(buf, dtype, load_as_double(host.data(), t.dtype));
    std::memcpy(ret, buf, sizeof(T));
  });
}

template <typename T>
AOTITorchError scalar(const char* fn, T value, int32_t dtype, AtenTensorHandle* ret) {
  return guard(fn, [&] {
    Tensor t = empty_contiguous({}, dtype);
    std::memcpy(t.data(), &value, sizeof(T));
    *out_arg(ret, "ret") = new_handle(std::move(t));
  });
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_item_float32(AtenTensorHandle t, float* r) { return item(__func__, t, kFloat32, r); }
AOTITorchError aoti_torch_item_float64(AtenTensorHandle t, double* r) { return item(__func__, t, kFloat64, r); }
AOTITorchError aoti_torch_item_uint8(AtenTensorHandle t, uint8_t* r) { return item(__func__, t, kUInt8, r); }
AOTITorchError aoti_torch_item_uint16(AtenTensorHandle t, uint16_t* r) { return item(__func__, t, kUInt16, r); }
AOTITorchError aoti_torch_item_uint32(AtenTensorHandle t, uint32_t* r) { return item(__func__, t, kUInt32, r); }
AOTITorchError aoti_torch_item_uint64(AtenTensorHandle t, uint64_t* r) { return item(__func__, t, kUInt64, r); }
AOTITorchError aoti_torch_item_int8(AtenTensorHandle t, int8_t* r) { return item(__func__, t, kInt8, r); }
AOTITorchError aoti_torch_item_int16(AtenTensorHandle t, int16_t* r) { return item(__func__, t, kInt16, r); }
AOTITorchError aoti_torch_item_int32(AtenTensorHandle t, int32_t* r) { return item(__func__, t, kInt32, r); }
AOTITorchError aoti_torch_item_int64(AtenTensorHandle t, int64_t* r) { return item(__func__, t, kInt64, r); }
AOTITorchError aoti_torch_item_bool(AtenTensorHandle t, bool* r) { return item(__func__, t, kBool, r); }
AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle t, uint16_t* r) { return item(__func__, t, kBFloat16, r); }
AOTITorchError aoti_torch_item_float16(AtenTensorHandle t, uint16_t* r) { return item(__func__, t, kFloat16, r); }

AOTITorchError aoti_torch_scalar_to_tensor_float32(float v, AtenTensorHandle* r) {
  return scalar(__func__, v, kFloat32, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_float64(double v, AtenTensorHandle* r) {
  return scalar(__func__, v, kFloat64, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint8(uint8_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kUInt8, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint16(uint16_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kUInt16, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint32(uint32_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kUInt32, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_uint64(uint64_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kUInt64, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_int8(int8_t v, AtenTensorHandle* r) { return scalar(__func__, v, kInt8, r); }
AOTITorchError aoti_torch_scalar_to_tensor_int16(int16_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kInt16, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_int32(int32_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kInt32, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_int64(int64_t v, AtenTensorHandle* r) {
  return scalar(__func__, v, kInt64, r);
}
AOTITorchError aoti_torch_scalar_to_tensor_bool(bool v, AtenTensorHandle* r) { return scalar(__func__, v, kBool, r); }

}  // extern "C"
