// Clones and in-place copies.
#include <string>

#include "aotrun_shim/shim.h"
#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"

using namespace aotrun::shim;

namespace {
const Tensor& defined(AtenTensorHandle h, const char* what) {
  const Tensor& t = as_tensor(h, what);
  if (!t.defined()) throw ShimError(std::string(what) + " is an undefined tensor");
  return t;
}
}  // namespace

extern "C" {

// A copy in fresh storage; strides kept when self is non-overlapping and
// dense (PyTorch's preserve_format), row-major otherwise; offset 0.
AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret) {
  return guard(__func__, [&] {
    const Tensor& s = defined(self, "self");
    Tensor t = s.is_non_overlapping_and_dense()
                   ? empty_tensor(s.sizes, s.strides, s.dtype, s.device_type, s.device_index)
                   : empty_contiguous(s.sizes, s.dtype, s.device_type, s.device_index);
    copy_elements(t, s);
    *out_arg(ret, "ret") = new_handle(std::move(t));
  });
}

// A copy of the whole storage range self's view spans (gaps included) into
// fresh storage, viewed with self's sizes and strides at offset 0.
AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle* ret) {
  return guard(__func__, [&] {
    const Tensor& s = defined(self, "self");
    const int64_t span = static_cast<int64_t>(storage_nbytes_for(s.sizes, s.strides, 0, 1));
    Tensor flat_src = s;
    flat_src.sizes = {span};
    flat_src.strides = {1};
    Tensor t = empty_contiguous({span}, s.dtype, s.device_type, s.device_index);
    copy_elements(t, flat_src);
    t.sizes = s.sizes;
    t.strides = s.strides;
    *out_arg(ret, "ret") = new_handle(std::move(t));
  });
}

AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking) {
  (void)non_blocking;  // CPU copies are synchronous
  return guard(__func__, [&] { copy_elements(defined(self, "self"), defined(src, "src")); });
}

AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst) {
  return guard(__func__, [&] { copy_elements(defined(dst, "dst"), defined(src, "src")); });
}

AOTITorchError aoti_torch_zero_(AtenTensorHandle tensor) {
  return guard(__func__, [&] {
    const Tensor& t = defined(tensor, "tensor");
    Tensor zero = empty_contiguous({}, t.dtype);
    store_from_double(zero.data(), t.dtype, 0.0);
    copy_elements(t, zero);
  });
}

}  // extern "C"
