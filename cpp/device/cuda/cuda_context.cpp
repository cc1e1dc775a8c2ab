// CUDA Context: device check, stream, memory pool, capture and graphs. The
// host services table is in cuda_host_services.cpp.
#include "device/cuda/cuda_context.hpp"

#include <cstdint>
#include <limits>
#include <new>
#include <utility>

#include <cuda_runtime_api.h>

#include "device/cuda/cuda_context_impl.hpp"
#include "device/cuda/cuda_errors.hpp"

namespace aotrun::cuda {

namespace detail {

std::string& last_failure_slot() {
  thread_local std::string message;
  return message;
}

namespace {

[[noreturn]] void throw_cuda(const char* call, cudaError_t e) {
  (void)cudaGetLastError();
  Code code = e == cudaErrorMemoryAllocation ? Code::OutOfMemory : Code::Device;
  throw Error(code, std::string("CUDA: ") + call + " failed: " + describe(e));
}

}  // namespace

ContextImpl::ContextImpl(int device, std::string package_name, aotrun_pkg_get_last_error_fn last_error, LogHooks log)
    : device_(device), package_name_(std::move(package_name)), last_error_(last_error), log_(log) {
  table_ = make_host_table(this);
}

void ContextImpl::init() {
  DeviceGuard guard(device_);
  int pools = 0;
  cudaError_t e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device_);
  if (e != cudaSuccess) throw_cuda("cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported)", e);
  if (pools == 0) {
    throw Error(Code::Unsupported, "CUDA device " + std::to_string(device_) +
                                       " does not support stream-ordered memory pools (cudaMallocAsync), "
                                       "which aotrun's CUDA backend needs");
  }
  e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  if (e != cudaSuccess) throw_cuda("cudaStreamCreateWithFlags", e);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device_;
  e = cudaMemPoolCreate(&pool_, &props);
  if (e != cudaSuccess) throw_cuda("cudaMemPoolCreate", e);
  // Keep freed memory in the pool: without this every synchronisation hands
  // it back to the driver and the next run maps it again.
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  e = cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep);
  if (e != cudaSuccess) throw_cuda("cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)", e);
}

ContextImpl::~ContextImpl() {
  DeviceGuard guard(device_);
  if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
  // A capture begun and never ended: end it so that its work can be released.
  for (auto& [stream, key] : capture_ids_) {
    cudaGraph_t g = nullptr;
    if (cudaStreamEndCapture(stream, &g) == cudaSuccess && g != nullptr) (void)cudaGraphDestroy(g);
    (void)key;
  }
  for (auto& [id, works] : captures_) release_works(works);
  if (!orphans_.empty()) {
    // Graphs holding them may have been launched on any stream.
    (void)cudaDeviceSynchronize();
    release_works(orphans_);
  }
  for (auto& [p, bytes] : static_allocs_) (void)cudaFree(p);
  if (pool_ != nullptr) (void)cudaMemPoolDestroy(pool_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

void ContextImpl::release_works(std::vector<HostWork*>& works) noexcept {
  for (HostWork* w : works) {
    w->release();
    delete w;
  }
  works.clear();
}

void ContextImpl::run_work(const HostWork& w) noexcept {
  const int32_t rc = w.fn(w.ctx);
  if (rc == AOTRUN_PKG_OK) return;
  try {
    const char* msg = last_error_ != nullptr ? last_error_() : nullptr;
    Code code = rc == AOTRUN_PKG_ERR_INVALID_ARGUMENT ? Code::InvalidArgument
                : rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY  ? Code::OutOfMemory
                                                      : Code::Package;
    std::string text = "package '" + package_name_ + "': launched host work failed with status " + std::to_string(rc) +
                       ((msg && *msg) ? std::string(": ") + msg : std::string());
    std::lock_guard<std::mutex> lock(mu_);
    if (first_failure_.ok()) first_failure_ = Status{code, std::move(text)};
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_failure_.ok()) first_failure_ = Status{Code::Package, "launched host work failed"};
  }
}

bool ContextImpl::adopt_captured(unsigned long long capture_id, HostWork* w) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(capture_id);
  if (it == captures_.end()) return false;
  it->second.push_back(w);
  return true;
}

void ContextImpl::adopt_orphan(HostWork* w) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    orphans_.push_back(w);
  } catch (...) {
    // Out of memory for one pointer: the context leaks rather than being
    // released while a graph may still run it.
  }
}

void ContextImpl::note_capture_alloc(void* p) {
  std::lock_guard<std::mutex> lock(mu_);
  capture_allocs_.insert(p);
}

bool ContextImpl::take_capture_alloc(void* p) {
  std::lock_guard<std::mutex> lock(mu_);
  return capture_allocs_.erase(p) != 0;
}

