#include "bench_async.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "inputs.hpp"
#include "outputs.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

namespace {

// One in-flight run: its outputs, its event, and when it was submitted and
// completed. Not movable (the callback holds its address).
struct Slot {
  std::vector<HostTensor> outputs;
  std::vector<DLTensor> output_views;
  aotrun::cxx::Event event;  // of the run in flight; empty when none
  Clock::time_point submitted{};
  std::atomic<Clock::rep> completed{0};  // Clock ticks since its epoch
  std::atomic<bool> stamped{false};
};

// Completion callback: on an aotrun worker thread, or on the submitting
// thread when the run finished before the callback was registered (then the
// stamp is the registration time, a little late). The slot is not touched
// after `stamped` is set, so the submitter may reuse it from then on.
void on_complete(void* user, aotrun_code, const char*) {
  Slot* slot = static_cast<Slot*>(user);
  slot->completed.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  slot->stamped.store(true, std::memory_order_release);
}

class AsyncWork : public CallerWork {
 public:
  AsyncWork(aotrun_runner* runner, const std::vector<DLTensor>& inputs, const std::vector<TensorSpec>& output_specs,
            int depth)
      : runner_(runner), inputs_(inputs) {
    for (int i = 0; i < depth; ++i) {
      auto slot = std::make_unique<Slot>();
      slot->outputs = allocate_outputs(runner, inputs, output_specs);
      slot->output_views = views(slot->outputs);
      ring_.push_back(std::move(slot));
    }
  }

  ~AsyncWork() override {
    // finish() has normally emptied the ring; if not (an exception between
    // submissions), runs must not outlive the buffers.
    std::vector<uint64_t> ignored;
    if (aotrun_status* status = finish(ignored)) aotrun_status_free(status);
  }

  aotrun_status* warm_up(int runs) override {
    std::vector<uint64_t> ignored;
    aotrun_status* status = nullptr;
    for (int i = 0; i < runs && status == nullptr; ++i) status = start_run(ignored);
    aotrun_status* drained = finish(ignored);
    last_ = Clock::time_point{};
    if (status == nullptr) return drained;
    if (drained != nullptr) aotrun_status_free(drained);
    return status;
  }

  aotrun_status* start_run(std::vector<uint64_t>& latencies) override {
    if (count_ == ring_.size()) {
      if (aotrun_status* status = complete_oldest(latencies)) return status;
    }
    Slot& slot = *ring_[(head_ + count_) % ring_.size()];
    slot.stamped.store(false, std::memory_order_relaxed);
    slot.submitted = Clock::now();
    aotrun_event* raw = nullptr;
    if (aotrun_status* status = aotrun_runner_run_async(runner_, inputs_.data(), inputs_.size(),
                                                        slot.output_views.data(), slot.output_views.size(), &raw)) {
      return status;  // argument error: nothing was enqueued
    }
    aotrun::cxx::Event event(raw);
    if (aotrun_status* status = aotrun_event_set_callback(event.get(), on_complete, &slot)) {
      // Cannot happen with a fresh event; still, never leave a run behind.
      aotrun_status_free(aotrun_event_wait(event.get()));
      return status;
    }
    slot.event = std::move(event);
    ++count_;
    return nullptr;
  }

  aotrun_status* finish(std::vector<uint64_t>& latencies) override {
    aotrun_status* first = nullptr;
    while (count_ != 0) {
      aotrun_status* status = complete_oldest(latencies);
      if (first == nullptr) {
        first = status;
      } else if (status != nullptr) {
        aotrun_status_free(status);
      }
    }
    return first;
  }

  Clock::time_point last_completion() const override { return last_; }

 private:
  // Waits for the oldest run and frees its slot; its latency is recorded if
  // it succeeded, else its status is returned.
  aotrun_status* complete_oldest(std::vector<uint64_t>& latencies) {
    Slot& slot = *ring_[head_];
    aotrun_status* status = aotrun_event_wait(slot.event.get());
    // The event is complete before its callback runs: wait for the stamp.
    while (!slot.stamped.load(std::memory_order_acquire)) std::this_thread::yield();
    slot.event.reset();
    head_ = (head_ + 1) % ring_.size();
    --count_;
    if (status != nullptr) return status;
    const Clock::time_point done{Clock::duration(slot.completed.load(std::memory_order_relaxed))};
    latencies.push_back(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(done - slot.submitted).count()));
    last_ = std::max(last_, done);
    return nullptr;
  }

  aotrun_runner* runner_;
  const std::vector<DLTensor>& inputs_;
  std::vector<std::unique_ptr<Slot>> ring_;
  size_t head_ = 0;   // oldest outstanding slot
  size_t count_ = 0;  // outstanding runs
  Clock::time_point last_{};
};

}  // namespace

std::unique_ptr<CallerWork> make_async_work(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                            const std::vector<TensorSpec>& output_specs, int depth) {
  return std::make_unique<AsyncWork>(runner, inputs, output_specs, depth);
}

}  // namespace aotrun::cli
