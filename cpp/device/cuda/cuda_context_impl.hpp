// The CUDA Context's state, shared by cuda_context.cpp (streams, graphs,
// memory) and cuda_host_services.cpp (the aotrun_pkg_host table). Internal.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <cuda_runtime_api.h>

#include "device/cuda/cuda_context.hpp"

namespace aotrun::cuda::detail {

class ContextImpl;

// One aotrun_pkg_host.launch: the package's function, its context and the
// destructor the host must call exactly once (package_abi.h).
struct HostWork {
  aotrun_pkg_host_fn fn = nullptr;
  void* ctx = nullptr;
  aotrun_pkg_ctx_destroy_fn destroy = nullptr;
  ContextImpl* owner = nullptr;  // where a failure of fn is recorded
  // A destroy that throws (the ABI forbids it) must not end the process
  // here (noexcept): nobody waits for a release, so the throw is dropped.
  void release() noexcept {
    aotrun_pkg_ctx_destroy_fn d = destroy;
    destroy = nullptr;
    if (d == nullptr) return;
    try {
      d(ctx);
    } catch (...) {
    }
  }
};

// What end_capture hands out as `exec`.
struct GraphExec {
  cudaGraphExec_t exec = nullptr;
  // Host work recorded by this capture: runs on every replay, released when
  // the graph is destroyed (after its last launch completed: `done`).
  std::vector<HostWork*> works;
  cudaEvent_t done = nullptr;  // recorded after each launch when works is not empty
};

class ContextImpl final : public Context {
 public:
  ContextImpl(int device, std::string package_name, aotrun_pkg_get_last_error_fn last_error, LogHooks log);
  ~ContextImpl() override;
  void init();  // throws Error

  int device_id() const override { return device_; }
  const aotrun_pkg_host* host() const override { return &table_; }
  void* stream() const override { return stream_; }
  Status synchronize(void* stream) override;
  void* new_stream() override;
  void destroy_stream(void* stream) override;
  Status begin_capture(void* stream) override;
  Status end_capture(void* stream, void** exec) override;
  Status launch_graph(void* exec, void* stream) override;
  void destroy_graph(void* exec) override;
  bool is_capturing(void* stream) override;
  Status alloc(size_t bytes, void** out) override;
  void free(void* ptr) override;
  Status copy(void* dst, const void* src, size_t bytes, void* stream) override;
  uint64_t pool_bytes() override;

  // --- used by the host services -------------------------------------------
  cudaStream_t resolve(void* s) const { return s != nullptr ? static_cast<cudaStream_t>(s) : stream_; }
  cudaMemPool_t pool() const { return pool_; }
  const std::string& package_name() const { return package_name_; }
  const LogHooks& log_hooks() const { return log_; }

  // Runs launched work; keeps its first failure for synchronize().
  void run_work(const HostWork& w) noexcept;
  // A launch recorded by capture `capture_id` (cudaStreamGetCaptureInfo):
  // when begin_capture() began it, adopts `w` (released with the graph) and
  // returns true; false when the capture is someone else's.
  bool adopt_captured(unsigned long long capture_id, HostWork* w);
  // Released when the Context is destroyed (after a device synchronize).
  void adopt_orphan(HostWork* w);
  // Allocations made while their stream was capturing (graph-owned memory).
  void note_capture_alloc(void* p);
  bool take_capture_alloc(void* p);

 private:
  void release_works(std::vector<HostWork*>& works) noexcept;

  const int device_;
  const std::string package_name_;
  const aotrun_pkg_get_last_error_fn last_error_;
  const LogHooks log_;
  aotrun_pkg_host table_{};
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;

  std::mutex mu_;  // guards everything below
  // Captures begun by begin_capture: capture id -> recorded host work, and
  // the capturing stream -> its capture id and the thread that began it.
  struct CaptureKey {
    unsigned long long id;
    std::thread::id owner;
  };
  std::unordered_map<unsigned long long, std::vector<HostWork*>> captures_;
  std::unordered_map<cudaStream_t, CaptureKey> capture_ids_;
  std::unordered_set<void*> capture_allocs_;
  std::unordered_map<void*, size_t> static_allocs_;
  uint64_t static_bytes_ = 0;
  std::vector<HostWork*> orphans_;
  Status first_failure_;
};

// Fills the table; host_ctx is `ctx`.
aotrun_pkg_host make_host_table(ContextImpl* ctx);

}  // namespace aotrun::cuda::detail
