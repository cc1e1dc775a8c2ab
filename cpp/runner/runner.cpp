#include "runner/runner.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "device/cpu/capture.hpp"
#include "graph/graph_device.hpp"
#include "graph/graph_executor.hpp"
#include "log/log.hpp"
#include "runner/package_call.hpp"
#include "runner/validate.hpp"
#include "util/error.hpp"

namespace aotrun {
namespace {

// Output shapes of common packages fit on the stack; the hot path must not
// allocate.
constexpr size_t kStackDims = 64;

// The last output-shape query of this thread. Output shapes are a pure
// function of the input shapes (package_abi.h), and a serving loop repeats
// the same shapes, so most runs skip the call into the package. Keyed by a
// runner id that is never reused (addresses are).
struct ShapeCache {
  static constexpr size_t kKey = 32;
  uint64_t runner_id = 0;
  size_t key_len = 0;
  int64_t key[kKey];
  size_t out_len = 0;
  int64_t out[kStackDims];
};
thread_local ShapeCache t_shape_cache;
std::atomic<uint64_t> g_next_runner_id{1};

// Writes each input's rank and dims into key; false if they do not fit.
bool make_key(const DLTensor* inputs, size_t n, int64_t* key, size_t* len) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const int nd = inputs[i].ndim;
    if (k + 1 + static_cast<size_t>(nd) > ShapeCache::kKey) return false;
    key[k++] = nd;
    for (int d = 0; d < nd; ++d) key[k++] = inputs[i].shape[d];
  }
  *len = k;
  return true;
}

}  // namespace

std::unique_ptr<Runner> Runner::create(std::shared_ptr<Package> pkg, const RunnerOptions& options) {
  if (!pkg) fail(Code::InvalidArgument, "package is NULL");
  if (options.num_models < 1 || options.num_models > kMaxModels) {
    fail(Code::InvalidArgument, "num_models must be 1.." + std::to_string(kMaxModels) + ", got " + std::to_string(options.num_models));
  }
  std::unique_ptr<Runner> r(new Runner());
  r->pkg_ = std::move(pkg);
  r->options_ = options;
  r->device_ = options.has_device ? options.device : r->pkg_->device();
  const int32_t type = device_type_of(r->device_);
  if (type != kDLCPU && type != kDLCUDA) {
    fail(Code::Unsupported, "package '" + r->pkg_->name() + "': device type " + std::to_string(type) +
                                " is not supported (aotrun runs on CPU (1) and CUDA (2))");
  }
  validate_device_option(r->device_);
  if (device_type_of(r->pkg_->device()) != type) {
    fail(Code::Unsupported, "package '" + r->pkg_->name() + "' was compiled for device type " +
                                std::to_string(device_type_of(r->pkg_->device())) + "; running it on device type " +
                                std::to_string(type) + " is not supported");
  }
  r->out_dims_ = total_output_dims(*r->pkg_);
  r->id_ = g_next_runner_id.fetch_add(1, std::memory_order_relaxed);
  r->settle_mode();
  // Default window: on CPU each instance has one run executing and one
  // queued; a GPU keeps a deeper queue busy (launch latency hides behind it).
  int32_t inflight = options.max_inflight > 0 ? options.max_inflight
                     : type == kDLCUDA        ? 32
                                              : 2 * options.num_models;
  if (inflight > kMaxInflight) fail(Code::InvalidArgument, "max_inflight must be at most " + std::to_string(kMaxInflight));
  r->window_ = std::make_unique<InflightWindow>(inflight);

  if (type == kDLCUDA) {
    std::string why;
    if (!cuda::usable(r->device_.device_id, &why)) {
      fail(cuda::compiled_in() ? Code::Device : Code::Unsupported,
           "package '" + r->pkg_->name() + "' cannot run on CUDA device " + std::to_string(r->device_.device_id) + ": " + why);
    }
    cuda::LogHooks hooks;
    hooks.enabled = [](int32_t l) { return log_enabled(static_cast<LogLevel>(l)); };
    hooks.emit = [](int32_t l, const std::string& m) { log_emit(static_cast<LogLevel>(l), m); };
    r->cuda_ = cuda::Context::create(r->device_.device_id, r->pkg_->name(), r->pkg_->code().fn().get_last_error, hooks);
    r->host_table_ = r->cuda_->host();
    r->own_stream_ = r->cuda_->stream();
  } else {
    r->stream_ = std::make_unique<cpu::Stream>(cpu::Stream::Kind::Inline);
    r->host_ctx_.default_stream = r->stream_.get();
    r->host_ctx_.last_error = r->pkg_->code().fn().get_last_error;
    r->host_ctx_.package_name = r->pkg_->name();
    r->host_ = cpu::make_host_services(&r->host_ctx_);
    r->host_table_ = &r->host_;
    r->own_stream_ = r->stream_.get();
  }

  aotrun_pkg_create_args args{};
  args.struct_size = sizeof(args);
  args.num_models = options.num_models;
  args.device = r->device_;
  args.host = r->host_table_;
  args.constants = r->pkg_->constants().data();
  args.num_constants = r->pkg_->constants().size();
  args.package_dir = r->pkg_->dir().empty() ? nullptr : r->pkg_->dir().c_str();
  int32_t rc = package_call(r->pkg_->name(), "container_create",
                            [&] { return r->pkg_->code().create(&r->container_, &args); });
  if (rc != AOTRUN_PKG_OK || r->container_ == nullptr) {
    r->container_ = nullptr;
    fail(rc == AOTRUN_PKG_ERR_OUT_OF_MEMORY ? Code::OutOfMemory : Code::Package,
         r->pkg_->package_error("container_create", rc));
  }
  if (r->effective_ == RunMode::Graph) {
    r->graphs_ = std::make_unique<GraphExecutor>(*r, r->cuda_ ? make_cuda_graph_device(*r->cuda_) : make_cpu_graph_device());
    r->graphs_->capture_upfront(options.capture_shapes);
  }
  return r;
}

