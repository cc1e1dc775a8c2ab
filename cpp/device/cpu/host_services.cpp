#include "device/cpu/host_services.hpp"

#include <cstdlib>
#include <new>

#include "device/cpu/event.hpp"
#include "base/log.hpp"
#include "base/guard.hpp"
#include "base/checked_math.hpp"
#include "base/host_alloc.hpp"

namespace aotrun::cpu {
namespace {

HostContext* ctx_of(void* p) { return static_cast<HostContext*>(p); }
Stream* stream_of(void* host_ctx, aotrun_pkg_stream s) {
  return s != nullptr ? static_cast<Stream*>(s) : ctx_of(host_ctx)->default_stream;
}

// These functions are C callbacks called from package code: nothing may
// unwind out of them. shield() turns an exception of aotrun's own (a
// bad_alloc building a message, a queue node) into a status.
template <class F>
int32_t shield(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
  } catch (...) {
    return AOTRUN_PKG_ERR_INTERNAL;
  }
}

int32_t host_log_enabled(void*, int32_t level) { return log_enabled(static_cast<LogLevel>(level)) ? 1 : 0; }

void host_log(void* c, int32_t level, const char* message) {
  if (level < 0 || level > 3 || !log_enabled(static_cast<LogLevel>(level))) return;
  try {
    log_emit(static_cast<LogLevel>(level), "package '" + ctx_of(c)->package_name + "': " + (message ? message : ""));
  } catch (...) {
    // Logging never fails the package's operation.
  }
}

// Blocks are 256-byte aligned, like cudaMalloc; sizes are rounded up to that.
constexpr size_t kAlign = Stream::kAllocAlign;

int32_t free_task(void* p) {
  aligned_free(p, kAlign);
  return AOTRUN_PKG_OK;
}

// A size near SIZE_MAX must not wrap to a small block when rounded up: the
// package would get success and write past it. It gets OUT_OF_MEMORY and a
// NULL block, and the log says which size was refused.
int32_t refuse_alloc(void* c, size_t bytes, void** out) {
  *out = nullptr;
  if (log_enabled(LogLevel::Warn)) {
    size_t rounded = 0;
    const char* why = !checked_round_up(bytes == 0 ? kAlign : bytes, kAlign, &rounded)
                          ? "the size overflows when rounded up to 256-byte blocks"
                      : rounded > kMaxAllocBytes ? "more than any block can hold"
                                                 : "out of host memory";
    log_emit(LogLevel::Warn,
             "package '" + ctx_of(c)->package_name + "': alloc of " + std::to_string(bytes) + " bytes failed: " + why);
  }
  return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
}

int32_t host_alloc(void* c, size_t bytes, aotrun_pkg_stream s, void** out) {
  if (out == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  return shield([&] {
    Stream* stream = stream_of(c, s);
    // While capturing, memory belongs to the graph being recorded and lives as
    // long as it: replays reuse the same buffers.
    const bool capturing = stream->is_capturing();
    void* p = capturing ? stream->capture_alloc(bytes) : aligned_alloc_bytes(bytes, kAlign);
    if (p == nullptr) return refuse_alloc(c, bytes, out);
    *out = p;
    return AOTRUN_PKG_OK;
  });
}

int32_t host_free(void* c, void* ptr, aotrun_pkg_stream s) {
  if (ptr == nullptr) return AOTRUN_PKG_OK;
  return shield([&] {
    Stream* stream = stream_of(c, s);
    if (stream->is_capturing()) {
      // Graph-owned memory is released with the graph; freeing memory from
      // outside the capture inside it would free it on every replay.
      return stream->capture_owns(ptr) ? AOTRUN_PKG_OK : AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED;
    }
    Task t;
    t.fn = &free_task;
    t.ctx = ptr;
    Status st = stream->launch(std::move(t));  // stream-ordered, like cudaFreeAsync
    return st.ok() ? AOTRUN_PKG_OK : to_pkg_code(st.code);
  });
}

int32_t host_launch(void* c, aotrun_pkg_stream s, aotrun_pkg_host_fn fn, void* ctx, aotrun_pkg_ctx_destroy_fn destroy) {
  PackageWork work;
  work.fn = fn;
  work.ctx = ctx;
  work.destroy = destroy;
  work.last_error = ctx_of(c)->last_error;
  work.package = &ctx_of(c)->package_name;
  if (fn == nullptr) {
    (void)work.release();  // refused: released before launch returns
    return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  }
  Stream* stream = stream_of(c, s);
  Status st;
  if (stream->runs_inline()) {
    // What the stream's launch would do, without building a Task: a
    // synchronous run's work (issue #41 item 4).
    if (work.run_and_release(&st)) return AOTRUN_PKG_OK;
  } else {
    Task t;
    static_cast<PackageWork&>(t) = work;
    // launch releases the context on every path, and never throws.
    st = stream->launch(std::move(t));
    if (st.ok()) return AOTRUN_PKG_OK;
  }
  return shield([&] {
    last_launch_failure() = st.message;
    return to_pkg_code(st.code);
  });
}

int32_t host_event_create(void*, aotrun_pkg_event* out) {
  if (out == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  Event* e = new (std::nothrow) Event();
  if (e == nullptr) return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
  *out = e;
  return AOTRUN_PKG_OK;
}

int32_t host_event_destroy(void*, aotrun_pkg_event e) {
  delete static_cast<Event*>(e);
  return AOTRUN_PKG_OK;
}

int32_t host_event_record(void* c, aotrun_pkg_event e, aotrun_pkg_stream s) {
  if (e == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  return shield([&] {
    Stream* stream = stream_of(c, s);
    // Recording into a capturing stream is legal and records no node: the
    // event only orders captured work (as in CUDA's single-stream capture).
    if (stream->is_capturing()) {
      const uint64_t id = stream->capture_id();
      if (id != 0) {
        static_cast<Event*>(e)->record_in_capture(id);
        return AOTRUN_PKG_OK;
      }
    }
    static_cast<Event*>(e)->record(stream);
    return AOTRUN_PKG_OK;
  });
}

int32_t host_event_query(void*, aotrun_pkg_event e) {
  if (e == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  return shield([&] {
    // A captured event fails before the capture-mode rules are consulted.
    const uint64_t captured_in = static_cast<Event*>(e)->captured_in();
    Status st = captured_in != 0 ? capture_rules::captured_event("event_query", captured_in)
                                 : capture_rules::check_unsafe("event_query");
    if (!st.ok()) return to_pkg_code(st.code);
    return static_cast<Event*>(e)->query() ? AOTRUN_PKG_OK : AOTRUN_PKG_NOT_READY;
  });
}

int32_t host_event_synchronize(void*, aotrun_pkg_event e) {
  if (e == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  return shield([&] {
    // A captured event fails before the capture-mode rules are consulted.
    const uint64_t captured_in = static_cast<Event*>(e)->captured_in();
    Status st = captured_in != 0 ? capture_rules::captured_event("event_synchronize", captured_in)
                                 : capture_rules::check_unsafe("event_synchronize");
    if (!st.ok()) return to_pkg_code(st.code);
    st = static_cast<Event*>(e)->synchronize();
    return st.ok() ? AOTRUN_PKG_OK : to_pkg_code(st.code);
  });
}

int32_t host_stream_synchronize(void* c, aotrun_pkg_stream s) {
  return shield([&] {
    Status st = capture_rules::check_unsafe("stream_synchronize");
    if (!st.ok()) return to_pkg_code(st.code);
    Stream* stream = stream_of(c, s);
    st = stream->wait(stream->mark());
    return st.ok() ? AOTRUN_PKG_OK : to_pkg_code(st.code);
  });
}

int32_t host_stream_is_capturing(void* c, aotrun_pkg_stream s, int32_t* out) {
  if (out == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  *out = stream_of(c, s)->is_capturing() ? 1 : 0;
  return AOTRUN_PKG_OK;
}

}  // namespace

namespace {
thread_local bool t_launch_failed = false;  // last_launch_failure() may be non-empty
}  // namespace

std::string& last_launch_failure() {
  thread_local std::string message;
  t_launch_failed = true;  // a caller may write it
  return message;
}

void clear_launch_failure() noexcept {
  if (!t_launch_failed) return;
  last_launch_failure().clear();
  t_launch_failed = false;
}

int32_t to_pkg_code(Code code) {
  switch (code) {
    case Code::Ok: return AOTRUN_PKG_OK;
    case Code::InvalidArgument: return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
    case Code::OutOfMemory: return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
    case Code::CaptureUnsupported: return AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED;
    case Code::CaptureInvalidated: return AOTRUN_PKG_ERR_CAPTURE_INVALIDATED;
    case Code::Unsupported: return AOTRUN_PKG_ERR_UNSUPPORTED;
    case Code::Internal: return AOTRUN_PKG_ERR_INTERNAL;
    default: return AOTRUN_PKG_ERR_RUNTIME;
  }
}

Code from_pkg_code(int32_t rc) {
  switch (rc) {
    case AOTRUN_PKG_OK: return Code::Ok;
    case AOTRUN_PKG_ERR_INVALID_ARGUMENT: return Code::InvalidArgument;
    case AOTRUN_PKG_ERR_OUT_OF_MEMORY: return Code::OutOfMemory;
    case AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED: return Code::CaptureUnsupported;
    case AOTRUN_PKG_ERR_CAPTURE_INVALIDATED: return Code::CaptureInvalidated;
    default: return Code::Package;
  }
}

aotrun_pkg_host make_host_services(HostContext* ctx) {
  aotrun_pkg_host h{};
  h.struct_size = sizeof(aotrun_pkg_host);
  h.host_ctx = ctx;
  h.log_enabled = &host_log_enabled;
  h.log = &host_log;
  h.alloc = &host_alloc;
  h.free = &host_free;
  h.launch = &host_launch;
  h.event_create = &host_event_create;
  h.event_destroy = &host_event_destroy;
  h.event_record = &host_event_record;
  h.event_query = &host_event_query;
  h.event_synchronize = &host_event_synchronize;
  h.stream_synchronize = &host_stream_synchronize;
  h.stream_is_capturing = &host_stream_is_capturing;
  return h;
}

}  // namespace aotrun::cpu
