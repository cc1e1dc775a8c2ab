// The tensor object behind an AtenTensorHandle: a view (sizes, strides,
// storage offset in elements, dtype, device) over a reference-counted
// Storage. Handles are heap-allocated Tensor objects; copying a Tensor shares
// its storage, and the storage's memory is released when the last Tensor
// referring to it goes (unless it is borrowed: create_tensor_from_blob).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "aotrun_shim/device_layer.h"
#include "aotrun_shim/shim.h"

namespace aotrun::shim {

struct BlockedLayout;  // mkldnn_blob.hpp

class Storage {
 public:
  // Allocates `nbytes` (64-byte aligned; nullptr data for 0 bytes), from
  // this thread's buffer cache (buffer_cache.hpp). Throws on failure.
  static std::shared_ptr<Storage> allocate(size_t nbytes);
  // Allocates `nbytes` from a device layer (device_layers.hpp) on device
  // `device_index`; released through it. Throws the layer's message.
  static std::shared_ptr<Storage> allocate_on(const aotrun_shim_device_layer* layer, int32_t device_index,
                                              size_t nbytes);
  // Refers to memory owned by someone else; never freed here.
  static std::shared_ptr<Storage> borrow(void* data, size_t nbytes);
  // Read-only memory of `nbytes` whose bytes `fill` writes when they are
  // first needed: a frozen constant its model keeps in oneDNN's blocked
  // layout (mkldnn_blob.hpp), whose plain copy most models never need once
  // the kernels have derived their own (a packed weight). data() makes the
  // bytes on its first call, once, on whichever thread calls it, and keeps
  // them; read() lends them without keeping them. `fill` may throw
  // (ShimError); data() and read() then throw it and a later call tries
  // again. `fill` must stay callable for the storage's whole life, and
  // `source` (the memory it reads, not owned) valid as long.
  // `layout` describes how `source` holds the bytes (mkldnn_blob.hpp's
  // BlockedLayout), for kernels that can read the source as it is.
  static std::shared_ptr<Storage> deferred(size_t nbytes, std::function<void(void*)> fill, const void* source,
                                           std::shared_ptr<const BlockedLayout> layout = nullptr);
  // A deferred storage's source (null for others): what
  // aoti_torch_get_data_ptr reports for an mkldnn-layout constant, as
  // libtorch reports its blocked buffer. AOTInductor takes every constant's
  // pointer at load; handing it the plain bytes would make them all.
  const void* source() const { return source_; }
  // The source's layout, as given to deferred() (null for others).
  const BlockedLayout* source_layout() const { return source_layout_.get(); }

 private:
  struct Key {
    explicit Key() = default;
  };

 public:
  // Only through the factories above, which alone can make a Key: public
  // so that make_shared can construct it (one allocation for the object and
  // its count).
  Storage(Key, void* data, size_t nbytes, bool owned) : data_(data), nbytes_(nbytes), owned_(owned) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return fill_ ? made() : data_; }
  // The bytes for reading, valid while the returned pointer lives: data()'s,
  // except for a deferred storage whose bytes are not made yet, which lends
  // a temporary copy (freed with the pointer) rather than keep one. For
  // kernels that only derive a copy of their own from a constant.
  std::shared_ptr<const void> read() const;
  size_t nbytes() const { return nbytes_; }
  bool owned() const { return owned_; }
  // Grows owned memory to `nbytes` in place, keeping the old bytes (as
  // libtorch's storage resize does): every tensor sharing this storage sees
  // the new memory. Throws for borrowed memory, or when allocation fails.
  void grow(size_t nbytes);

  // Read-only memory: a frozen constant the shim unpacked from oneDNN's
  // blocked (mkldnn) layout when the model loaded it (mkldnn_blob.hpp), or
  // memory its owner declared constant (aotrun_shim_declare_constant: a
  // model's parameters). Nothing writes it, so kernels may keep copies
  // derived from it (the weight in a primitive's own layout) for as long as
  // the storage lives: derived() returns the copy kept under `key`, made
  // once by `make` (under this storage's lock) on first use. Not for other
  // storages: throws.
  void mark_read_only() { read_only_.store(true, std::memory_order_release); }
  bool read_only() const { return read_only_.load(std::memory_order_acquire); }
  std::shared_ptr<void> derived(const std::vector<int64_t>& key, const std::function<std::shared_ptr<void>()>& make);