void Runner::settle_mode() {
  effective_ = options_.mode;
  if (options_.mode == RunMode::Threaded) return;
  std::string reason;
  if (pkg_->mode_available(options_.mode, &reason)) return;
  if (options_.strict) {
    fail(Code::Unsupported, reason + " (strict mode forbids the fallback)");
  }
  effective_ = RunMode::Threaded;
  uses_fallback_ = true;
  fallback_reason_ = reason;
  log(pkg_->first_fallback() ? LogLevel::Warn : LogLevel::Info, reason);
}

Runner::~Runner() {
  // Asynchronous runs still reference the container: let them finish first.
  if (window_) window_->wait_idle();
  workers_.clear();
  graphs_.reset();
  if (cuda_) cuda_->synchronize(cuda_->stream());  // nothing of the container may still run
  if (container_ != nullptr) {
    int32_t rc = 0;
    const Status st = guard_package_call(pkg_->name(), "container_destroy",
                                         [this] { return pkg_->code().fn().destroy(container_); }, &rc);
    if (!st.ok()) log_unreported(st, "while destroying a runner; its container may have leaked");
  }
  cuda_.reset();  // after the container and its graphs, which use its pool and streams
}

void Runner::finish_own_stream() {
  if (!cuda_) return;
  Status st = cuda_->synchronize(cuda_->stream());
  if (!st.ok()) fail(st.code, "package '" + pkg_->name() + "': " + st.message);
}

void Runner::output_shapes(const DLTensor* inputs, size_t num_inputs, int64_t* shapes, size_t capacity) {
  validate_input_shapes(*pkg_, inputs, num_inputs);
  const size_t need = out_dims_;
  if (shapes == nullptr && need > 0) fail(Code::InvalidArgument, "shapes is NULL");
  if (capacity < need) {
    fail(Code::InvalidArgument, "shapes holds " + std::to_string(capacity) + " elements; the outputs of package '" +
                                    pkg_->name() + "' need " + std::to_string(need));
  }
  compute_output_shapes(inputs, num_inputs, shapes, capacity);
}

