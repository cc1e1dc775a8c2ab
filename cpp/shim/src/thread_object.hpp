// One object of type T per thread, made on the thread's first call and
// deleted when the thread exits: the buffer cache's and the handle pool's
// per-thread state (buffer_cache.hpp, handle_pool.hpp).
//
// Why not a thread_local T: the object is reached from destructors that
// run during the thread's exit too (a tensor freed by another
// thread_local's destructor), possibly after T's own destructor. Here the
// thread_locals are a plain pointer and flag, which stay readable all
// through the exit: once the object is deleted, thread_object() returns
// null and the caller falls back to the C library.
#pragma once

#include <new>

namespace aotrun::shim {

// This thread's T, or null after the thread began deleting it (late in its
// exit) or when memory for it ran out.
template <class T>
T* thread_object() {
  thread_local T* object = nullptr;
  thread_local bool exited = false;
  if (object == nullptr && !exited) {
    struct Reaper {
      ~Reaper() {
        delete object;
        object = nullptr;
        exited = true;
      }
    };
    thread_local Reaper reaper;  // registers the exit hook, once per thread
    object = new (std::nothrow) T();
  }
  return object;
}

}  // namespace aotrun::shim
