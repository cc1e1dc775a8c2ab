// The bounded in-flight window of a runner: a slot is taken at submit (after
// argument validation) and given back when the run completes, so at most
// `limit` runs are queued or executing at any time (pytorch/xla#8380).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace aotrun {

class InflightWindow {
 public:
  explicit InflightWindow(int32_t limit) : limit_(limit) {}

  // Waits for a slot: forever (timeout_ns < 0), not at all (0), or up to
  // timeout_ns. Returns false if no slot was taken. *blocked_ns receives the
  // time spent waiting.
  bool acquire(int64_t timeout_ns, uint64_t* blocked_ns);
  // Gives the slot back (the run finished executing)...
  void release();
  // ...and, after its event was completed, retires the run.
  void retire();
  // Blocks until every acquired run has been retired: all their events are
  // complete and their callbacks have returned.
  void wait_idle();
  int32_t in_flight() const;
  int32_t limit() const { return limit_; }

 private:
  const int32_t limit_;
  mutable std::mutex mu_;
  std::condition_variable slot_cv_;  // submitters waiting for a slot
  std::condition_variable idle_cv_;  // wait_idle() callers
  int32_t used_ = 0;                 // slots taken
  int64_t outstanding_ = 0;          // acquired, not yet retired
};

}  // namespace aotrun
