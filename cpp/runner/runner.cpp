#include "runner/runner.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>

#include "base/error.hpp"
#include "base/guard.hpp"
#include "base/log.hpp"
#include "device/device_table.hpp"
#include "runner/container/validate.hpp"
#include "runner/graph/graph_executor.hpp"

namespace aotrun {
namespace {

// Output shapes of common packages fit on the stack; the hot path must not
// allocate.
constexpr size_t kStackDims = 64;

// The last output-shape query of this thread. Output shapes are a pure
// function of the input shapes (package_abi.h), and a serving loop repeats
// the same shapes, so most runs skip the call into the package. Keyed by a
// runner id that is never reused (addresses are).
//
// It also keeps the descriptors of the last run that passed validation in
// full. Validation is a pure function of the runner (immutable) and of each
// tensor's data pointer, device, dtype, rank, dims, byte offset and strides;
// a run whose descriptors equal those field for field (no strides: compact)
// would pass the same checks, so it is not checked again. A serving loop
// that reuses its buffers pays a comparison instead of the checks.
//
// A validated tensor's fields but its dims, as four words: DLTensor keeps
// the device (type, id) and ndim + dtype as 8 contiguous bytes each, so a
// repeat is four compares per tensor.
struct Descriptor {
  void* data;
  uint64_t byte_offset;
  uint64_t device;  // DLDevice's bytes
  uint64_t form;    // ndim and dtype's bytes
};
static_assert(offsetof(DLTensor, dtype) == offsetof(DLTensor, ndim) + 4 && sizeof(DLTensor::ndim) == 4 &&
                  sizeof(DLDataType) == 4 && sizeof(DLDevice) == 8,
              "DLTensor's layout is not dlpack's");
inline uint64_t device_word(const DLTensor& t) {
  uint64_t w;
  std::memcpy(&w, &t.device, sizeof(w));
  return w;
}
inline uint64_t form_word(const DLTensor& t) {
  uint64_t w;
  std::memcpy(&w, reinterpret_cast<const char*>(&t) + offsetof(DLTensor, ndim), sizeof(w));  // ndim, then dtype
  return w;
}
struct ShapeCache {
  static constexpr size_t kKey = 32;
  static constexpr size_t kTensors = 8;  // per side; more are validated each run
  uint64_t runner_id = 0;
  size_t key_len = 0;
  int64_t key[kKey]{};
  size_t out_len = 0;
  int64_t out[kStackDims]{};
  // The last fully validated run of runner_id (valid: descriptors below;
  // their dims are key's and out's).
  bool valid = false;
  size_t num_in = 0, num_out = 0;
  Descriptor in[kTensors]{}, out_desc[kTensors]{};
};
// Every member initialised, so the cache is constant-initialised (zeros in
// the thread's TLS block): an access needs no first-use guard, which cost
// a second __tls_get_addr per run.
thread_local ShapeCache t_shape_cache;
// This thread's cache, looked up once per run: in a shared library each
// access of a thread_local is a call to __tls_get_addr (the compiler
// repeated it per field, nine times per run, issue #41 item 4).
[[gnu::noinline]] ShapeCache* this_thread_cache() noexcept { return &t_shape_cache; }
std::atomic<uint64_t> g_next_runner_id{1};

// Whether the inputs' ranks and dims are exactly `key` (compared in place:
// a hit, the common case, builds nothing).
bool same_key(const DLTensor* inputs, size_t n, const int64_t* key, size_t len) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const int nd = inputs[i].ndim;
    // Before validation (repeats_validated) anything may come: read nothing
    // a bad descriptor does not have.
    if (nd < 0 || (nd > 0 && inputs[i].shape == nullptr)) return false;
    if (k + 1 + static_cast<size_t>(nd) > len || key[k++] != nd) return false;
    for (int d = 0; d < nd; ++d) {
      if (key[k++] != inputs[i].shape[d]) return false;
    }
  }
  return k == len;
}

Descriptor describe(const DLTensor& t) { return Descriptor{t.data, t.byte_offset, device_word(t), form_word(t)}; }

// Whether `t` is the validated tensor `d` with dims `dims` (compact: no
// strides). Reads t's dims only once its rank is known to be d's.
[[gnu::always_inline]] inline bool same(const Descriptor& d, const int64_t* dims, const DLTensor& t) {
  if (t.data != d.data || t.byte_offset != d.byte_offset || device_word(t) != d.device || form_word(t) != d.form ||
      t.strides != nullptr || (t.ndim > 0 && t.shape == nullptr)) {
    return false;
  }
  for (int k = 0; k < t.ndim; ++k) {
    if (t.shape[k] != dims[k]) return false;
  }
  return true;
}

