// Runner::run_async and the worker streams behind it.
#include <algorithm>
#include <cstdint>

#include "runner/runner.hpp"
#include "runner/validate.hpp"
#include "util/error.hpp"

namespace aotrun {

cpu::Stream* Runner::pick_async_stream() {
  std::call_once(workers_once_, [this] {
    // Threaded mode can run num_models calls at once; the serial modes gain
    // nothing from more than one worker.
    const int n = effective_ == RunMode::Threaded ? options_.num_models : 1;
    for (int i = 0; i < n; ++i) workers_.push_back(std::make_unique<cpu::Stream>(cpu::Stream::Kind::Worker));
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
                                              size_t num_outputs, int64_t timeout_ns) {
  validate_run(inputs, num_inputs, outputs, num_outputs);
  uint64_t blocked = 0;
  const bool got = window_->acquire(timeout_ns, &blocked);
  RunnerCounters::add(counters_.submit_blocked_ns, blocked);
  if (!got) {
    const std::string full = "the in-flight window of runner for package '" + pkg_->name() + "' is full (" +
                             std::to_string(window_->limit()) + " runs queued or executing)";
    if (timeout_ns == 0) {
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

  std::shared_ptr<AsyncEvent> ev;
  try {
    ev = std::make_shared<AsyncEvent>();
    ev->keep_descriptors(inputs, num_inputs, outputs, num_outputs);
  } catch (...) {
    counters_.inflight.fetch_sub(1);
    window_->release();
    window_->retire();
    throw;
  }
  cpu::Task task;
  task.internal = [this, ev, num_inputs, num_outputs] {
    Status st;
    try {
      run_counted(ev->inputs(), num_inputs, ev->outputs(), num_outputs, nullptr);
    } catch (const Error& e) {
      st = Status{e.code(), e.what()};
    } catch (const std::exception& e) {
      st = Status{Code::Internal, std::string("unexpected exception in asynchronous run: ") + e.what()};
    }
    RunnerCounters::add(st.ok() ? counters_.async_completed : counters_.async_failed);
    counters_.inflight.fetch_sub(1);
    // Slot first, so a caller woken by the event finds it free; retire last,
    // so wait_all() and the destructor see completed events and callbacks.
    window_->release();
    ev->complete(std::move(st));
    window_->retire();
  };
  pick_async_stream()->launch(std::move(task));
  return ev;
}

void Runner::wait_all() { window_->wait_idle(); }

}  // namespace aotrun
