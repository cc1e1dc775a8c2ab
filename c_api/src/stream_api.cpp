// Caller-visible CPU streams and graphs, and runs on a caller's stream.
#include "handles.hpp"
#include "status.hpp"

using aotrun::Code;
using aotrun::fail;
using aotrun::capi::guarded;
using aotrun::capi::require;

namespace {

void throw_if(const aotrun::Status& s) {
  if (!s.ok()) fail(s.code, s.message);
}

}  // namespace

extern "C" {

aotrun_status* aotrun_stream_create(aotrun_stream_kind kind, aotrun_stream** out) {
  return guarded([&] {
    require(out, "out");
    const int32_t v = aotrun::capi::enum_value(kind);
    if (v != AOTRUN_STREAM_INLINE && v != AOTRUN_STREAM_WORKER) {
      fail(Code::InvalidArgument, "unknown stream kind " + std::to_string(v) + " (expected 0 inline or 1 worker)");
    }
    auto k = v == AOTRUN_STREAM_INLINE ? aotrun::cpu::Stream::Kind::Inline : aotrun::cpu::Stream::Kind::Worker;
    *out = new aotrun_stream{std::make_unique<aotrun::cpu::Stream>(k)};
  });
}

void aotrun_stream_free(aotrun_stream* stream) { delete stream; }

aotrun_status* aotrun_stream_synchronize(aotrun_stream* stream) {
  return guarded([&] {
    require(stream, "stream");
    throw_if(aotrun::cpu::capture_rules::check_unsafe("stream_synchronize"));
    aotrun::cpu::Stream& s = *stream->stream;
    throw_if(s.wait(s.mark()));
    throw_if(s.take_error());
  });
}

aotrun_status* aotrun_stream_begin_capture(aotrun_stream* stream, aotrun_capture_mode mode) {
  return guarded([&] {
    require(stream, "stream");
    const int32_t v = aotrun::capi::enum_value(mode);
    if (v < AOTRUN_CAPTURE_GLOBAL || v > AOTRUN_CAPTURE_RELAXED) {
      fail(Code::InvalidArgument, "unknown capture mode " + std::to_string(v) + " (expected 0..2)");
    }
    throw_if(stream->stream->begin_capture(static_cast<aotrun::cpu::CaptureMode>(v)));
  });
}

aotrun_status* aotrun_stream_end_capture(aotrun_stream* stream, aotrun_graph** graph) {
  return guarded([&] {
    require(stream, "stream");
    require(graph, "graph");
    std::unique_ptr<aotrun::cpu::Graph> g;
    throw_if(stream->stream->end_capture(&g));
    *graph = new aotrun_graph{std::shared_ptr<const aotrun::cpu::Graph>(std::move(g))};
  });
}

int aotrun_stream_is_capturing(const aotrun_stream* stream) {
  return stream != nullptr && stream->stream->is_capturing() ? 1 : 0;
}

aotrun_status* aotrun_graph_launch(aotrun_graph* graph, aotrun_stream* stream) {
  return guarded([&] {
    require(graph, "graph");
    require(stream, "stream");
    throw_if(stream->stream->launch_graph(graph->graph));
  });
}

size_t aotrun_graph_num_nodes(const aotrun_graph* graph) { return graph ? graph->graph->num_nodes() : 0; }

void aotrun_graph_free(aotrun_graph* graph) { delete graph; }

aotrun_status* aotrun_runner_run_on_stream(aotrun_runner* runner, aotrun_stream* stream, const DLTensor* inputs,
                                           size_t num_inputs, DLTensor* outputs, size_t num_outputs) {
  return guarded([&] {
    require(runner, "runner");
    require(stream, "stream");
    runner->runner->run(inputs, num_inputs, outputs, num_outputs, stream->stream.get());
  });
}

aotrun_status* aotrun_runner_run_on_cuda_stream(aotrun_runner* runner, void* cuda_stream, const DLTensor* inputs,
                                                size_t num_inputs, DLTensor* outputs, size_t num_outputs) {
  return guarded([&] {
    require(runner, "runner");
    require(cuda_stream, "cuda_stream");
    runner->runner->run_on_device_stream(cuda_stream, inputs, num_inputs, outputs, num_outputs);
  });
}

}  // extern "C"