// Whether this run's descriptors equal the last fully validated run's: one
// pass over each tensor (issue #41 item 4). Before validation anything may
// come: nothing is read that a bad descriptor does not have.
bool repeats_validated(const ShapeCache& c, uint64_t runner_id, const DLTensor* inputs, size_t num_inputs,
                       const DLTensor* outputs, size_t num_outputs) {
  if (c.runner_id != runner_id || !c.valid || num_inputs != c.num_in || num_outputs != c.num_out) return false;
  if ((num_inputs > 0 && inputs == nullptr) || (num_outputs > 0 && outputs == nullptr)) return false;
  const int64_t* d = c.key;  // per input: its rank, then its dims
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!same(c.in[i], d + 1, inputs[i])) return false;
    d += 1 + inputs[i].ndim;
  }
  d = c.out;
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!same(c.out_desc[i], d, outputs[i])) return false;
    d += outputs[i].ndim;
  }
  return true;
}

// Called once the inputs matched c->key and the outputs c->out.
void remember_validated(ShapeCache* c, const DLTensor* inputs, size_t num_inputs, const DLTensor* outputs,
                        size_t num_outputs) {
  c->valid = false;  // until every descriptor below is this run's
  if (num_inputs > ShapeCache::kTensors || num_outputs > ShapeCache::kTensors) return;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].strides != nullptr) return;
    c->in[i] = describe(inputs[i]);
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (outputs[i].strides != nullptr) return;
    c->out_desc[i] = describe(outputs[i]);
  }
  c->num_in = num_inputs;
  c->num_out = num_outputs;
  c->valid = true;
}

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

// What the device layer needs of the package, as plain data.
DevicePackage device_package(const Package& pkg) { return {pkg.name(), pkg.device(), pkg.code().fn().get_last_error}; }

}  // namespace

