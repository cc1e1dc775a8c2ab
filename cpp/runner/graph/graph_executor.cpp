#include "runner/graph/graph_executor.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "runner/container/validate.hpp"
#include "base/checked_math.hpp"
#include "base/clock.hpp"
#include "base/error.hpp"

namespace aotrun {

struct GraphExecutor::Entry {
  GraphDevice& device;
  std::vector<int64_t> key;      // per input: ndim, then its dims, then 1 if in its spec's strides (not compact)
  std::vector<int64_t> strides;  // behind the static inputs given in their spec's strides
  int32_t warmups = 0;
  bool failed = false;
  std::shared_ptr<void> graph;
  std::vector<void*> buffers;  // static inputs, then outputs
  std::vector<int64_t> dims;   // shapes behind in / out
  std::vector<DLTensor> in, out;
  std::vector<Copy> copy_in, copy_out;  // sources / destinations set per replay
  uint64_t bytes = 0;

  explicit Entry(GraphDevice& d) : device(d) {}
  ~Entry() {
    graph.reset();  // recorded work may reference the buffers until released
    for (void* p : buffers) device.free(p);
  }
};

namespace {

std::string key_string(const std::vector<int64_t>& key) {
  std::string s;
  for (size_t i = 0; i < key.size();) {
    const int nd = static_cast<int>(key[i]);
    s += (s.empty() ? "" : ", ") + shape_string(&key[i + 1], nd) + (key[i + 1 + nd] ? " (strided)" : "");
    i += 2 + static_cast<size_t>(nd);
  }
  return s;
}

// Shapes here passed validation (inputs) or the package's output check,
// both of which bound the byte size; checked anyway, a wrap would size a
// static buffer smaller than the tensor it backs.
uint64_t bytes_of(const DLTensor& t) {
  uint64_t bytes = 0;
  if (!checked_bytes(t, &bytes)) {
    fail(Code::InvalidArgument, "graph mode: a tensor of shape " + shape_string(t.shape, t.ndim) + " and dtype " +
                                    dtype_name(t.dtype) + " is too large to address");
  }
  return bytes;
}

}  // namespace

GraphExecutor::GraphExecutor(Container& container, const RunnerOptions& options, RunnerCounters& counters,
                             std::unique_ptr<GraphDevice> device, std::atomic<uint64_t>* also_count)
    : container_(container),
      options_(options),
      counters_(counters),
      device_(std::move(device)),
      frozen_(false),
      also_count_(also_count) {}

GraphExecutor::~GraphExecutor() { evict(); }

GraphExecutor::Entry* GraphExecutor::find(const DLTensor* inputs, size_t num_inputs) {
  for (auto& e : entries_) {
    size_t pos = 0;
    bool match = true;
    for (size_t i = 0; i < num_inputs && match; ++i) {
      const int nd = inputs[i].ndim;
      match = e->key[pos] == nd && std::equal(inputs[i].shape, inputs[i].shape + nd, e->key.begin() + pos + 1) &&
              e->key[pos + 1 + static_cast<size_t>(nd)] == (is_compact(inputs[i]) ? 0 : 1);
      pos += 2 + static_cast<size_t>(nd);
    }
    if (match) return e.get();
  }
  return nullptr;
}

GraphExecutor::Entry* GraphExecutor::add(const DLTensor* inputs, size_t num_inputs) {
  const Package& pkg = container_.package();
  auto e = std::make_unique<Entry>(*device_);
  size_t in_dims = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    e->key.push_back(inputs[i].ndim);
    e->key.insert(e->key.end(), inputs[i].shape, inputs[i].shape + inputs[i].ndim);
    // An input in the layout its model was compiled for (validated) is
    // copied in as it is, so its static buffer has that layout too: the
    // same bytes as compact, in another order.
    const bool strided = !is_compact(inputs[i]);
    e->key.push_back(strided ? 1 : 0);
    if (strided) e->strides.insert(e->strides.end(), inputs[i].strides, inputs[i].strides + inputs[i].ndim);
    in_dims += static_cast<size_t>(inputs[i].ndim);
  }
  const size_t out_dims = total_output_dims(pkg);
  e->dims.resize(in_dims + out_dims);
  int64_t* d = e->dims.data();
  for (size_t i = 0; i < num_inputs; ++i) {
    std::copy(inputs[i].shape, inputs[i].shape + inputs[i].ndim, d);
    d += inputs[i].ndim;
  }
  container_.output_shapes(inputs, num_inputs, d, out_dims);  // inputs validated by the caller

