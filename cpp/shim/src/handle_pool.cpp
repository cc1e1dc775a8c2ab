#include "handle_pool.hpp"

#include "buffer_cache.hpp"
#include "thread_object.hpp"

namespace aotrun::shim {
namespace {

// This thread's kept Tensors (thread_object.hpp), deleted with it.
struct Pool {
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    for (size_t i = 0; i < count; ++i) delete items[i];
  }
  Tensor* items[kPooledHandles];
  size_t count = 0;
};

Pool* this_thread_pool() { return reuse_enabled() ? thread_object<Pool>() : nullptr; }

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
  t->sizes.clear();
  t->strides.clear();
  share_view(Tensor{}, *t);
  pool->items[pool->count++] = t;
}

}  // namespace aotrun::shim
