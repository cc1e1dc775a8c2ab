#include "handle_pool.hpp"

#include "buffer_cache.hpp"

namespace aotrun::shim {
namespace {

// This thread's pool: plain thread_locals (no destructor of their own), as
// buffer_cache.cpp's, so that a handle deleted later in the thread's exit
// still finds out the pool is gone.
struct Pool {
  Tensor* items[kPooledHandles];
  size_t count = 0;
};
thread_local Pool* t_pool = nullptr;
thread_local bool t_exited = false;

struct Reaper {
  ~Reaper() {
    if (t_pool != nullptr) {
      for (size_t i = 0; i < t_pool->count; ++i) delete t_pool->items[i];
      delete t_pool;
      t_pool = nullptr;
    }
    t_exited = true;
  }
};

Pool* this_thread_pool() {
  if (t_pool == nullptr && !t_exited && reuse_enabled()) {
    thread_local Reaper reaper;  // registers the exit hook, once per thread
    t_pool = new (std::nothrow) Pool();
  }
  return t_pool;
}

}  // namespace

void HandleDeleter::operator()(Tensor* t) const noexcept { delete_handle(t); }

HandleOwner blank_handle() {
  Pool* pool = this_thread_pool();
  if (pool != nullptr && pool->count > 0) return HandleOwner(pool->items[--pool->count]);
  return HandleOwner(new Tensor());
}

void delete_handle(Tensor* t) noexcept {
  if (t == nullptr) return;
  Pool* pool = this_thread_pool();
  if (pool == nullptr || pool->count == kPooledHandles) {
    delete t;
    return;
  }
  // As a default-constructed Tensor, the vectors' capacity aside.
  t->storage.reset();
  t->sizes.clear();
  t->strides.clear();
  const Tensor blank;
  t->storage_offset = blank.storage_offset;
  t->dtype = blank.dtype;
  t->device_type = blank.device_type;
  t->device_index = blank.device_index;
  t->layout = blank.layout;
  pool->items[pool->count++] = t;
}

}  // namespace aotrun::shim