  auto make = [&](const TensorSpec& spec, int64_t* shape) {
    DLTensor t{};
    t.device = container_.dl_device();
    t.ndim = static_cast<int>(spec.shape.size());
    t.dtype = spec.dtype;
    t.shape = shape;
    const uint64_t bytes = bytes_of(t);
    // The slot first: once allocated, the buffer is owned by the entry (a
    // push_back that threw after the allocation lost it).
    e->buffers.push_back(nullptr);
    t.data = device_->alloc(bytes);
    e->buffers.back() = t.data;
    e->bytes = saturating_add(e->bytes, bytes);
    return t;
  };
  d = e->dims.data();
  const int64_t* strides = e->strides.data();  // not resized below
  for (size_t i = 0; i < num_inputs; ++i) {
    e->in.push_back(make(pkg.inputs()[i], d));
    if (!is_compact(inputs[i])) {
      e->in.back().strides = const_cast<int64_t*>(strides);
      strides += inputs[i].ndim;
    }
    e->copy_in.push_back(Copy{e->in.back().data, nullptr, bytes_of(e->in.back())});
    d += inputs[i].ndim;
  }
  for (const auto& spec : pkg.outputs()) {
    e->out.push_back(make(spec, d));
    e->copy_out.push_back(Copy{nullptr, e->out.back().data, bytes_of(e->out.back())});
    d += spec.shape.size();
  }
  entries_.push_back(std::move(e));
  return entries_.back().get();
}

bool GraphExecutor::capture(Entry& e) {
  auto& c = counters_;
  const uint64_t t0 = now_ns();
  uint64_t graph_bytes = 0;
  Status st = device_->capture(
      [&](void* stream) { container_.call(true, e.in.data(), e.in.size(), e.out.data(), e.out.size(), stream); },
      &e.graph, &graph_bytes);
  if (!st.ok()) {
    e.failed = true;
    log(LogLevel::Warn, "graph mode: capturing package '" + container_.package().name() + "' for input shapes " +
                            key_string(e.key) + " failed (" + code_name(st.code) + ": " + st.message +
                            "); these shapes run eagerly");
    return false;
  }
  RunnerCounters::add(c.captures);
  if (also_count_ != nullptr) RunnerCounters::add(*also_count_);
  RunnerCounters::add(c.capture_ns, now_ns() - t0);
  RunnerCounters::add(c.graph_pool_bytes, e.bytes + graph_bytes);
  RunnerCounters::add(c.graphs_cached);
  pool_bytes_ += e.bytes + graph_bytes;
  ++graphs_;
  return true;
}

void GraphExecutor::replay(Entry& e, const DLTensor* inputs, DLTensor* outputs) {
  // Empty tensors may have NULL data; their copies have zero bytes.
  for (size_t i = 0; i < e.copy_in.size(); ++i) {
    e.copy_in[i].src = inputs[i].data ? static_cast<const char*>(inputs[i].data) + inputs[i].byte_offset : nullptr;
  }
  for (size_t i = 0; i < e.copy_out.size(); ++i) {
    e.copy_out[i].dst = outputs[i].data ? static_cast<char*>(outputs[i].data) + outputs[i].byte_offset : nullptr;
  }
  Status st = device_->replay(e.graph, e.copy_in.data(), e.copy_in.size(), e.copy_out.data(), e.copy_out.size());
  if (!st.ok()) fail(st.code, "graph replay of package '" + container_.package().name() + "' failed: " + st.message);
  RunnerCounters::add(counters_.replays);
}

void GraphExecutor::eager(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, void* s) {
  container_.call(true, inputs, num_inputs, outputs, num_outputs, s);
  if (s == nullptr) container_.finish_own_stream();
}