void Runner::compute_output_shapes(const DLTensor* inputs, size_t num_inputs, int64_t* shapes, size_t capacity) {
  aotrun_pkg_shape_args args{};
  args.struct_size = sizeof(args);
  args.inputs = inputs;
  args.num_inputs = num_inputs;
  args.output_shapes = shapes;
  args.output_shapes_capacity = capacity;
  int32_t rc = package_call(pkg_->name(), "get_output_shapes",
                            [&] { return pkg_->code().fn().output_shapes(container_, &args); });
  if (rc != AOTRUN_PKG_OK) fail(cpu::from_pkg_code(rc), pkg_->package_error("get_output_shapes", rc));
  // The package is checked against its own declarations: a shape that
  // contradicts its output spec would blame a caller whose tensor conforms,
  // and run_alloc would hand out the wrong shape.
  const int64_t* d = shapes;
  for (const auto& spec : pkg_->outputs()) {
    const int nd = static_cast<int>(spec.shape.size());
    for (int k = 0; k < nd; ++k) {
      if (d[k] < 0) {
        fail(Code::Package, "package '" + pkg_->name() + "' reported a negative output dimension: shape " +
                                shape_string(d, nd) + " for output '" + spec.name + "'");
      }
      if (spec.shape[k] >= 0 && d[k] != spec.shape[k]) {
        fail(Code::Package, "package '" + pkg_->name() + "' reported shape " + shape_string(d, nd) + " for output '" +
                                spec.name + "', which contradicts its declared shape " +
                                shape_string(spec.shape.data(), nd) + " (dim " + std::to_string(k) +
                                " is fixed; -1 = any)");
      }
    }
    d += nd;
  }
  // An output whose byte size overflows could never be allocated or checked.
  d = shapes;
  for (const auto& spec : pkg_->outputs()) {
    DLTensor t{};
    t.ndim = static_cast<int>(spec.shape.size());
    t.shape = const_cast<int64_t*>(d);
    t.dtype = spec.dtype;
    if (!checked_bytes(t, nullptr)) {
      fail(Code::Package, "package '" + pkg_->name() + "' reported output shape " + shape_string(d, t.ndim) +
                              " for '" + spec.name + "', too large to address");
    }
    d += t.ndim;
  }
}

void Runner::validate_run_inputs(const DLTensor* inputs, size_t num_inputs) const {
  validate_inputs(*pkg_, inputs, num_inputs, device_);
}

void Runner::validate_run(const DLTensor* inputs, size_t num_inputs, const DLTensor* outputs, size_t num_outputs) {
  validate_inputs(*pkg_, inputs, num_inputs, device_);
  if (!pkg_->outputs_known()) {
    // A .pt2 without specs: the bridge compares each output with the tensor
    // given once the model has produced it.
    validate_output_layout(*pkg_, outputs, num_outputs, device_);
    return;
  }
  const size_t need = out_dims_;
  int64_t key[ShapeCache::kKey];
  size_t key_len = 0;
  ShapeCache& cache = t_shape_cache;
  const bool cacheable = need <= kStackDims && make_key(inputs, num_inputs, key, &key_len);
  if (cacheable && cache.runner_id == id_ && cache.key_len == key_len &&
      std::equal(key, key + key_len, cache.key)) {
    validate_outputs(*pkg_, outputs, num_outputs, cache.out, device_);
    return;
  }
  int64_t stack[kStackDims];
  std::vector<int64_t> heap;
  int64_t* shapes = stack;
  if (need > kStackDims) {
    heap.resize(need);
    shapes = heap.data();
  }
  compute_output_shapes(inputs, num_inputs, shapes, need > kStackDims ? need : kStackDims);
  if (cacheable) {
    cache.runner_id = id_;
    cache.key_len = key_len;
    std::copy(key, key + key_len, cache.key);
    cache.out_len = need;
    std::copy(shapes, shapes + need, cache.out);
  }
  validate_outputs(*pkg_, outputs, num_outputs, shapes, device_);
}

