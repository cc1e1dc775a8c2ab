// Graph mode on CUDA: capture on a side stream in thread-local mode, replay
// with cudaGraphLaunch; static buffers in device memory, copies on the same
// stream, one synchronize per replay.
#include <vector>

#include "device/cuda/cuda_context.hpp"
#include "device/graph_device.hpp"
#include "base/guard.hpp"

namespace aotrun {
namespace {

void throw_if(const Status& s) {
  if (!s.ok()) fail(s.code, s.message);
}

class CudaGraphDevice final : public GraphDevice {
 public:
  explicit CudaGraphDevice(cuda::Context& ctx) : ctx_(ctx), stream_(ctx.new_stream()) {}
  ~CudaGraphDevice() override { ctx_.destroy_stream(stream_); }

  void* alloc(size_t bytes) override {
    void* p = nullptr;
    throw_if(ctx_.alloc(bytes == 0 ? 256 : bytes, &p));
    // Zeros for up-front captures, whose warm-ups read the static inputs.
    std::vector<unsigned char> zeros(bytes);
    Status st = bytes ? ctx_.copy(p, zeros.data(), bytes, stream_) : Status::Ok();
    if (st.ok()) st = ctx_.synchronize(stream_);
    if (!st.ok()) {
      ctx_.free(p);
      fail(st.code, st.message);
    }
    return p;
  }
  void free(void* p) override { ctx_.free(p); }

  Status capture(const std::function<void(void*)>& record, std::shared_ptr<void>* graph,
                 uint64_t* graph_bytes) override {
    Status st = ctx_.begin_capture(stream_);
    if (!st.ok()) return st;
    try {
      record(stream_);
    } catch (...) {
      // Whatever was thrown, the capture is ended below.
      st = current_exception_status("graph capture");
    }
    void* exec = nullptr;
    Status end = ctx_.end_capture(stream_, &exec);
    if (!st.ok()) {
      ctx_.destroy_graph(exec);
      return st;
    }
    if (!end.ok()) return end;
    cuda::Context* ctx = &ctx_;
    *graph = std::shared_ptr<void>(exec, [ctx](void* e) { ctx->destroy_graph(e); });
    *graph_bytes = 0;  // graph allocations live in the device's graph pool (Context::pool_bytes)
    return Status::Ok();
  }

  Status replay(const std::shared_ptr<void>& graph, const Copy* in, size_t num_in, const Copy* out,
                size_t num_out) override {
    for (size_t i = 0; i < num_in; ++i) {
      if (in[i].bytes == 0) continue;
      Status st = ctx_.copy(in[i].dst, in[i].src, in[i].bytes, stream_);
      if (!st.ok()) return st;
    }
    Status st = ctx_.launch_graph(graph.get(), stream_);
    if (!st.ok()) return st;
    for (size_t i = 0; i < num_out; ++i) {
      if (out[i].bytes == 0) continue;
      st = ctx_.copy(out[i].dst, out[i].src, out[i].bytes, stream_);
      if (!st.ok()) return st;
    }
    return ctx_.synchronize(stream_);
  }

  bool is_capturing(void* stream) override { return ctx_.is_capturing(stream); }
  Status wait(void* stream) override { return ctx_.synchronize(stream); }

 private:
  cuda::Context& ctx_;
  void* stream_;
};

}  // namespace

namespace cuda {
std::unique_ptr<GraphDevice> make_graph_device(Context& ctx) { return std::make_unique<CudaGraphDevice>(ctx); }
}  // namespace cuda

}  // namespace aotrun
