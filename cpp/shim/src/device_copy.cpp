// copy_elements when either side is device memory: same-dtype copies only
// (a device layer moves bytes, it does not convert), staged through a dense
// buffer when a side is CPU memory and the views are not both dense.
#include <string>

#include "device_layers.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"

namespace aotrun::shim {
namespace {

// dst <- src, both on `layer`'s device, src broadcast to dst's shape.
void copy_on_device(const aotrun_shim_device_layer* layer, const Tensor& dst, const Tensor& src) {
  const std::vector<int64_t> sstr = broadcast_strides(dst, src);
  if (dst.numel() == 0) return;
  const char* why = nullptr;
  if (dst.is_contiguous() && src.is_contiguous() && src.sizes == dst.sizes) {
    why = layer->copy_bytes(dst.device_index, dst.data(), dst.device_type, src.data(), src.device_type,
                            static_cast<size_t>(dst.numel()) * dst.itemsize());
  } else {
    if (dst.dim() > 8) throw ShimError("copies of device tensors of more than 8 dims are not supported");
    why = layer->copy_strided(dst.device_index, dst.data(), src.data(), dst.itemsize(), dst.dim(), dst.sizes.data(),
                              dst.strides.data(), sstr.data());
  }
  if (why != nullptr) throw ShimError(std::string("copying ") + layer->name + " memory: " + why);
}

// A dense copy of `t` on its own device (t itself when already contiguous).
Tensor dense_on_device(const aotrun_shim_device_layer* layer, const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor d = empty_contiguous(t.sizes, t.dtype, t.device_type, t.device_index);
  copy_on_device(layer, d, t);
  return d;
}

}  // namespace

void copy_elements(const Tensor& dst, const Tensor& src) {
  if (dst.device_type == kCPU && src.device_type == kCPU) {
    copy_host_elements(dst, src);
    return;
  }
  if (dst.dtype != src.dtype) {
    throw ShimError(std::string("copy from ") + dtype_name(src.dtype) + " to " + dtype_name(dst.dtype) +
                    " with a device tensor is not supported (aotrun's shim copies device memory without converting)");
  }
  if (dst.device_type != kCPU && src.device_type != kCPU && dst.device_type != src.device_type) {
    throw ShimError("copy between device types " + std::to_string(src.device_type) + " and " +
                    std::to_string(dst.device_type) + " is not supported");
  }
  if (dst.device_type != kCPU && src.device_type != kCPU) {
    copy_on_device(require_device_layer(dst.device_type, "copy"), dst, src);
    return;
  }
  (void)broadcast_strides(dst, src);  // the shapes must broadcast
  if (dst.numel() == 0) return;
  if (dst.device_type != kCPU) {  // host -> device: src broadcast into a dense host buffer first
    const aotrun_shim_device_layer* layer = require_device_layer(dst.device_type, "copy");
    Tensor host = src;
    if (!(src.is_contiguous() && src.sizes == dst.sizes)) {
      host = empty_contiguous(dst.sizes, dst.dtype);
      copy_host_elements(host, src);
    }
    const size_t nbytes = static_cast<size_t>(dst.numel()) * dst.itemsize();
    Tensor target =
        dst.is_contiguous() ? dst : empty_contiguous(dst.sizes, dst.dtype, dst.device_type, dst.device_index);
    if (const char* why =
            layer->copy_bytes(dst.device_index, target.data(), dst.device_type, host.data(), kCPU, nbytes)) {
      throw ShimError(std::string("copying to ") + layer->name + " memory: " + why);
    }
    if (target.storage != dst.storage) copy_on_device(layer, dst, target);
    return;
  }
  // device -> host
  const aotrun_shim_device_layer* layer = require_device_layer(src.device_type, "copy");
  const Tensor dense = dense_on_device(layer, src);
  Tensor host = empty_contiguous(src.sizes, src.dtype);
  if (const char* why = layer->copy_bytes(src.device_index, host.data(), kCPU, dense.data(), src.device_type,
                                          static_cast<size_t>(src.numel()) * src.itemsize())) {
    throw ShimError(std::string("copying from ") + layer->name + " memory: " + why);
  }
  copy_host_elements(dst, host);
}

}  // namespace aotrun::shim
