// What graph mode needs from a device: static buffers, copies between the
// caller's tensors and them, capture of a recorded run, replay. One
// implementation per device (device/cpu: CPU streams, device/cuda: CUDA
// graphs), made by its RunnerDevice, so the cache, warm-up and accounting
// logic of GraphExecutor is written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/error.hpp"

namespace aotrun {

struct Copy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
};

class GraphDevice {
 public:
  virtual ~GraphDevice() = default;

  // Static buffers for captured inputs and outputs, filled with zeros.
  // Throws Error(OutOfMemory / Device).
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;

  // Captures what `record(stream)` enqueues on the capture stream it is given
  // (thread-local capture mode). On success *graph owns the captured graph
  // and *graph_bytes is the memory it holds.
  virtual Status capture(const std::function<void(void* stream)>& record, std::shared_ptr<void>* graph,
                         uint64_t* graph_bytes) = 0;

  // Copies `in` (caller -> static), replays `graph`, copies `out` (static ->
  // caller), all complete when it returns.
  virtual Status replay(const std::shared_ptr<void>& graph, const Copy* in, size_t num_in, const Copy* out,
                        size_t num_out) = 0;

  // A caller's stream of this device (cpu::Stream* / cudaStream_t): whether
  // it is being captured, and waiting for the work already on it.
  virtual bool is_capturing(void* stream) = 0;
  virtual Status wait(void* stream) = 0;
};

}  // namespace aotrun