Status ContextImpl::synchronize(void* s) {
  const cudaError_t e = cudaStreamSynchronize(resolve(s));
  if (e != cudaSuccess) return status_of("cudaStreamSynchronize", e);
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(first_failure_, Status::Ok());
}

void* ContextImpl::new_stream() {
  DeviceGuard guard(device_);
  cudaStream_t s = nullptr;
  const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e != cudaSuccess) throw_cuda("cudaStreamCreateWithFlags", e);
  return s;
}

void ContextImpl::destroy_stream(void* s) {
  if (s == nullptr || s == stream_) return;
  (void)cudaStreamDestroy(static_cast<cudaStream_t>(s));
  (void)cudaGetLastError();
}

Status ContextImpl::begin_capture(void* s) {
  const cudaStream_t stream = resolve(s);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (capture_ids_.count(stream) != 0) {
      return Status{Code::InvalidArgument, "begin_capture: the stream is already capturing"};
    }
  }
  cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    Status st = status_of("cudaStreamBeginCapture", e);
    if (e == cudaErrorIllegalState) st.code = Code::InvalidArgument;  // already capturing elsewhere
    return st;
  }
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  e = cudaStreamGetCaptureInfo(stream, &cs, &id);
  try {
    if (e != cudaSuccess) throw Error(Code::Device, "");
    std::lock_guard<std::mutex> lock(mu_);
    captures_[id];
    capture_ids_[stream] = CaptureKey{id, std::this_thread::get_id()};
  } catch (...) {
    cudaGraph_t g = nullptr;
    if (cudaStreamEndCapture(stream, &g) == cudaSuccess && g != nullptr) (void)cudaGraphDestroy(g);
    if (e != cudaSuccess) return status_of("cudaStreamGetCaptureInfo", e);
    return Status{Code::OutOfMemory, "begin_capture: out of host memory"};
  }
  return Status::Ok();
}

Status ContextImpl::end_capture(void* s, void** exec) {
  if (exec == nullptr) return Status{Code::InvalidArgument, "end_capture: exec is NULL"};
  const cudaStream_t stream = resolve(s);
  std::vector<HostWork*> works;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = capture_ids_.find(stream);
    if (it == capture_ids_.end()) {
      return Status{Code::InvalidArgument, "end_capture: begin_capture was not called on this stream"};
    }
    if (it->second.owner != std::this_thread::get_id()) {
      // Thread-local capture: CUDA refuses (cudaErrorStreamCaptureWrongThread)
      // and the capture stays open; say so without touching it.
      return Status{Code::InvalidArgument, "end_capture: called on another thread than the one that began the capture"};
    }
    auto cit = captures_.find(it->second.id);
    works = std::move(cit->second);
    captures_.erase(cit);
    capture_ids_.erase(it);
  }
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream, &graph);
  if (e != cudaSuccess || graph == nullptr) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    release_works(works);
    if (e == cudaSuccess) return Status{Code::Device, "cudaStreamEndCapture returned no graph"};
    Status st = status_of("cudaStreamEndCapture", e);
    return st;
  }
  auto* gx = new (std::nothrow) GraphExec();
  if (gx == nullptr) {
    (void)cudaGraphDestroy(graph);
    release_works(works);
    return Status{Code::OutOfMemory, "end_capture: out of host memory"};
  }
  // AutoFreeOnLaunch: an allocation the package did not free inside the
  // capture is freed at the next launch instead of failing it.
  e = cudaGraphInstantiateWithFlags(&gx->exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  (void)cudaGraphDestroy(graph);  // the executable graph does not need it
  if (e == cudaSuccess && !works.empty()) {
    DeviceGuard guard(device_);
    e = cudaEventCreateWithFlags(&gx->done, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      Status st = status_of("cudaEventCreateWithFlags", e);
      (void)cudaGraphExecDestroy(gx->exec);
      delete gx;
      release_works(works);
      return st;
    }
  }
  if (e != cudaSuccess) {
    Status st = status_of("cudaGraphInstantiateWithFlags", e);
    delete gx;
    release_works(works);
    return st;
  }
  gx->works = std::move(works);
  *exec = gx;
  return Status::Ok();
}

Status ContextImpl::launch_graph(void* exec, void* s) {
  if (exec == nullptr) return Status{Code::InvalidArgument, "launch_graph: graph is NULL"};
  auto* gx = static_cast<GraphExec*>(exec);
  const cudaStream_t stream = resolve(s);
  cudaError_t e = cudaGraphLaunch(gx->exec, stream);
  if (e != cudaSuccess) return status_of("cudaGraphLaunch", e);
  if (gx->done != nullptr) {
    e = cudaEventRecord(gx->done, stream);
    if (e != cudaSuccess) return status_of("cudaEventRecord", e);
  }
  return Status::Ok();
}