void GraphExecutor::run(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                        void* caller) {
  auto& c = counters_;
  const RunnerOptions& opt = options_;
  if (caller != nullptr && device_->is_capturing(caller)) {
    // The caller is building its own graph: record our work into it, never
    // a launch of ours.
    RunnerCounters::add(c.eager_caller_capturing);
    eager(inputs, num_inputs, outputs, num_outputs, caller);
    return;
  }
  if (caller != nullptr) {
    Status st = device_->wait(caller);  // after the caller's earlier work
    if (!st.ok())
      fail(st.code, "package '" + container_.package().name() + "': waiting for the caller's stream: " + st.message);
  }
  Entry* e = find(inputs, num_inputs);
  if (e == nullptr) {
    if (frozen_) {
      RunnerCounters::add(c.eager_frozen);
      return eager(inputs, num_inputs, outputs, num_outputs, nullptr);
    }
    if (entries_.size() >= static_cast<size_t>(opt.graph_cache_limit)) {
      RunnerCounters::add(c.eager_cache_full);
      return eager(inputs, num_inputs, outputs, num_outputs, nullptr);
    }
    e = add(inputs, num_inputs);
  }
  if (e->failed) {
    RunnerCounters::add(c.eager_capture_failed);
    return eager(inputs, num_inputs, outputs, num_outputs, nullptr);
  }
  if (!e->graph && e->warmups < opt.warmup_runs) {
    ++e->warmups;
    RunnerCounters::add(c.warmups);
    return eager(inputs, num_inputs, outputs, num_outputs, nullptr);
  }
  // Neither a capture nor a replay passes through the package's own checks
  // of input values.
  container_.check_input_values(inputs, num_inputs);
  if (!e->graph && !capture(*e)) {
    RunnerCounters::add(c.eager_capture_failed);
    return eager(inputs, num_inputs, outputs, num_outputs, nullptr);
  }
  replay(*e, inputs, outputs);
}

void GraphExecutor::capture_upfront(const std::vector<std::vector<std::vector<int64_t>>>& shape_sets) {
  const Package& pkg = container_.package();
  // Largest first: capturing the biggest shape first sizes the pool for it.
  std::vector<const std::vector<std::vector<int64_t>>*> order;
  for (const auto& s : shape_sets) order.push_back(&s);
  // Sort key only, before the shapes are validated: saturates instead of
  // wrapping, so an enormous shape sorts first (and is then refused).
  auto volume = [](const std::vector<std::vector<int64_t>>& set) {
    uint64_t v = 0;
    for (const auto& shape : set) {
      uint64_t n = 1;
      for (int64_t d : shape) n = saturating_mul(n, static_cast<uint64_t>(std::max<int64_t>(d, 0)));
      v = saturating_add(v, n);
    }
    return v;
  };
  std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) { return volume(*a) > volume(*b); });
  for (const auto* set : order) {
    std::vector<DLTensor> probe(set->size());
    for (size_t i = 0; i < set->size(); ++i) {
      probe[i].ndim = static_cast<int>((*set)[i].size());
      probe[i].shape = const_cast<int64_t*>((*set)[i].data());
      probe[i].dtype = i < pkg.inputs().size() ? pkg.inputs()[i].dtype : DLDataType{};
      probe[i].device = container_.dl_device();
    }
    validate_input_shapes(pkg, probe.data(), probe.size());
    if (find(probe.data(), probe.size()) != nullptr) continue;
    if (entries_.size() >= static_cast<size_t>(options_.graph_cache_limit)) {
      fail(Code::InvalidArgument, "graph mode: " + std::to_string(shape_sets.size()) +
                                      " capture shapes exceed graph_cache_limit " +
                                      std::to_string(options_.graph_cache_limit));
    }
    Entry* e = add(probe.data(), probe.size());
    for (; e->warmups < options_.warmup_runs; ++e->warmups) {
      container_.call(true, e->in.data(), e->in.size(), e->out.data(), e->out.size(), nullptr);
      container_.finish_own_stream();
      RunnerCounters::add(counters_.warmups);
    }
    capture(*e);
  }
  if (options_.frozen) frozen_ = true;
}

void GraphExecutor::evict() {
  entries_.clear();
  // A runner has a graph executor per constant set: take back only this
  // one's share of the totals.
  counters_.graph_pool_bytes.fetch_sub(pool_bytes_, std::memory_order_relaxed);
  counters_.graphs_cached.fetch_sub(graphs_, std::memory_order_relaxed);
  pool_bytes_ = 0;
  graphs_ = 0;
}

}  // namespace aotrun
