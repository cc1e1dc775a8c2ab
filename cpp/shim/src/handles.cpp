// Creating, aliasing and deleting tensor handles.
#include <string>
#include <utility>
#include <vector>

#include "aotrun_shim/shim.h"
#include "device_layers.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "handle_pool.hpp"
#include "huge_pages.hpp"
#include "mkldnn_blob.hpp"
#include "tensor.hpp"

using namespace aotrun::shim;

namespace {

// CPU, or a device type whose layer is loaded (device_layers.hpp).
void check_device(int32_t device_type, const char* what) {
  if (device_type != kCPU) (void)require_device_layer(device_type, what);
}

// PyTorch reports -1 for the CPU whatever was given; a device keeps its index.
int32_t device_index_of(int32_t device_type, int32_t device_index) { return device_type == kCPU ? -1 : device_index; }

void check_dtype(int32_t dtype) {
  if (element_size(dtype) == 0) throw ShimError(std::string("unknown dtype ") + dtype_name(dtype));
}

// `into` = the `ndim` values at p (into's capacity kept: a recycled
// handle's, handle_pool.hpp).
void assign_dims(std::vector<int64_t>& into, int64_t ndim, const int64_t* p, const char* what) {
  if (ndim < 0) throw ShimError("ndim " + std::to_string(ndim) + " is negative");
  if (ndim > 0 && p == nullptr) throw ShimError(std::string(what) + " is null");
  into.assign(p, p + ndim);
}

std::vector<int64_t> dims(int64_t ndim, const int64_t* p, const char* what) {
  std::vector<int64_t> v;
  assign_dims(v, ndim, p, what);
  return v;
}

void check_sizes(const std::vector<int64_t>& sizes) {
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) {
      throw ShimError("negative size " + std::to_string(sizes[d]) + " at dim " + std::to_string(d));
    }
  }
}

// A recycled handle (handle_pool.hpp) as a view of base's storage with
// these sizes and strides; the caller adjusts its offset and dtype.
HandleOwner view_handle(const Tensor& base, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr) {
  HandleOwner t = blank_handle();
  assign_dims(t->sizes, ndim, sizes_ptr, "sizes_ptr");
  assign_dims(t->strides, ndim, strides_ptr, "strides_ptr");
  check_sizes(t->sizes);
  share_view(base, *t);
  return t;
}

// With `placed` (a blob-hook window is open: the bytes are a model's
// constant), a CPU constant may slide in place, and *placed is where.
AtenTensorHandle from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                           int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
                           void** placed = nullptr) {
  check_device(device_type, "create_tensor_from_blob");
  check_dtype(dtype);
  auto sizes = dims(ndim, sizes_ptr, "sizes_ptr");
  auto strides = dims(ndim, strides_ptr, "strides_ptr");
  check_sizes(sizes);
  if (storage_offset < 0) throw ShimError("negative storage_offset " + std::to_string(storage_offset));
  Tensor t;
  if (device_type != kCPU) placed = nullptr;
  if (data == nullptr) {  // as PyTorch: no memory given (a 0-size tensor) -> allocate
    t = empty_tensor(sizes, strides, dtype, device_type, device_index);
  } else {
    // `data` is the start of the storage; the view begins storage_offset elements in.
    const size_t nbytes = storage_nbytes_for(sizes, strides, storage_offset, element_size(dtype));
    // A model's constant may slide in place (huge_pages.hpp): *placed says where it lives.
    if (placed != nullptr) data = *placed = slide_constant(data, nbytes, false);
    t.storage = Storage::borrow(data, nbytes);
    t.sizes = std::move(sizes);
    t.strides = std::move(strides);
    t.storage_offset = storage_offset;
    t.dtype = dtype;
  }
  t.device_type = device_type;
  t.device_index = device_index_of(device_type, device_index);
  return new_handle(std::move(t));
}

// This thread's aotrun_shim_set_blob_hook.
struct BlobHook {
  aotrun_shim_blob_hook fn = nullptr;
  void* context = nullptr;
};
thread_local BlobHook t_blob_hook;

// The result of a from-blob call over `data` that made *ret, after running
// this thread's hook when it made a tensor. With a hook set the tensor is a
// model's constant: its span is noted (huge_pages.hpp), where it lives now
// (`placed`: `data`, or where it slid in place).
AOTITorchError after_blob(AOTITorchError rc, const void* data, const void* placed, AtenTensorHandle* ret) {
  if (rc == AOTI_TORCH_SUCCESS && t_blob_hook.fn != nullptr) {
    try {
      const Tensor& t = as_tensor(*ret, "ret");
      if (t.storage != nullptr && t.layout == kMkldnn && t.storage->source() != placed) {
        release_moved_constant(data, mkldnn_blob_bytes(t));  // the shim holds an aligned copy (mkldnn_blob.hpp)
      } else if (t.storage != nullptr) {
        note_constant_span(placed, t.layout == kMkldnn ? mkldnn_blob_bytes(t) : t.storage->nbytes());
      }
    } catch (...) {  // cannot happen for a tensor just made; nothing may cross the C boundary
    }
    t_blob_hook.fn(t_blob_hook.context);
  }
  return rc;
}

}  // namespace

extern "C" {

void aotrun_shim_set_constant_slides(int allowed) { set_slides_allowed(allowed != 0); }

void aotrun_shim_set_blob_hook(aotrun_shim_blob_hook hook, void* context) {
  // The window of constants ends with the hook it was noted under.
  if (t_blob_hook.fn != nullptr) close_constant_window();
  t_blob_hook.fn = hook;
  t_blob_hook.context = hook != nullptr ? context : nullptr;
}

AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                  const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                                                  int32_t device_type, int32_t device_index, AtenTensorHandle* ret) {
  void* placed = data;
  const AOTITorchError rc = guard(__func__, [&] {
    *out_arg(ret, "ret") = from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type,
                                     device_index, t_blob_hook.fn != nullptr ? &placed : nullptr);
  });
  return after_blob(rc, data, placed, ret);
}

