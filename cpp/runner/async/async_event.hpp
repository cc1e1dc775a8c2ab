// Completion state of one asynchronous run, shared by the caller's event
// handle and the completion task on the stream (either may go first).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/error.hpp"

namespace aotrun {

using EventCallback = void (*)(void* user, int32_t code, const char* message);

class AsyncEvent {
 public:
  // The worker stream the run goes to. Set once, before it is launched.
  void set_queue(const void* queue) { queue_ = queue; }

  // Exactly once. Runs the callback (if set) on the completing thread.
  void complete(Status status);
  bool ready() const;
  // Waits up to timeout_ns (< 0: forever). Returns false on timeout.
  bool wait(int64_t timeout_ns) const;
  // The run's outcome; valid once ready().
  Status status() const;
  // Called once: now if already complete (on this thread), else at completion.
  void set_callback(EventCallback fn, void* user);

  // Waiting for this event from the calling thread could never end: the
  // thread is the worker the event's run still waits on (a callback of an
  // earlier run, or code that run called), so the run is queued behind it.
  bool wait_would_deadlock() const;

  // Copies of the caller's tensor descriptors: the caller must keep the data
  // alive until completion, but not the DLTensor structs or shape arrays.
  void keep_descriptors(const DLTensor* in, size_t nin, const DLTensor* out, size_t nout);
  const DLTensor* inputs() const { return inputs_.data(); }
  DLTensor* outputs() { return outputs_.data(); }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  Status status_;
  EventCallback callback_ = nullptr;
  void* callback_user_ = nullptr;
  const void* queue_ = nullptr;
  std::vector<DLTensor> inputs_, outputs_;
  std::vector<int64_t> dims_;  // shapes behind inputs_ / outputs_
};

}  // namespace aotrun