 private:
  void* made() const;
  mutable void* data_;  // a deferred storage's: set once, under made_once_
  size_t nbytes_;
  bool owned_;
  // Device memory: the layer that allocated it, and its record.
  const aotrun_shim_device_layer* layer_ = nullptr;
  int32_t device_index_ = -1;
  void* record_ = nullptr;
  std::atomic<bool> read_only_{false};
  // A deferred storage's filler, and whether its bytes are made.
  std::function<void(void*)> fill_;
  const void* source_ = nullptr;
  std::shared_ptr<const BlockedLayout> source_layout_;
  mutable std::once_flag made_once_;
  mutable std::atomic<bool> is_made_{false};
  std::mutex derived_mu_;
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<void>>> derived_;
};

struct Tensor {
  std::shared_ptr<Storage> storage;  // null: an undefined tensor
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;  // in elements
  int32_t dtype = 6;           // float32
  int32_t device_type = 0;     // cpu
  int32_t device_index = -1;
  // c10::Layout as reported (aoti_torch_get_layout): kMkldnn for a constant
  // created in the mkldnn layout, whose data() is plain and contiguous, in
  // oneDNN's logical order of dims, made from the model's blocked bytes when
  // first needed (mkldnn_blob.hpp); strided (0) for everything else.
  int32_t layout = 0;
  // (A field added here is copied by share_view too, which new_handle and
  // handle_pool.cpp's delete_handle use.)

  bool defined() const { return storage != nullptr; }
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;
  size_t itemsize() const;
  // Address of the first element (storage data + offset), may be null for empty storage.
  void* data() const;
  // The same for reading through Storage::read(): valid while the returned
  // pointer lives; makes no lasting copy of a deferred constant.
  std::shared_ptr<const void> read() const;
  // Address of the element at `index` (one index per dim).
  void* element(const int64_t* index) const;
  bool is_contiguous() const;
  // Every element at a distinct address and the elements fill a contiguous
  // range (any order of dims): PyTorch's "non-overlapping and dense".
  bool is_non_overlapping_and_dense() const;
};

// Bytes a storage needs for a view of these sizes/strides starting at
// `offset` elements (PyTorch's computeStorageNbytes): 0 if any size is 0.
size_t storage_nbytes_for(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                          size_t itemsize);
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);
// Strides of a permutation `order` (outermost first) of dims laid out densely.
std::vector<int64_t> strides_in_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& order);
// Channels-last strides of an [N, C, spatial...] tensor: C innermost.
std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& sizes);

// A new handle (the caller owns it) / the object behind a handle. as_tensor
// throws (naming `what`) on a null handle.
AtenTensorHandle new_handle(Tensor t);
Tensor& as_tensor(AtenTensorHandle h, const char* what);

// PyTorch's resize_output for an `out=` argument: a tensor whose sizes differ
// from `sizes` takes them, with contiguous strides, its storage grown when too
// small. (libtorch does the same inside its *_out kernels: a model exported
// for one shape and run at another relies on it.) Throws naming `op` when the
// memory is borrowed and too small.
void resize_output(Tensor& out, const std::vector<int64_t>& sizes, const char* op);

// A new tensor with fresh storage, on the CPU unless a device is given (a
// device type other than CPU needs its layer: device_layers.hpp).
// (By value: a caller's temporaries move in.)
Tensor empty_tensor(std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype, int32_t device_type = 0,
                    int32_t device_index = -1);
// t becomes a view of base's storage with base's storage offset, dtype,
// device and layout; its sizes and strides are left as they are (a
// handle's hot path, aoti_torch__reinterpret_tensor: no copy of base's
// sizes and strides first).
void share_view(const Tensor& base, Tensor& t);
// Fresh storage for t's sizes and strides (set first) of `dtype`, on the
// CPU unless a device is given, as empty_tensor's; sets t's dtype and
// device too.
void allocate_storage(Tensor& t, int32_t dtype, int32_t device_type = 0, int32_t device_index = -1);
Tensor empty_contiguous(const std::vector<int64_t>& sizes, int32_t dtype, int32_t device_type = 0,
                        int32_t device_index = -1);

// Copies src's elements into dst elementwise (src broadcast to dst's shape,
// dtype converted). Throws when the shapes do not broadcast or a dtype is not
// supported. Either side may be device memory (device_copy.cpp).
void copy_elements(const Tensor& dst, const Tensor& src);
// copy_elements of two CPU tensors.
void copy_host_elements(const Tensor& dst, const Tensor& src);
// src's strides aligned to dst's dims (broadcast dims: stride 0). Throws when
// the shapes do not broadcast.
std::vector<int64_t> broadcast_strides(const Tensor& dst, const Tensor& src);

}  // namespace aotrun::shim
