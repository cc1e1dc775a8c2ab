// CPU streams. An inline stream runs launched work at once on the calling
// thread (synchronous runs: no thread hand-off, which would cost more than
// the whole overhead budget). A worker stream is an ordered queue drained by
// its own thread (asynchronous runs). Both count enqueued and completed work
// so that events can mark a point in the stream, and both can be captured
// into a Graph following CUDA's rules (capture.hpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "device/cpu/capture.hpp"
#include "device/cpu/graph.hpp"
#include "device/cpu/task.hpp"

namespace aotrun::cpu {

class Stream {
 public:
  enum class Kind { Inline, Worker };

  explicit Stream(Kind kind);
  // A worker stream finishes all queued work before its thread exits.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Kind kind() const { return kind_; }

  // Enqueues (worker), runs (inline) or records (capturing) a task. On an
  // inline stream the task's own failure (or throw) is returned. Takes
  // ownership of the task's context in every case: a task that cannot be
  // enqueued or recorded (out of memory) is released before it returns.
  // Never throws: it runs under the package's host service calls.
  Status launch(Task&& task) noexcept;
  // Whether launch() would run a package's work now, on the calling thread
  // (an inline stream that is not capturing): such a caller may run it
  // itself (PackageWork::run_and_release), with no Task.
  bool runs_inline() const { return kind_ == Kind::Inline && !capturing_.load(std::memory_order_acquire); }

  // Point in the stream after everything enqueued so far, and whether / when
  // it is reached. Used by events. On an inline stream every point is
  // reached: work launched by a thread has completed when launch returns.
  uint64_t mark() const { return enqueued_.load(std::memory_order_acquire); }
  bool reached(uint64_t point) const { return completed_.load(std::memory_order_acquire) >= point; }
  // Blocks until `point` is reached. From this stream's own worker thread a
  // point not yet reached can never be: INVALID_ARGUMENT at once.
  Status wait(uint64_t point);
  // The worker stream whose thread calls this, or nullptr.
  static const Stream* current_worker() noexcept;
  // An opaque tag of who owns a worker stream (a runner), for the rules on
  // calls from its threads; nullptr when none.
  void set_owner(const void* owner) { owner_ = owner; }
  const void* owner() const { return owner_; }
  // Work enqueued and not yet completed (worker streams; 0 on inline ones).
  uint64_t backlog() const {
    const uint64_t done = completed_.load(std::memory_order_acquire);
    const uint64_t queued = enqueued_.load(std::memory_order_acquire);
    return queued > done ? queued - done : 0;
  }

  // First failure of worker-executed work since the last call (Ok if none).
  Status take_error();

  // Capture. begin fails if already capturing; end must be called on the
  // thread that began a non-relaxed capture.
  Status begin_capture(CaptureMode mode);
  Status end_capture(std::unique_ptr<Graph>* out);
  bool is_capturing() const { return capturing_.load(std::memory_order_acquire); }
  // Id of the open capture (CaptureRecord::id), 0 if none.
  uint64_t capture_id();
  // Capture-owned allocation bookkeeping (alloc while capturing): kAllocAlign
  // aligned, NULL when out of memory or `bytes` overflows when rounded.
  static constexpr size_t kAllocAlign = 256;
  void* capture_alloc(size_t bytes) noexcept;
  bool capture_owns(const void* p);

  // Runs a graph's nodes in stream order; the graph must outlive the work
  // (a shared_ptr keeps it alive on worker streams).
  Status launch_graph(const std::shared_ptr<const Graph>& graph);

 private:
  void worker_loop();
  // False (task untouched) when out of memory.
  bool push(Task& task) noexcept;

  const Kind kind_;
  const void* owner_ = nullptr;
  std::atomic<uint64_t> enqueued_{0};
  std::atomic<uint64_t> completed_{0};

  // Worker state.
  std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  Status error_;
  std::thread thread_;

  // Capture state, guarded by capture_mu_; capturing_ is the lock-free flag
  // that launch() checks first.
  std::atomic<bool> capturing_{false};
  std::mutex capture_mu_;
  std::unique_ptr<Graph> capture_graph_;
  std::unique_ptr<CaptureRecord> capture_record_;
};

}  // namespace aotrun::cpu
