// Graph mode of a runner: warm up, capture per input-shape key through the
// package's run_single_threaded, replay. Inputs are copied into static
// buffers owned by the runner before each replay and outputs are copied out
// into the caller's tensors after it, so callers never see the static
// buffers. All graphs of a runner draw their memory from one pool accounted
// in the runner's stats.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <dlpack/dlpack.h>

#include "device/graph_device.hpp"
#include "runner/container/container.hpp"
#include "runner/container/options.hpp"
#include "runner/container/runner_stats.hpp"

namespace aotrun {

class GraphExecutor {
 public:
  // `container`, `options` and `counters` are the runner's and outlive this.
  // `also_count` (optional) is incremented with every capture too: the
  // runner counts the captures of constant sets made by updates there.
  GraphExecutor(Container& container, const RunnerOptions& options, RunnerCounters& counters,
                std::unique_ptr<GraphDevice> device, std::atomic<uint64_t>* also_count = nullptr);
  ~GraphExecutor();

  // One call. The runner's serial lock is held. `caller` may be a caller's
  // stream: if it is capturing, the run is recorded into the caller's graph
  // (never a graph launch of ours); otherwise it runs after the stream's
  // earlier work.
  void run(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, void* caller);
  // Warms up and captures the listed input-shape sets, largest first.
  void capture_upfront(const std::vector<std::vector<std::vector<int64_t>>>& shape_sets);
  void evict();
  // From now on shapes without a graph run eagerly; nothing is captured.
  void freeze() { frozen_ = true; }

 private:
  struct Entry;
  Entry* find(const DLTensor* inputs, size_t num_inputs);
  Entry* add(const DLTensor* inputs, size_t num_inputs);
  bool capture(Entry& e);
  void replay(Entry& e, const DLTensor* inputs, DLTensor* outputs);
  void eager(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, void* s);

  Container& container_;
  const RunnerOptions& options_;
  RunnerCounters& counters_;
  std::unique_ptr<GraphDevice> device_;
  std::vector<std::unique_ptr<Entry>> entries_;
  bool frozen_ = false;  // guarded by the runner's serial lock
  // This executor's share of counters_.graph_pool_bytes / graphs_cached.
  uint64_t pool_bytes_ = 0, graphs_ = 0;
  std::atomic<uint64_t>* also_count_;
};

}  // namespace aotrun
