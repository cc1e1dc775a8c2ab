// The Tensor objects behind AtenTensorHandles, recycled per thread.
//
// Why: AOTInductor's generated code makes a handle for every intermediate
// buffer and view of a call (aoti_torch_empty_strided,
// aoti_torch__reinterpret_tensor) and deletes it before the call returns.
// Each was a Tensor allocated anew and its sizes and strides two vectors
// more; a call of frozen BERT made about 150 such allocations, a run of
// glibc's slow path once more of them are live than its per-thread cache
// holds (docs/PERFORMANCE.md section 34). A deleted handle's Tensor is kept
// by the deleting thread, its sizes' and strides' capacity with it, for
// the next handle made on that thread: at most kPooledHandles per thread,
// freed when the thread exits.
//
// Off (every Tensor new and deleted) under AddressSanitizer, where a
// handle used after its deletion must still be caught, and with
// AOTRUN_SHIM_BUFFER_CACHE=0 (buffer_cache.hpp).
#pragma once

#include <cstddef>
#include <memory>

#include "tensor.hpp"

namespace aotrun::shim {

constexpr size_t kPooledHandles = 256;

struct HandleDeleter {
  void operator()(Tensor* t) const noexcept;
};
// A handle's Tensor while it is being made: given back if making it throws.
using HandleOwner = std::unique_ptr<Tensor, HandleDeleter>;

// A Tensor as default-constructed but for the capacity of its sizes and
// strides, from this thread's pool or new. Throws std::bad_alloc.
HandleOwner blank_handle();

// The handle of a finished Tensor (the caller owns the handle).
inline AtenTensorHandle release_handle(HandleOwner t) { return reinterpret_cast<AtenTensorHandle>(t.release()); }

// Deletes a handle's Tensor, from any thread: its storage reference is
// dropped now, and the object kept by this thread or freed. Null is ignored.
void delete_handle(Tensor* t) noexcept;

}  // namespace aotrun::shim