std::unique_ptr<Runner> Runner::create(std::shared_ptr<Package> pkg, const RunnerOptions& options) {
  if (!pkg) fail(Code::InvalidArgument, "package is NULL");
  if (options.num_models < 1 || options.num_models > kMaxModels) {
    fail(Code::InvalidArgument,
         "num_models must be 1.." + std::to_string(kMaxModels) + ", got " + std::to_string(options.num_models));
  }
  std::unique_ptr<Runner> r(new Runner());
  r->pkg_ = std::move(pkg);
  r->options_ = options;
  r->device_ = options.has_device ? options.device : r->pkg_->device();
  // The type (UNSUPPORTED), then the id (INVALID_ARGUMENT), before the
  // device is touched.
  check_device_type(device_package(*r->pkg_), r->device_);
  validate_device_option(r->device_);
  r->out_dims_ = total_output_dims(*r->pkg_);
  r->id_ = g_next_runner_id.fetch_add(1, std::memory_order_relaxed);
  r->settle_mode();
  if (options.max_inflight > kMaxInflight) {
    fail(Code::InvalidArgument, "max_inflight must be at most " + std::to_string(kMaxInflight));
  }
  r->runner_device_ = make_runner_device(device_package(*r->pkg_), r->device_);
  r->window_ = std::make_unique<InflightWindow>(
      options.max_inflight > 0 ? options.max_inflight : r->runner_device_->default_max_inflight(options.num_models));
  auto initial = std::make_unique<ConstantSet>();
  // A package's own constants: its table, or none for a model that holds them.
  if (!r->pkg_->model_holds_constants()) initial->entries = r->pkg_->constants();
  initial->container =
      std::make_unique<Container>(*r->pkg_, *r->runner_device_, r->device_, options.num_models, initial->entries);
  ConstantSet& first = *initial;
  r->slots_ = std::make_unique<ConstantSlots>(std::move(initial));
  if (r->effective_ == RunMode::Graph) {
    std::lock_guard<std::mutex> lock(r->serial_);
    r->graphs_of(first);  // up-front captures fail the creation, not a run
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
}

void Runner::output_shapes(const DLTensor* inputs, size_t num_inputs, int64_t* shapes, size_t capacity) {
  validate_input_shapes(*pkg_, inputs, num_inputs);
  const size_t need = out_dims_;
  if (shapes == nullptr && need > 0) fail(Code::InvalidArgument, "shapes is NULL");
  if (capacity < need) {
    fail(Code::InvalidArgument, "shapes holds " + std::to_string(capacity) + " elements; the outputs of package '" +
                                    pkg_->name() + "' need " + std::to_string(need));
  }
  ConstantSlots::Lease lease(*slots_);
  lease.set().container->output_shapes(inputs, num_inputs, shapes, capacity);
}

void Runner::validate_run_inputs(const DLTensor* inputs, size_t num_inputs) const {
  validate_inputs(*pkg_, inputs, num_inputs, device_);
}

void Runner::validate_run(const DLTensor* inputs, size_t num_inputs, const DLTensor* outputs, size_t num_outputs) {
  ShapeCache& cache = *this_thread_cache();
  if (repeats_validated(cache, id_, inputs, num_inputs, outputs, num_outputs)) return;
  validate_in_full(&cache, inputs, num_inputs, outputs, num_outputs);
}

// Out of line: its frame (the shape query's buffers) is not the repeat's.
[[gnu::noinline]] void Runner::validate_in_full(void* thread_cache, const DLTensor* inputs, size_t num_inputs,
                                                const DLTensor* outputs, size_t num_outputs) {
  ShapeCache& cache = *static_cast<ShapeCache*>(thread_cache);
  validate_inputs(*pkg_, inputs, num_inputs, device_);
  if (!pkg_->outputs_known()) {
    // A .pt2 without specs: the bridge compares each output with the tensor
    // given once the model has produced it.
    validate_output_layout(*pkg_, outputs, num_outputs, device_);
    return;
  }
  const size_t need = out_dims_;
  if (cache.runner_id == id_ && same_key(inputs, num_inputs, cache.key, cache.key_len)) {
    validate_outputs(*pkg_, outputs, num_outputs, cache.out, device_);
    remember_validated(&cache, inputs, num_inputs, outputs, num_outputs);
    return;
  }
  int64_t key[ShapeCache::kKey];
  size_t key_len = 0;
  const bool cacheable = need <= kStackDims && make_key(inputs, num_inputs, key, &key_len);
  int64_t stack[kStackDims];
  std::vector<int64_t> heap;
  int64_t* shapes = stack;
  if (need > kStackDims) {
    heap.resize(need);
    shapes = heap.data();
  }
  {
    ConstantSlots::Lease lease(*slots_);
    lease.set().container->output_shapes(inputs, num_inputs, shapes, need > kStackDims ? need : kStackDims);
  }
  if (cacheable) {
    cache.runner_id = id_;
    cache.valid = false;  // its descriptors belonged to the previous key
    cache.key_len = key_len;
    std::copy(key, key + key_len, cache.key);
    cache.out_len = need;
    std::copy(shapes, shapes + need, cache.out);
  }
  validate_outputs(*pkg_, outputs, num_outputs, shapes, device_);
  if (cacheable) remember_validated(&cache, inputs, num_inputs, outputs, num_outputs);
}

void Runner::dispatch(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs, void* stream) {
  // Serial modes take the lock before the lease: a run waiting for the lock
  // must not hold a set that a writer waits to free. Under the lock they
  // take the serial lease and count the run (count_run).
  switch (effective_) {
    case RunMode::Threaded: {
      ConstantSlots::Lease lease(*slots_);
      Container& c = *lease.set().container;
      c.call(false, inputs, num_inputs, outputs, num_outputs, stream);
      if (stream == nullptr) c.finish_own_stream();
      if (uses_fallback_) RunnerCounters::add(counters_.fallback_runs);
      count_run();
      return;
    }
    case RunMode::SingleThreaded: {
      std::lock_guard<std::mutex> lock(serial_);
      ConstantSlots::SerialLease lease(*slots_);
      Container& c = *lease.set().container;
      c.call(true, inputs, num_inputs, outputs, num_outputs, stream);
      if (stream == nullptr) c.finish_own_stream();
      count_run();
      return;
    }
    case RunMode::Graph: {
      std::lock_guard<std::mutex> lock(serial_);
      ConstantSlots::SerialLease lease(*slots_);
      graphs_of(lease.set()).run(inputs, num_inputs, outputs, num_outputs, stream);
      count_run();
      return;
    }
  }
}

GraphExecutor& Runner::graphs_of(ConstantSet& set) {
  if (!set.graphs) {
    // A set's graphs read its container's constants: each set captures its
    // own, so a replay never reads another set's weights.
    set.graphs =
        std::make_unique<GraphExecutor>(*set.container, options_, counters_, runner_device_->make_graph_device(),
                                        set.generation == 0 ? nullptr : &counters_.graph_recaptures);
    set.graphs->capture_upfront(options_.capture_shapes);
    if (graphs_frozen_) set.graphs->freeze();
  }
  return *set.graphs;
}

void Runner::run_counted(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                         void* stream) {
  try {
    dispatch(inputs, num_inputs, outputs, num_outputs, stream);
  } catch (...) {
    RunnerCounters::add(counters_.failures);
    throw;
  }
}

namespace {

// Out of line and cold: building the message would cost every run a larger frame.
[[noreturn, gnu::noinline, gnu::cold]] void refuse_cpu_stream(const Package& pkg) {
  fail(Code::InvalidArgument,
       "package '" + pkg.name() + "' runs on a CUDA device; an aotrun CPU stream cannot carry its work");
}

}  // namespace

void Runner::run(const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                 cpu::Stream* stream) {
  if (stream != nullptr && !runner_device_->takes_aotrun_streams()) refuse_cpu_stream(*pkg_);
  validate_run(inputs, num_inputs, outputs, num_outputs);
  run_counted(inputs, num_inputs, outputs, num_outputs, stream);
}

void Runner::run_on_device_stream(void* stream, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                  size_t num_outputs) {
  if (runner_device_->takes_aotrun_streams()) {
    fail(Code::InvalidArgument, "package '" + pkg_->name() + "' runs on the CPU; use aotrun_runner_run_on_stream");
  }
  validate_run(inputs, num_inputs, outputs, num_outputs);
  run_counted(inputs, num_inputs, outputs, num_outputs, stream);
}

void Runner::evict_graphs() {
  if (effective_ != RunMode::Graph) return;
  std::lock_guard<std::mutex> writers(slots_->writer_mutex());
  std::lock_guard<std::mutex> lock(serial_);
  slots_->for_each([](ConstantSet& set) {
    if (set.graphs) set.graphs->evict();
  });
}

}  // namespace aotrun

