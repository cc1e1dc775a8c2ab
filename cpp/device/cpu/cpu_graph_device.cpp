// Graph mode on CPU streams: capture on a private inline stream, replay its
// recorded work on the calling thread.
#include <cstdlib>
#include <cstring>

#include "device/cpu/stream.hpp"
#include "device/graph_device.hpp"
#include "base/guard.hpp"
#include "base/checked_math.hpp"
#include "base/host_alloc.hpp"

namespace aotrun {
namespace {

class CpuGraphDevice final : public GraphDevice {
 public:
  void* alloc(size_t bytes) override {
    size_t rounded = 0;
    if (!checked_round_up(bytes == 0 ? kAlign : bytes, kAlign, &rounded)) {
      fail(Code::OutOfMemory, "graph mode: a static buffer of " + std::to_string(bytes) +
                                  " bytes overflows when rounded up to 256-byte blocks");
    }
    void* p = aligned_alloc_bytes(rounded, kAlign);
    if (p == nullptr)
      fail(Code::OutOfMemory, "graph mode: cannot allocate " + std::to_string(bytes) + " bytes of static buffers");
    std::memset(p, 0, rounded);
    return p;
  }
  void free(void* p) override { aligned_free(p, kAlign); }

  Status capture(const std::function<void(void*)>& record, std::shared_ptr<void>* graph,
                 uint64_t* graph_bytes) override {
    Status st = stream_.begin_capture(cpu::CaptureMode::ThreadLocal);
    if (!st.ok()) return st;
    try {
      record(&stream_);
    } catch (...) {
      // Whatever was thrown, the capture is ended below (a stream left
      // capturing would refuse every later call on this thread).
      st = current_exception_status("graph capture");
    }
    std::unique_ptr<cpu::Graph> g;
    Status end = stream_.end_capture(&g);  // always end, even after a failure
    if (!st.ok()) return st;
    if (!end.ok()) return end;
    *graph_bytes = g->pool_bytes();
    *graph = std::shared_ptr<cpu::Graph>(std::move(g));
    return Status::Ok();
  }

  Status replay(const std::shared_ptr<void>& graph, const Copy* in, size_t num_in, const Copy* out,
                size_t num_out) override {
    for (size_t i = 0; i < num_in; ++i) {
      if (in[i].bytes != 0) std::memcpy(in[i].dst, in[i].src, in[i].bytes);
    }
    Status st = stream_.launch_graph(std::static_pointer_cast<const cpu::Graph>(graph));
    if (!st.ok()) return st;
    for (size_t i = 0; i < num_out; ++i) {
      if (out[i].bytes != 0) std::memcpy(out[i].dst, out[i].src, out[i].bytes);
    }
    return Status::Ok();
  }

  bool is_capturing(void* stream) override { return static_cast<cpu::Stream*>(stream)->is_capturing(); }
  Status wait(void* stream) override {
    auto* s = static_cast<cpu::Stream*>(stream);
    return s->wait(s->mark());
  }

 private:
  static constexpr size_t kAlign = cpu::Stream::kAllocAlign;
  cpu::Stream stream_{cpu::Stream::Kind::Inline};  // capture and replay
};

}  // namespace

namespace cpu {
std::unique_ptr<GraphDevice> make_graph_device() { return std::make_unique<CpuGraphDevice>(); }
}  // namespace cpu

}  // namespace aotrun