void Runner::call_package(bool single_threaded, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                          size_t num_outputs, void* stream) {
  // Packages see byte_offset == 0: fold any offset into the data pointer.
  std::vector<DLTensor> adjusted;
  auto has_offset = [](const DLTensor* t, size_t n) {
    for (size_t i = 0; i < n; ++i) if (t[i].byte_offset != 0) return true;
    return false;
  };
  if (has_offset(inputs, num_inputs) || has_offset(outputs, num_outputs)) {
    adjusted.assign(inputs, inputs + num_inputs);
    adjusted.insert(adjusted.end(), outputs, outputs + num_outputs);
    for (auto& t : adjusted) {
      if (t.data != nullptr) t.data = static_cast<char*>(t.data) + t.byte_offset;  // NULL only when empty
      t.byte_offset = 0;
    }
    inputs = adjusted.data();
    outputs = adjusted.data() + num_inputs;
  }
  aotrun_pkg_run_args args{};
  args.struct_size = sizeof(args);
  args.inputs = inputs;
  args.num_inputs = num_inputs;
  args.outputs = outputs;
  args.num_outputs = num_outputs;
  args.stream = stream != nullptr ? stream : own_stream_;
  const auto& f = pkg_->code().fn();
  std::string& launch_failure = cpu::last_launch_failure();
  if (!launch_failure.empty()) launch_failure.clear();
  if (cuda_) cuda::clear_last_failure();
  int32_t rc = package_call(pkg_->name(), single_threaded ? "run_single_threaded" : "run", [&] {
    return single_threaded ? f.run_single_threaded(container_, &args) : f.run(container_, &args);
  });
  if (rc == AOTRUN_PKG_OK) return;
  const char* what = single_threaded ? "run_single_threaded" : "run";
  if (cuda_ && !cuda::last_failure().empty()) {
    fail(cpu::from_pkg_code(rc), "package '" + pkg_->name() + "': " + what + " failed: " + cuda::last_failure() +
                                     " [package: " + pkg_->code().last_error() + "]");
  }
  if (!launch_failure.empty()) {
    fail(cpu::from_pkg_code(rc), "package '" + pkg_->name() + "': " + what + " failed in launched work: " + launch_failure);
  }
  if (rc == AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED && !cpu::capture_rules::last_violation().empty()) {
    fail(Code::CaptureUnsupported, "package '" + pkg_->name() + "': " + what + " failed under stream capture: " +
                                       cpu::capture_rules::last_violation() + " [package: " + pkg_->code().last_error() + "]");
  }
  fail(cpu::from_pkg_code(rc), pkg_->package_error(what, rc));
}

void Runner::dispatch(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                      void* stream) {
  switch (effective_) {
    case RunMode::Threaded:
      call_package(false, inputs, num_inputs, outputs, num_outputs, stream);
      if (stream == nullptr) finish_own_stream();
      if (uses_fallback_) RunnerCounters::add(counters_.fallback_runs);
      return;
    case RunMode::SingleThreaded: {
      std::lock_guard<std::mutex> lock(serial_);
      call_package(true, inputs, num_inputs, outputs, num_outputs, stream);
      if (stream == nullptr) finish_own_stream();
      return;
    }
    case RunMode::Graph: {
      std::lock_guard<std::mutex> lock(serial_);
      graphs_->run(inputs, num_inputs, outputs, num_outputs, stream);
      return;
    }
  }
}

void Runner::run_counted(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                         void* stream) {
  try {
    dispatch(inputs, num_inputs, outputs, num_outputs, stream);
  } catch (...) {
    RunnerCounters::add(counters_.failures);
    throw;
  }
  RunnerCounters::add(counters_.runs);
}

void Runner::run(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, cpu::Stream* stream) {
  if (stream != nullptr && cuda_) {
    fail(Code::InvalidArgument, "package '" + pkg_->name() +
                                    "' runs on a CUDA device; an aotrun CPU stream cannot carry its work");
  }
  validate_run(inputs, num_inputs, outputs, num_outputs);
  run_counted(inputs, num_inputs, outputs, num_outputs, stream);
}

void Runner::run_on_device_stream(void* stream, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                  size_t num_outputs) {
  if (!cuda_) {
    fail(Code::InvalidArgument, "package '" + pkg_->name() + "' runs on the CPU; use aotrun_runner_run_on_stream");
  }
  validate_run(inputs, num_inputs, outputs, num_outputs);
  run_counted(inputs, num_inputs, outputs, num_outputs, stream);
}

void Runner::evict_graphs() {
  if (!graphs_) return;
  std::lock_guard<std::mutex> lock(serial_);
  graphs_->evict();
}

}  // namespace aotrun

namespace aotrun {

void Runner::freeze_graphs() {
  if (!graphs_) return;
  std::lock_guard<std::mutex> lock(serial_);
  graphs_->freeze();
}

}  // namespace aotrun
