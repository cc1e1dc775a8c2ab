// The aotrun_pkg_host table on CUDA devices. Every function is a C callback
// the package calls from any thread: no exception leaves it, every CUDA call
// is checked, and a failure leaves its text in last_failure().
#include <cstdint>
#include <new>

#include "device/cuda/cuda_context_impl.hpp"
#include "device/cuda/cuda_errors.hpp"
#include "base/guard.hpp"
#include "base/checked_math.hpp"

namespace aotrun::cuda::detail {
namespace {

ContextImpl* self(void* host_ctx) { return static_cast<ContextImpl*>(host_ctx); }

// cudaMalloc's alignment; the ABI promises 256 bytes.
constexpr uintptr_t kAlign = 256;

// --- launched host work -------------------------------------------------------

// ContextImpl::run_work calls fn inside a noexcept function, on CUDA's host
// callback thread: a package function that throws would end the process.
// It is handed this shim instead, which calls fn under guard_package_call;
// a throw becomes a RUNTIME failure of the work (run_work records it as
// PACKAGE) and its text is logged, since run_work reads the message from the
// package's own last error.
int32_t call_guarded(void* p) noexcept {
  const auto* w = static_cast<const HostWork*>(p);
  int32_t rc = AOTRUN_PKG_OK;
  const Status st = guard_package_call(
      w->owner->package_name(), "launched function", [w] { return w->fn(w->ctx); }, &rc);
  if (st.ok()) return rc;
  const LogHooks& h = w->owner->log_hooks();
  if (h.enabled != nullptr && h.emit != nullptr && h.enabled(AOTRUN_PKG_LOG_ERROR)) {
    try {
      h.emit(AOTRUN_PKG_LOG_ERROR, st.message);
    } catch (...) {
    }
  }
  return AOTRUN_PKG_ERR_RUNTIME;
}

void run_guarded(HostWork* w) {
  HostWork shim = *w;
  shim.fn = &call_guarded;
  shim.ctx = w;
  shim.destroy = nullptr;  // the real work is released by its owner
  w->owner->run_work(shim);
}

// Not captured: runs once, then the context is released.
void CUDART_CB run_once(void* p) {
  auto* w = static_cast<HostWork*>(p);
  run_guarded(w);
  w->release();
  delete w;
}

// Captured: runs on every replay; released with the graph.
void CUDART_CB run_replayed(void* p) { run_guarded(static_cast<HostWork*>(p)); }

// A capture that aotrun did not begin (a caller's own graph) owns its host
// work through a CUDA user object; `work` is cleared when that could not be
// arranged and the Context kept the work instead.
struct UserObjectBox {
  HostWork* work;
};
void CUDART_CB release_box(void* p) {
  auto* box = static_cast<UserObjectBox*>(p);
  if (box->work != nullptr) {
    box->work->release();
    delete box->work;
  }
  delete box;
}

void hand_to_foreign_graph(ContextImpl* c, cudaGraph_t graph, HostWork* w) {
  auto* box = new (std::nothrow) UserObjectBox{w};
  cudaUserObject_t obj = nullptr;
  if (box == nullptr ||
      cudaUserObjectCreate(&obj, box, &release_box, 1, cudaUserObjectNoDestructorSync) != cudaSuccess) {
    (void)cudaGetLastError();
    delete box;
    c->adopt_orphan(w);
    return;
  }
  if (cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove) != cudaSuccess) {
    (void)cudaGetLastError();
    box->work = nullptr;
    c->adopt_orphan(w);
    (void)cudaUserObjectRelease(obj, 1);
  }
}

// --- the table ----------------------------------------------------------------

int32_t host_log_enabled(void* c, int32_t level) {
  const LogHooks& h = self(c)->log_hooks();
  return (h.enabled != nullptr && h.emit != nullptr && h.enabled(level)) ? 1 : 0;
}

void host_log(void* c, int32_t level, const char* message) {
  if (level < AOTRUN_PKG_LOG_ERROR || level > AOTRUN_PKG_LOG_DEBUG || !host_log_enabled(c, level)) return;
  try {
    self(c)->log_hooks().emit(level, "package '" + self(c)->package_name() + "': " + (message ? message : ""));
  } catch (...) {
    // Logging never fails the package's operation.
  }
}

int32_t host_alloc(void* c, size_t bytes, aotrun_pkg_stream s, void** out) {
  if (out == nullptr) return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "alloc: out is NULL");
  ContextImpl* ctx = self(c);
  const cudaStream_t stream = ctx->resolve(s);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream, &cs);
  if (e != cudaSuccess) return fail_pkg("alloc: cudaStreamIsCapturing", e);
  // Refused before CUDA sees it, like the CPU host: a size whose 256-byte
  // rounding overflows (the pool rounds internally) is out of memory.
  size_t rounded = 0;
  if (!checked_round_up(bytes, kAlign, &rounded)) {
    *out = nullptr;
    return fail_pkg(AOTRUN_PKG_ERR_OUT_OF_MEMORY,
                    "alloc: " + std::to_string(bytes) + " bytes overflows when rounded up to 256-byte blocks");
  }
  void* p = nullptr;
  // Under capture this records an allocation node: the graph owns the memory
  // and every replay uses the same address.
  e = cudaMallocFromPoolAsync(&p, bytes == 0 ? 1 : bytes, ctx->pool(), stream);
  if (e != cudaSuccess) return fail_pkg("alloc: cudaMallocFromPoolAsync", e);
  if (reinterpret_cast<uintptr_t>(p) % kAlign != 0) {
    (void)cudaFreeAsync(p, stream);
    return fail_pkg(AOTRUN_PKG_ERR_INTERNAL,
                    "alloc: cudaMallocFromPoolAsync returned memory that is not 256-byte aligned");
  }
  if (cs != cudaStreamCaptureStatusNone) {
    try {
      ctx->note_capture_alloc(p);
    } catch (...) {
      (void)cudaFreeAsync(p, stream);
      return fail_pkg(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "alloc: out of host memory for bookkeeping");
    }
  }
  *out = p;
  return AOTRUN_PKG_OK;
}