AOTITorchError aoti_torch_create_tensor_from_blob_v2(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                     const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                                                     int32_t device_type, int32_t device_index, AtenTensorHandle* ret,
                                                     int32_t layout, const uint8_t* opaque_metadata,
                                                     int64_t opaque_metadata_size) {
  void* placed = data;
  const AOTITorchError rc = guard(__func__, [&] {
    if (layout == kMkldnn) {
      // A frozen export's packed weight: unpacked once, here (mkldnn_blob.hpp).
      auto sizes = dims(ndim, sizes_ptr, "sizes_ptr");
      check_sizes(sizes);
      // Inside a blob-hook window the bytes are a model's constant, which
      // may slide in place or move to aligned memory (after_blob then
      // releases the original).
      Tensor t = tensor_from_mkldnn_blob(data, sizes, storage_offset, dtype, device_type, opaque_metadata,
                                         opaque_metadata_size, t_blob_hook.fn != nullptr);
      placed = const_cast<void*>(t.storage->source());
      if (placed != data && !slid_from(data, placed)) placed = data;  // a copy: reported as moved
      *out_arg(ret, "ret") = new_handle(std::move(t));
      return;
    }
    if (layout != kStrided) {
      throw ShimError("layout " + std::to_string(layout) + " is not supported (only strided and mkldnn tensors)");
    }
    *out_arg(ret, "ret") = from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type,
                                     device_index, t_blob_hook.fn != nullptr ? &placed : nullptr);
  });
  return after_blob(rc, data, placed, ret);
}

AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                        int32_t dtype, int32_t device_type, int32_t device_index,
                                        AtenTensorHandle* ret_new_tensor) {
  return guard(__func__, [&] {
    check_device(device_type, "empty_strided");
    check_dtype(dtype);
    AtenTensorHandle* const ret = out_arg(ret_new_tensor, "ret_new_tensor");
    HandleOwner t = blank_handle();
    assign_dims(t->sizes, ndim, sizes_ptr, "sizes_ptr");
    check_sizes(t->sizes);
    assign_dims(t->strides, ndim, strides_ptr, "strides_ptr");
    allocate_storage(*t, dtype, device_type, device_index_of(device_type, device_index));
    *ret = release_handle(std::move(t));
  });
}

AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret) {
  return guard(__func__, [&] { *out_arg(ret, "ret") = new_handle(Tensor{}); });
}

AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor) {
  return guard(__func__, [&] { delete_handle(&as_tensor(tensor, "tensor")); });
}

AOTITorchError aotrun_shim_declare_constant(AtenTensorHandle tensor) {
  return guard(__func__, [&] {
    Tensor& t = as_tensor(tensor, "tensor");
    if (t.device_type != kCPU) {
      throw ShimError("only CPU tensors are declared constant (this one is on device type " +
                      std::to_string(t.device_type) + ")");
    }
    if (t.storage != nullptr) t.storage->mark_read_only();
  });
}

AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle, AtenTensorHandle* new_handle_out) {
  return guard(__func__, [&] {
    const Tensor& t = as_tensor(orig_handle, "orig_handle");
    *out_arg(new_handle_out, "new_handle") = new_handle(t);
  });
}

// A new view of self's storage: sizes and strides as given, storage offset
// = self's offset + storage_offset (an increment, as in PyTorch).
AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim, const int64_t* sizes_ptr,
                                              const int64_t* strides_ptr, int64_t storage_offset,
                                              AtenTensorHandle* ret_new_tensor) {
  return guard(__func__, [&] {
    const Tensor& base = as_tensor(self, "self");
    AtenTensorHandle* const ret = out_arg(ret_new_tensor, "ret_new_tensor");
    HandleOwner t = view_handle(base, ndim, sizes_ptr, strides_ptr);
    t->storage_offset = base.storage_offset + storage_offset;
    if (t->storage_offset < 0) throw ShimError("the resulting storage offset is negative");
    *ret = release_handle(std::move(t));
  });
}

AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes, int32_t dtype, int64_t ndim,
                                           const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                           AtenTensorHandle* ret_new_tensor) {
  return guard(__func__, [&] {
    const Tensor& pool = as_tensor(self, "self");
    if (!pool.defined()) throw ShimError("self is an undefined tensor");
    if (pool.storage_offset != 0) throw ShimError("self must have storage offset 0 (a pool)");
    check_dtype(dtype);
    if (offset_bytes < 0) throw ShimError("negative offset_bytes " + std::to_string(offset_bytes));
    AtenTensorHandle* const ret = out_arg(ret_new_tensor, "ret_new_tensor");
    HandleOwner t = view_handle(pool, ndim, sizes_ptr, strides_ptr);
    t->dtype = dtype;
    t->storage_offset = offset_bytes / static_cast<int64_t>(element_size(dtype));
    *ret = release_handle(std::move(t));
  });
}

// dst becomes another reference to src's tensor (not a copy of the data).
AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst) {
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(src, "src");
    Tensor& d = as_tensor(dst, "dst");
    if (&s != &d) d = s;
  });
}

AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle* ret_dst) {
  return guard(__func__, [&] { *out_arg(ret_dst, "ret_dst") = new_handle(as_tensor(src, "src")); });
}

}  // extern "C"
