// A runner: one container of a package's model instances on one device, run
// in one mode (threaded, single_threaded, graph), synchronously or through the
// bounded asynchronous window.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "runner/async/async_event.hpp"
#include "runner/async/window.hpp"
#include "device/cpu/stream.hpp"
#include "device/runner_device.hpp"
#include "package/package.hpp"
#include "runner/container/container.hpp"
#include "runner/container/options.hpp"
#include "runner/container/runner_stats.hpp"
#include "runner/constants/constant_slots.hpp"
#include "runner/constants/constant_set_update.hpp"

namespace aotrun {

class GraphExecutor;

class Runner {
 public:
  // Creates the container and settles the mode per ABI.md's fallback
  // table (warning once per package, or UNSUPPORTED when strict).
  static std::unique_ptr<Runner> create(std::shared_ptr<Package> pkg, const RunnerOptions& options);
  // Waits for every asynchronous run, then releases (member order) the
  // workers, graphs, container and device.
  ~Runner();

  const Package& package() const { return *pkg_; }
  RunMode requested_mode() const { return options_.mode; }
  RunMode effective_mode() const { return effective_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  const RunnerOptions& options() const { return options_; }
  const RunnerCounters& counters() const { return counters_; }
  DLDevice device() const { return device_; }
  int32_t max_inflight() const { return window_->limit(); }

  // Full input validation of a run (shapes, device, layout, data), without
  // outputs: run_alloc checks its inputs before allocating anything.
  void validate_run_inputs(const DLTensor* inputs, size_t num_inputs) const;

  // Concatenated output shapes for `inputs` (shape-only validation).
  void output_shapes(const DLTensor* inputs, size_t num_inputs, int64_t* shapes, size_t capacity);

  // Synchronous run on the runner's own stream, or enqueued on `stream` (a
  // caller's stream, possibly capturing). Throws Error.
  void run(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
           cpu::Stream* stream = nullptr);

  // Synchronous run whose outputs are allocated here (host memory, CPU
  // runners only: UNSUPPORTED elsewhere) and handed over, one per output, in
  // DLManagedTensors the caller releases through their deleter. Inputs are
  // validated in full before anything is allocated; on failure nothing is
  // handed over.
  std::vector<DLManagedTensor*> run_alloc(const DLTensor* inputs, size_t num_inputs);

  // Synchronous enqueue on a caller's device stream (CUDA runners only):
  // returns once the work is enqueued (or recorded, under capture).
  void run_on_device_stream(void* stream, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                            size_t num_outputs);

  // How run_async waits for a slot of the in-flight window.
  enum class Submit { Block, Try, Timed };
  // Asynchronous run. Throws Error(WouldBlock) for Try and Error(Timeout)
  // for Timed when no slot was had (timeout_ns only counts for Timed; 0 is a
  // valid bound); argument errors are thrown before a slot is taken. The
  // returned event completes exactly once, with the run's status.
  std::shared_ptr<AsyncEvent> run_async(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                        size_t num_outputs, Submit how, uint64_t timeout_ns = 0);
  // Waits until no asynchronous run of this runner is in flight.
  // INVALID_ARGUMENT from one of its own workers (the wait could never end).
  void wait_all();
  // Whether the calling thread is one of this runner's async workers (an
  // event callback, or code its run called): such a thread must not wait
  // for the runner's work (aotrun.h, "Calls from callbacks").
  bool on_own_worker() const;

  // Drops every captured graph (graph mode); later runs capture again.
  void evict_graphs();
  // Graph mode: no capture from now on; shapes without a graph run eagerly.
  void freeze_graphs();

  // Constants (weights), aotrun.h "Updating constants while serving". An
  // update builds a new set (a new container created with it) as the
  // inactive one, replacing any inactive set; a swap makes it active (runs in
  // flight finish on the set they started with); free_inactive releases the
  // inactive set once no run uses it. Writers are serialised; runs never
  // wait for them. Throws Error (InvalidArgument from a run's own thread, or
  // for what build_update refuses; the package's create errors).
  void update_constants(const NamedTensor* tensors, size_t count, uint32_t flags);
  void update_constants_from_file(const std::string& path, uint32_t flags);
  void swap_constants();
  void free_inactive_constants();

 private:
  Runner() = default;
  void settle_mode();
  // run_alloc of a package whose output sizes depend on input values
  // (PackageCode::sizes_outputs_during_run): the package sizes them while
  // it runs, in any mode, eagerly (run_alloc.cpp).
  std::vector<DLManagedTensor*> run_alloc_sized_by_run(const DLTensor* inputs, size_t num_inputs);
  void validate_run(const DLTensor* inputs, size_t num_inputs, const DLTensor* outputs, size_t num_outputs);
  // validate_run past the repeat check; `thread_cache` is this thread's
  // shape cache (runner.cpp).
  void validate_in_full(void* thread_cache, const DLTensor* inputs, size_t num_inputs, const DLTensor* outputs,
                        size_t num_outputs);
  // `stream`: a caller's stream of the runner's device, or NULL for its own.
  void dispatch(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, void* stream);
  void run_counted(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, void* stream);
  // Counts a finished run. Serial modes call it under serial_, which every
  // run of theirs holds: a load and a store, no read-modify-write.
  void count_run() {
    if (effective_ == RunMode::Threaded) {
      RunnerCounters::add(counters_.runs);
    } else {
      RunnerCounters::add_serialized(counters_.runs);
    }
  }
  cpu::Stream* pick_async_stream();
  // The graphs of `set`, made on its first graph-mode run (serial lock held).
  GraphExecutor& graphs_of(ConstantSet& set);
  void check_writer_thread(const char* what) const;
  void install(ConstantSet next);

  std::shared_ptr<Package> pkg_;
  RunnerOptions options_;
  DLDevice device_{kDLCPU, 0};
  RunMode effective_ = RunMode::Threaded;
  size_t out_dims_ = 0;  // total output rank, the size of a shape query's result
  uint64_t id_ = 0;      // unique for the process's lifetime (shape cache key)
  std::string fallback_reason_;
  bool uses_fallback_ = false;

  RunnerCounters counters_;
  std::mutex serial_;  // single_threaded and graph modes: one call at a time
  std::unique_ptr<InflightWindow> window_;
  // Destroyed in reverse order: workers (idle by then), the constant sets
  // (each: its graphs, then its container, after the device's stream is
  // drained), the device.
  std::unique_ptr<RunnerDevice> runner_device_;
  std::unique_ptr<ConstantSlots> slots_;
  bool graphs_frozen_ = false;    // graph mode; guarded by serial_
  uint64_t next_generation_ = 1;  // guarded by the slots' writer mutex
  std::once_flag workers_once_;
  std::atomic<size_t> next_worker_{0};
  std::vector<std::unique_ptr<cpu::Stream>> workers_;  // asynchronous runs (host threads, any device)
};

}  // namespace aotrun
