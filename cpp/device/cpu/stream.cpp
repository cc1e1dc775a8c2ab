#include "device/cpu/stream.hpp"

#include <cstdlib>
#include <new>

#include "base/log.hpp"
#include "base/host_alloc.hpp"

namespace aotrun::cpu {

Stream::Stream(Kind kind) : kind_(kind) {
  if (kind_ == Kind::Worker) thread_ = std::thread([this] { worker_loop(); });
}

Stream::~Stream() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_work_.notify_all();
    thread_.join();
  }
  // An abandoned capture still owns launch contexts; release them.
  if (capture_record_) capture_rules::unregister_capture(capture_record_.get());
}

bool Stream::push(Task& task) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    enqueued_.fetch_add(1, std::memory_order_release);
  } catch (...) {
    return false;  // no memory for the queue node; the task was not moved from
  }
  cv_work_.notify_one();
  return true;
}

namespace {

// A task that could not be enqueued or recorded: its context is released
// now (package_abi.h: exactly once, also when the launch is refused).
Status refuse(const Task& task, const char* why) noexcept {
  (void)task.release();
  Status st{Code::OutOfMemory, {}};
  try {
    st.message = why;
  } catch (...) {
  }
  return st;
}

}  // namespace

Status Stream::launch(Task&& task) noexcept {
  if (capturing_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(capture_mu_);
    if (capture_graph_) {
      if (task.internal) {
        return Status{Code::CaptureUnsupported, "aotrun bookkeeping cannot be captured into a graph"};
      }
      try {
        capture_graph_->add_node(task);
      } catch (...) {
        return refuse(task, "launch: out of host memory to record the work into the graph");
      }
      return Status::Ok();
    }
  }
  if (kind_ == Kind::Worker) {
    if (!push(task)) return refuse(task, "launch: out of host memory to enqueue the work");
    return Status::Ok();
  }
  // Inline: the work is complete when launch returns, so no counters move
  // (events recorded on an inline stream are complete at once).
  if (task.internal) {
    try {
      task.internal();
    } catch (...) {
      return current_exception_status("work on an inline stream");
    }
    return Status::Ok();
  }
  Status failure;
  if (task.run_and_release(&failure)) return Status::Ok();
  return failure;
}

namespace {
// The worker stream whose thread this is (nullptr on other threads).
thread_local const Stream* t_current_worker = nullptr;
}  // namespace

const Stream* Stream::current_worker() noexcept { return t_current_worker; }

void Stream::worker_loop() {
  t_current_worker = this;
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (task.internal) {
      // Internal tasks report their own failures (the async runner completes
      // its event); one that throws anyway must not end the process.
      try {
        task.internal();
      } catch (...) {
        Status s = current_exception_status("work on a worker stream");
        try {
          log(LogLevel::Error, s.message);
        } catch (...) {
        }
      }
    } else {
      Status s = task.execute();
      Status r = task.release();
      if (s.ok()) s = std::move(r);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_.ok()) error_ = std::move(s);
      }
    }
    {
      // Under the lock so a waiter cannot miss the notification.
      std::lock_guard<std::mutex> lock(mu_);
      completed_.fetch_add(1, std::memory_order_release);
    }
    cv_done_.notify_all();
  }
}

Status Stream::wait(uint64_t point) {
  if (reached(point)) return Status::Ok();
  if (t_current_worker == this) {
    // Work queued behind the caller on its own thread can never complete
    // while the caller waits for it.
    return Status{Code::InvalidArgument,
                  "a wait on a worker stream from that stream's own thread (work it runs, or "
                  "a callback of it) waits for work queued behind itself and could never end"};
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return reached(point); });
  return Status::Ok();
}

Status Stream::take_error() {
  std::lock_guard<std::mutex> lock(mu_);
  Status s = std::move(error_);
  error_ = Status::Ok();
  return s;
}

Status Stream::begin_capture(CaptureMode mode) {
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (capture_graph_) return Status{Code::InvalidArgument, "stream is already capturing"};
  // Built aside and installed only once nothing can fail any more: a failed
  // begin (out of memory) must leave the stream not capturing.
  std::unique_ptr<Graph> graph;
  std::unique_ptr<CaptureRecord> record;
  try {
    graph = std::make_unique<Graph>();
    record = std::make_unique<CaptureRecord>();
    record->mode = mode;
    record->owner = std::this_thread::get_id();
    capture_rules::register_capture(record.get());
  } catch (const std::bad_alloc&) {
    return Status{Code::OutOfMemory, "begin_capture: out of host memory"};
  }
  capture_graph_ = std::move(graph);
  capture_record_ = std::move(record);
  capturing_.store(true, std::memory_order_release);
  return Status::Ok();
}

uint64_t Stream::capture_id() {
  std::lock_guard<std::mutex> lock(capture_mu_);
  return capture_record_ ? capture_record_->id : 0;
}

Status Stream::end_capture(std::unique_ptr<Graph>* out) {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<CaptureRecord> rec;
  {
    std::lock_guard<std::mutex> lock(capture_mu_);
    if (!capture_graph_) return Status{Code::InvalidArgument, "stream is not capturing"};
    if (capture_record_->mode != CaptureMode::Relaxed && capture_record_->owner != std::this_thread::get_id()) {
      return Status{Code::InvalidArgument, "capture must be ended on the thread that began it"};
    }
    capturing_.store(false, std::memory_order_release);
    graph = std::move(capture_graph_);
    rec = std::move(capture_record_);
  }
  capture_rules::unregister_capture(rec.get());
  if (rec->invalidated.load()) {
    // Discarding the graph releases what was recorded, as CUDA does.
    return Status{Code::CaptureInvalidated,
                  "capture was invalidated by a prohibited call (" + rec->invalidated_by + ")"};
  }
  *out = std::move(graph);
  return Status::Ok();
}

void* Stream::capture_alloc(size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (!capture_graph_) return nullptr;
  void* p = aligned_alloc_bytes(bytes, kAllocAlign);  // NULL when the rounded size overflows
  if (p == nullptr) return nullptr;
  try {
    capture_graph_->own_allocation(p, bytes);
  } catch (...) {
    aligned_free(p, kAllocAlign);
    return nullptr;
  }
  return p;
}

bool Stream::capture_owns(const void* p) {
  std::lock_guard<std::mutex> lock(capture_mu_);
  return capture_graph_ && capture_graph_->owns_allocation(p);
}

Status Stream::launch_graph(const std::shared_ptr<const Graph>& graph) {
  if (is_capturing()) {
    return Status{Code::CaptureUnsupported, "launching a graph into a capturing stream is not supported"};
  }
  if (kind_ == Kind::Inline) return graph->replay();
  Task t;
  try {
    t.internal = [this, graph] {
      Status s = graph->replay();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_.ok()) error_ = std::move(s);
      }
    };
  } catch (...) {
    return Status{Code::OutOfMemory, "graph launch: out of host memory"};
  }
  if (!push(t)) return Status{Code::OutOfMemory, "graph launch: out of host memory to enqueue the graph"};
  return Status::Ok();
}

}  // namespace aotrun::cpu
