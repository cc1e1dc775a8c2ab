#include "runner/async/window.hpp"

#include "base/clock.hpp"

namespace aotrun {

bool InflightWindow::acquire(int64_t timeout_ns, uint64_t* blocked_ns) {
  *blocked_ns = 0;
  std::unique_lock<std::mutex> lock(mu_);
  if (used_ < limit_) {
    ++used_;
    ++outstanding_;
    return true;
  }
  if (timeout_ns == 0) return false;
  const uint64_t t0 = now_ns();
  auto has_slot = [this] { return used_ < limit_; };
  bool ok = true;
  if (timeout_ns < 0) {
    slot_cv_.wait(lock, has_slot);
  } else {
    ok = slot_cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns), has_slot);
  }
  *blocked_ns = now_ns() - t0;
  if (!ok) return false;
  ++used_;
  ++outstanding_;
  return true;
}

void InflightWindow::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --used_;
  }
  slot_cv_.notify_one();  // one slot: one submitter can use it
}

void InflightWindow::retire() {
  bool idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle = --outstanding_ == 0;
  }
  if (idle) idle_cv_.notify_all();
}

void InflightWindow::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return outstanding_ == 0; });
}

int32_t InflightWindow::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

}  // namespace aotrun
