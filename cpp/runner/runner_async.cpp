// Runner::run_async and the worker streams behind it.
#include <algorithm>
#include <cstdint>

#include "base/guard.hpp"
#include "runner/runner.hpp"
#include "runner/container/validate.hpp"
#include "base/error.hpp"

namespace aotrun {

cpu::Stream* Runner::pick_async_stream() {
  std::call_once(workers_once_, [this] {
    // Threaded mode can run num_models calls at once; the serial modes gain
    // nothing from more than one worker.
    const int n = effective_ == RunMode::Threaded ? options_.num_models : 1;
    for (int i = 0; i < n; ++i) {
      workers_.push_back(std::make_unique<cpu::Stream>(cpu::Stream::Kind::Worker));
      workers_.back()->set_owner(this);
    }
  });
  // The least busy worker, so a run never queues behind a busy worker while
  // another is idle; ties go round-robin to spread the start.
  const size_t n = workers_.size();
  const size_t start = next_worker_.fetch_add(1, std::memory_order_relaxed);
  cpu::Stream* best = nullptr;
  uint64_t best_backlog = UINT64_MAX;
  for (size_t k = 0; k < n && best_backlog != 0; ++k) {
    cpu::Stream* w = workers_[(start + k) % n].get();
    const uint64_t backlog = w->backlog();
    if (backlog < best_backlog) {
      best = w;
      best_backlog = backlog;
    }
  }
  return best;
}

std::shared_ptr<AsyncEvent> Runner::run_async(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                              size_t num_outputs, Submit how, uint64_t timeout_ns) {
  validate_run(inputs, num_inputs, outputs, num_outputs);
  // On one of this runner's workers (an event callback, or code a run
  // called), waiting for a slot could wait for runs queued behind this very
  // thread. It may only try.
  const bool in_own_callback = how != Submit::Try && on_own_worker();
  int64_t wait_ns = -1;  // acquire: < 0 forever, 0 not at all, > 0 bounded
  if (how == Submit::Try || in_own_callback) {
    wait_ns = 0;
  } else if (how == Submit::Timed) {
    wait_ns = timeout_ns > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(timeout_ns);
  }
  uint64_t blocked = 0;
  const bool got = window_->acquire(wait_ns, &blocked);
  RunnerCounters::add(counters_.submit_blocked_ns, blocked);
  if (!got) {
    const std::string full = "the in-flight window of runner for package '" + pkg_->name() + "' is full (" +
                             std::to_string(window_->limit()) + " runs queued or executing)";
    if (in_own_callback) {
      RunnerCounters::add(counters_.would_block);
      fail(Code::WouldBlock, full +
                                 "; a blocking submission from an event callback of the same runner could wait "
                                 "for itself, so it fails at once (use try_run_async there, or submit from "
                                 "another thread)");
    }
    if (how == Submit::Try) {
      RunnerCounters::add(counters_.would_block);
      fail(Code::WouldBlock, full);
    }
    fail(Code::Timeout, full + "; no slot freed within " + std::to_string(timeout_ns) + " ns");
  }
  const uint64_t now = counters_.inflight.fetch_add(1) + 1;
  uint64_t peak = counters_.peak_inflight.load();
  while (now > peak && !counters_.peak_inflight.compare_exchange_weak(peak, now)) {
  }
  RunnerCounters::add(counters_.async_submitted);

  // Until the task is on a worker, a failure gives the slot back: a refused
  // submission takes nothing from the window.
  auto undo = [this] {
    counters_.inflight.fetch_sub(1);
    window_->release();
    window_->retire();
  };
  std::shared_ptr<AsyncEvent> ev;
  cpu::Task task;
  cpu::Stream* worker = nullptr;
  try {
    ev = std::make_shared<AsyncEvent>();
    ev->keep_descriptors(inputs, num_inputs, outputs, num_outputs);
    task.internal = [this, ev, num_inputs, num_outputs] {
      // Runs on a worker thread: nothing may escape (std::terminate), and the
      // event must complete whatever was thrown. Package throws arrive here as
      // Error(Package) (call_package); bad_alloc of aotrun's own bookkeeping
      // becomes OUT_OF_MEMORY.
      Status st;
      try {
        run_counted(ev->inputs(), num_inputs, ev->outputs(), num_outputs, nullptr);
      } catch (...) {
        st = current_exception_status("asynchronous run");
      }
      RunnerCounters::add(st.ok() ? counters_.async_completed : counters_.async_failed);
      counters_.inflight.fetch_sub(1);
      // Slot first, so a caller woken by the event finds it free; retire last,
      // so wait_all() and the destructor see completed events and callbacks.
      window_->release();
      ev->complete(std::move(st));
      window_->retire();
    };
    worker = pick_async_stream();
  } catch (...) {
    undo();
    throw;
  }
  ev->set_queue(worker);
  Status launched = worker->launch(std::move(task));
  if (!launched.ok()) {
    undo();
    fail(launched.code, "package '" + pkg_->name() + "': cannot submit the asynchronous run: " + launched.message);
  }
  return ev;
}

bool Runner::on_own_worker() const {
  const cpu::Stream* w = cpu::Stream::current_worker();
  return w != nullptr && w->owner() == this;
}

void Runner::wait_all() {
  if (on_own_worker()) {
    fail(Code::InvalidArgument, "wait_all called from an event callback of the runner for package '" + pkg_->name() +
                                    "': the run whose callback this is retires only after the callback returns, "
                                    "so the wait could never end");
  }
  window_->wait_idle();
}

}  // namespace aotrun