int32_t host_free(void* c, void* ptr, aotrun_pkg_stream s) {
  if (ptr == nullptr) return AOTRUN_PKG_OK;
  ContextImpl* ctx = self(c);
  const cudaStream_t stream = ctx->resolve(s);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream, &cs);
  if (e != cudaSuccess) return fail_pkg("free: cudaStreamIsCapturing", e);
  if (cs != cudaStreamCaptureStatusNone && !ctx->take_capture_alloc(ptr)) {
    // CUDA would record the free and perform it on every replay.
    return fail_pkg(AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED,
                    "free: memory allocated outside the capture cannot be freed while the stream is capturing");
  }
  e = cudaFreeAsync(ptr, stream);
  if (e != cudaSuccess) return fail_pkg("free: cudaFreeAsync", e);
  return AOTRUN_PKG_OK;
}

int32_t host_launch(void* c, aotrun_pkg_stream s, aotrun_pkg_host_fn fn, void* fn_ctx,
                    aotrun_pkg_ctx_destroy_fn destroy) {
  ContextImpl* ctx = self(c);
  if (fn == nullptr) {
    HostWork{fn, fn_ctx, destroy, ctx}.release();  // refused: released before launch returns
    return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "launch: fn is NULL");
  }
  auto* w = new (std::nothrow) HostWork{fn, fn_ctx, destroy, ctx};
  if (w == nullptr) {
    HostWork{fn, fn_ctx, destroy, ctx}.release();
    return fail_pkg(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "launch: out of host memory");
  }
  const cudaStream_t stream = ctx->resolve(s);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamGetCaptureInfo(stream, &cs, &id, &graph);
  if (e == cudaSuccess) {
    e = cudaLaunchHostFunc(stream, cs == cudaStreamCaptureStatusNone ? &run_once : &run_replayed, w);
  }
  if (e != cudaSuccess) {
    // Refused: the context is released before launch returns.
    w->release();
    delete w;
    return fail_pkg("launch: cudaLaunchHostFunc", e);
  }
  if (cs == cudaStreamCaptureStatusNone) return AOTRUN_PKG_OK;
  bool ours = false;
  try {
    ours = ctx->adopt_captured(id, w);
  } catch (...) {
    ctx->adopt_orphan(w);
    return AOTRUN_PKG_OK;
  }
  if (!ours) hand_to_foreign_graph(ctx, graph, w);
  return AOTRUN_PKG_OK;
}

int32_t host_event_create(void* c, aotrun_pkg_event* out) {
  if (out == nullptr) return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "event_create: out is NULL");
  DeviceGuard guard(self(c)->device_id());
  cudaEvent_t ev = nullptr;
  const cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (e != cudaSuccess) return fail_pkg("event_create: cudaEventCreateWithFlags", e);
  *out = ev;
  return AOTRUN_PKG_OK;
}

int32_t host_event_destroy(void*, aotrun_pkg_event ev) {
  if (ev == nullptr) return AOTRUN_PKG_OK;
  const cudaError_t e = cudaEventDestroy(static_cast<cudaEvent_t>(ev));
  return e == cudaSuccess ? AOTRUN_PKG_OK : fail_pkg("event_destroy: cudaEventDestroy", e);
}

int32_t host_event_record(void* c, aotrun_pkg_event ev, aotrun_pkg_stream s) {
  if (ev == nullptr) return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "event_record: event is NULL");
  const cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(ev), self(c)->resolve(s));
  return e == cudaSuccess ? AOTRUN_PKG_OK : fail_pkg("event_record: cudaEventRecord", e);
}

int32_t host_event_query(void*, aotrun_pkg_event ev) {
  if (ev == nullptr) return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "event_query: event is NULL");
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(ev));
  if (e == cudaSuccess) return AOTRUN_PKG_OK;
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return AOTRUN_PKG_NOT_READY;
  }
  return fail_pkg("event_query: cudaEventQuery", e);
}

int32_t host_event_synchronize(void*, aotrun_pkg_event ev) {
  if (ev == nullptr) return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "event_synchronize: event is NULL");
  const cudaError_t e = cudaEventSynchronize(static_cast<cudaEvent_t>(ev));
  return e == cudaSuccess ? AOTRUN_PKG_OK : fail_pkg("event_synchronize: cudaEventSynchronize", e);
}

int32_t host_stream_synchronize(void* c, aotrun_pkg_stream s) {
  const cudaError_t e = cudaStreamSynchronize(self(c)->resolve(s));
  return e == cudaSuccess ? AOTRUN_PKG_OK : fail_pkg("stream_synchronize: cudaStreamSynchronize", e);
}

int32_t host_stream_is_capturing(void* c, aotrun_pkg_stream s, int32_t* out) {
  if (out == nullptr) return fail_pkg(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "stream_is_capturing: out is NULL");
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(self(c)->resolve(s), &cs);
  if (e != cudaSuccess) return fail_pkg("stream_is_capturing: cudaStreamIsCapturing", e);
  *out = cs != cudaStreamCaptureStatusNone ? 1 : 0;
  return AOTRUN_PKG_OK;
}

}  // namespace

aotrun_pkg_host make_host_table(ContextImpl* ctx) {
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

}  // namespace aotrun::cuda::detail
