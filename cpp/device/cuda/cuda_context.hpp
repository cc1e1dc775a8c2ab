// The CUDA backend of a runner, behind an interface with no CUDA header in it:
// the core includes this file whether or not aotrun was built with CUDA
// (AOTRUN_HAVE_CUDA, a public compile definition of target aotrun_cuda, says
// which). Without CUDA, compiled_in() and usable() are false and
// Context::create throws Code::Unsupported.
//
// libaotrun links the CUDA runtime statically and never libcuda.so: the
// runtime dlopens the driver on first use, so on a machine without a GPU or
// driver every function here fails with a status instead of the library
// failing to load. None of these functions crashes or hangs there.
//
// Streams and events cross the package ABI as the cudaStream_t / cudaEvent_t
// themselves (package_abi.h: "On CUDA devices they are the cudaStream_t /
// cudaEvent_t themselves"); here they are void*. A NULL stream always means
// the Context's own stream (never CUDA's legacy default stream).
//
// Threads: every method may be called from any thread, concurrently, unless
// its comment says otherwise. CUDA's own rules still apply: a capture begun
// in thread-local mode is ended on the thread that began it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <aotrun/package_abi.h>

#include "base/error.hpp"

namespace aotrun::cuda {

// True when this build contains the CUDA backend (AOTRUN_HAVE_CUDA=1).
bool compiled_in();

// True when device `device_id` can be used: CUDA compiled in, a driver that
// is new enough, at least device_id + 1 devices. Otherwise false, and *why
// (if not NULL) receives a sentence naming the cause and the CUDA error, e.g.
// "no CUDA device: cudaGetDeviceCount failed: CUDA driver version is
// insufficient for CUDA runtime version (cudaErrorInsufficientDriver)".
// Cheap enough to call once per runner creation; never throws.
bool usable(int device_id, std::string* why);

// Message of the last host-services call that failed on this thread ("" if
// none since clear_last_failure()). A package passes only the status number
// up (900, ...), so the runner appends this text to its error, as the CPU
// backend does with capture_rules::last_violation(). Thread-local.
const std::string& last_failure();
void clear_last_failure();

// Device memory handed over to a caller (run_alloc's outputs): cudaMalloc
// on device_id (1 byte for 0), not counted in any Context's pool.
// release_device_memory frees it from any thread, with or without a Context
// alive; NULL is a no-op. Errors: OutOfMemory, Device, Unsupported (no CUDA).
Status allocate_device_memory(int device_id, size_t bytes, void** out);
void release_device_memory(void* p);

// Where the host services table sends package log messages. Both NULL: the
// package's messages are dropped. The runner passes aotrun's log API:
//   {[](int32_t l) { return log_enabled(static_cast<LogLevel>(l)); },
//    [](int32_t l, const std::string& m) { log_emit(static_cast<LogLevel>(l), m); }}
struct LogHooks {
  bool (*enabled)(int32_t level) = nullptr;
  void (*emit)(int32_t level, const std::string& message) = nullptr;
};

// One per runner. Owns a non-blocking stream, a stream-ordered memory pool on
// the device, and the aotrun_pkg_host table the runner passes to the
// package's container_create. It must outlive the container and every graph
// it instantiated (destroy the container first, then the Context).
class Context {
 public:
  // Throws aotrun::Error: Code::Device when the device is unusable (the
  // message is usable()'s reason) or a CUDA call fails (the message names
  // the call and CUDA's error string); Code::Unsupported when built without
  // CUDA or the device has no memory-pool support. `last_error` is the
  // package's aotrun_pkg_get_last_error, read when launched work fails.
  static std::unique_ptr<Context> create(int device_id, std::string package_name,
                                         aotrun_pkg_get_last_error_fn last_error, LogHooks log = {});

  // Waits for the Context's stream, releases launch contexts still owned by
  // it, destroys the pool and the stream. Not concurrently with other calls.
  virtual ~Context() = default;

  virtual int device_id() const = 0;