namespace aotrun {

void Runner::freeze_graphs() {
  if (effective_ != RunMode::Graph) return;
  std::lock_guard<std::mutex> writers(slots_->writer_mutex());
  std::lock_guard<std::mutex> lock(serial_);
  graphs_frozen_ = true;
  slots_->for_each([](ConstantSet& set) {
    if (set.graphs) set.graphs->freeze();
  });
}

void Runner::check_writer_thread(const char* what) const {
  // Inside a run (a log callback from package code), a writer could wait
  // for a writer that waits for this very run. Event callbacks hold no run.
  if (slots_->leased_by_this_thread()) {
    fail(Code::InvalidArgument, std::string(what) + " of package '" + pkg_->name() +
                                    "' called from inside one of the runner's own runs: it could wait for itself");
  }
}

void Runner::install(ConstantSet next) {
  auto set = std::make_unique<ConstantSet>(std::move(next));
  set->generation = next_generation_;
  // A package that cannot take these constants (a .pt2 whose release has
  // no way to replace them) answers UNSUPPORTED: a limit of the package for
  // this request, not a broken package.
  try {
    set->container = std::make_unique<Container>(*pkg_, *runner_device_, device_, options_.num_models, set->entries,
                                                 Code::Unsupported);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("constant update: ") + e.what());
  }
  const uint64_t generation = next_generation_++;
  slots_->install_inactive(std::move(set));
  RunnerCounters::add(counters_.constant_updates);
  counters_.inactive_generation.store(generation);
}

void Runner::update_constants(const NamedTensor* tensors, size_t count, uint32_t flags) {
  check_writer_thread("a constant update");
  std::lock_guard<std::mutex> writers(slots_->writer_mutex());
  install(build_update(*pkg_, slots_->active(), tensors, count, flags));
}

void Runner::update_constants_from_file(const std::string& path, uint32_t flags) {
  check_writer_thread("a constant update");
  std::lock_guard<std::mutex> writers(slots_->writer_mutex());
  install(build_update_from_file(*pkg_, slots_->active(), path, flags));
}

void Runner::swap_constants() {
  check_writer_thread("a constant swap");
  std::lock_guard<std::mutex> writers(slots_->writer_mutex());
  if (!slots_->swap()) {
    fail(Code::InvalidArgument, "runner of package '" + pkg_->name() +
                                    "' has no inactive constants to swap in (aotrun_runner_update_constants first)");
  }
  RunnerCounters::add(counters_.constant_swaps);
  counters_.inactive_generation.store(counters_.constant_generation.load());
  counters_.constant_generation.store(slots_->active().generation);
}

void Runner::free_inactive_constants() {
  check_writer_thread("freeing inactive constants");
  std::lock_guard<std::mutex> writers(slots_->writer_mutex());
  if (slots_->free_inactive()) counters_.inactive_generation.store(RunnerCounters::kNoSet);
}

}  // namespace aotrun