void ContextImpl::destroy_graph(void* exec) {
  if (exec == nullptr) return;
  auto* gx = static_cast<GraphExec*>(exec);
  bool idle = true;
  if (gx->done != nullptr) {
    // Host nodes of a launch still in flight use the contexts released below.
    idle = cudaEventSynchronize(gx->done) == cudaSuccess;
    (void)cudaEventDestroy(gx->done);
  }
  (void)cudaGraphExecDestroy(gx->exec);
  (void)cudaGetLastError();
  if (idle) {
    release_works(gx->works);
  } else {
    for (HostWork* w : gx->works) adopt_orphan(w);  // released after a device synchronize
  }
  delete gx;
}

bool ContextImpl::is_capturing(void* s) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(resolve(s), &cs) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return cs != cudaStreamCaptureStatusNone;
}

Status ContextImpl::alloc(size_t bytes, void** out) {
  if (out == nullptr) return Status{Code::InvalidArgument, "alloc: out is NULL"};
  DeviceGuard guard(device_);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
  if (e != cudaSuccess) {
    Status st = status_of("cudaMalloc", e);
    st.message += " (" + std::to_string(bytes) + " bytes on CUDA device " + std::to_string(device_) + ")";
    return st;
  }
  try {
    std::lock_guard<std::mutex> lock(mu_);
    static_allocs_[p] = bytes;
    static_bytes_ += bytes;
  } catch (...) {
    (void)cudaFree(p);
    return Status{Code::OutOfMemory, "alloc: out of host memory"};
  }
  *out = p;
  return Status::Ok();
}

void ContextImpl::free(void* ptr) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = static_allocs_.find(ptr);
    if (it == static_allocs_.end()) return;  // not ours: never hand CUDA a foreign pointer
    static_bytes_ -= it->second;
    static_allocs_.erase(it);
  }
  (void)cudaFree(ptr);
  (void)cudaGetLastError();
}

Status ContextImpl::copy(void* dst, const void* src, size_t bytes, void* s) {
  if (bytes == 0) return Status::Ok();
  if (dst == nullptr || src == nullptr) return Status{Code::InvalidArgument, "copy: NULL pointer"};
  const cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, resolve(s));
  return e == cudaSuccess ? Status::Ok() : status_of("cudaMemcpyAsync", e);
}

uint64_t ContextImpl::pool_bytes() {
  uint64_t reserved = 0;
  if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess) {
    (void)cudaGetLastError();
    reserved = 0;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return reserved + static_bytes_;
}

}  // namespace detail

bool compiled_in() { return true; }

bool usable(int device_id, std::string* why) {
  auto refuse = [why](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  if (device_id < 0) return refuse("CUDA device id " + std::to_string(device_id) + " is negative");
  int count = 0;
  // Without a driver this fails at once (the static runtime cannot dlopen
  // libcuda.so.1): cudaErrorInsufficientDriver or cudaErrorNoDevice.
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return refuse("no CUDA device: cudaGetDeviceCount failed: " + detail::describe(e));
  }
  if (count == 0) return refuse("no CUDA device: the CUDA driver reports 0 devices");
  if (device_id >= count) {
    return refuse("CUDA device " + std::to_string(device_id) + " does not exist (the driver reports " +
                  std::to_string(count) + " device" + (count == 1 ? "" : "s") + ": 0.." + std::to_string(count - 1) +
                  ")");
  }
  return true;
}

Status allocate_device_memory(int device_id, size_t bytes, void** out) {
  detail::DeviceGuard guard(device_id);
  const cudaError_t e = cudaMalloc(out, bytes == 0 ? 1 : bytes);
  if (e == cudaSuccess) return Status::Ok();
  *out = nullptr;
  Status st = detail::status_of("cudaMalloc", e);
  st.message += " (" + std::to_string(bytes) + " bytes on CUDA device " + std::to_string(device_id) + ")";
  return st;
}

void release_device_memory(void* p) {
  if (p != nullptr && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

const std::string& last_failure() { return detail::last_failure_slot(); }
void clear_last_failure() { detail::last_failure_slot().clear(); }

std::unique_ptr<Context> Context::create(int device_id, std::string package_name,
                                         aotrun_pkg_get_last_error_fn last_error, LogHooks log) {
  std::string why;
  if (!usable(device_id, &why)) throw Error(Code::Device, why);
  std::unique_ptr<detail::ContextImpl> ctx(
      new detail::ContextImpl(device_id, std::move(package_name), last_error, log));
  ctx->init();  // on failure the destructor releases what init created
  return ctx;
}

}  // namespace aotrun::cuda