  // The host services table; valid as long as the Context. host_ctx is the
  // Context. See package_abi.h for each function; CUDA specifics:
  //   alloc/free   cudaMallocFromPoolAsync / cudaFreeAsync on the stream, from
  //                this Context's pool. Under capture they become graph
  //                allocation nodes (the graph owns the memory). Freeing,
  //                inside a capture, memory allocated outside it is refused
  //                with 900 (it would be freed again on every replay).
  //   launch       cudaLaunchHostFunc. fn runs on a CUDA driver thread and
  //                must not call CUDA. Its first failure is kept and returned
  //                by synchronize(). ctx is destroyed after fn ran, or, when
  //                recorded by a capture, when the graph is destroyed.
  //   events       cudaEventDisableTiming; query maps cudaErrorNotReady to
  //                AOTRUN_PKG_NOT_READY.
  //   errors       cudaErrorStreamCaptureUnsupported -> 900,
  //                cudaErrorStreamCaptureInvalidated -> 901,
  //                cudaErrorMemoryAllocation -> OUT_OF_MEMORY,
  //                cudaErrorInvalidValue / InvalidResourceHandle ->
  //                INVALID_ARGUMENT, anything else -> RUNTIME; the message is
  //                last_failure().
  virtual const aotrun_pkg_host* host() const = 0;

  // The Context's own stream (cudaStream_t, created cudaStreamNonBlocking).
  virtual void* stream() const = 0;

  // cudaStreamSynchronize(stream), then the first failure of launched host
  // work since the last synchronize (of any stream of this Context), if any.
  // Errors: CaptureUnsupported (prohibited while capturing), Package (host
  // work failed: its message), Device.
  virtual Status synchronize(void* stream) = 0;

  // Streams for asynchronous runs and captures (non-blocking, on the
  // Context's device). new_stream throws Error(Code::Device).
  virtual void* new_stream() = 0;
  virtual void destroy_stream(void* stream) = 0;

  // Graph capture. begin_capture uses cudaStreamCaptureModeThreadLocal: only
  // unsafe calls of the capturing thread are prohibited, so other runners
  // keep running. end_capture (same thread) ends it and instantiates the
  // graph (cudaGraphInstantiateFlagAutoFreeOnLaunch); on success *exec is an
  // opaque graph owned by the caller, released with destroy_graph.
  // Errors: InvalidArgument (already / not capturing), CaptureInvalidated
  // (an unsafe call during the capture; nothing is returned), Device.
  virtual Status begin_capture(void* stream) = 0;
  virtual Status end_capture(void* stream, void** exec) = 0;
  // cudaGraphLaunch on `stream`. Errors: InvalidArgument, Device.
  virtual Status launch_graph(void* exec, void* stream) = 0;
  // Waits for launches of the graph that recorded host work (their contexts
  // are released here), then destroys it. NULL is a no-op.
  virtual void destroy_graph(void* exec) = 0;
  // cudaStreamIsCapturing: true while a capture is active or invalidated.
  virtual bool is_capturing(void* stream) = 0;

  // Device memory outside stream order (static graph input/output buffers):
  // cudaMalloc / cudaFree, counted in pool_bytes(). free(NULL) is a no-op.
  // Errors: OutOfMemory, Device.
  virtual Status alloc(size_t bytes, void** out) = 0;
  virtual void free(void* ptr) = 0;

  // cudaMemcpyAsync(cudaMemcpyDefault) on `stream`: host<->device or
  // device<->device. Pageable host memory cannot be copied under capture.
  // Errors: InvalidArgument, CaptureUnsupported, Device.
  virtual Status copy(void* dst, const void* src, size_t bytes, void* stream) = 0;

  // Bytes reserved by the Context's stream-ordered pool
  // (cudaMemPoolAttrReservedMemCurrent) plus the alloc() buffers. Memory of
  // allocation nodes inside instantiated graphs is held by the device's graph
  // pool and is not included.
  virtual uint64_t pool_bytes() = 0;

 protected:
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

}  // namespace aotrun::cuda
