// The launched call of a .pt2 run: a launch context (Work) owns copies of
// the tensor descriptors and the input views kept between runs; a
// container's WorkPool hands them out again, so a steady stream of runs
// allocates nothing here.
#include <cstring>
#include <new>

#include "base/checked_math.hpp"
#include "base/dltensor.hpp"
#include "package/pt2/loading/omp_threads.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/bridge/run_checks.hpp"

namespace aotrun::pt2::bridge {
namespace {

// An input view kept between runs: a handle made by create_tensor_from_blob
// over the data, dtype and shape an input was last given with.
struct View {
  AtenTensorHandle h = nullptr;
  void* data = nullptr;
  DLDataType dtype{};
  std::vector<int64_t> shape;
};

// One launched call of the model: owns copies of the tensor descriptors, so
// that a captured launch can be replayed after the caller's arrays are gone.
// Work objects are reused (WorkPool): a steady stream of synchronous runs
// allocates nothing here.
struct Work {
  // The model's code, kept mapped while this context exists: a graph the
  // caller captured holds the context, and may launch or free it after its
  // runner and package are gone. First, so it is released last.
  std::shared_ptr<const AotiLibrary> lib;
  BridgeContainer* c = nullptr;
  bool single_threaded = false;
  // A CUDA model's stream (the caller's cudaStream_t); NULL for CPU models,
  // whose runs are launched onto the host's stream instead.
  void* stream = nullptr;
  std::vector<DLTensor> tensors;  // inputs, then outputs
  size_t n_in = 0;
  std::vector<int64_t> dims;  // every shape, concatenated
  // Per input of a model compiled for a layout other than row-major
  // (Bridge::layouts): whether the caller's tensor is row-major and is
  // converted into `scratch` (kept, so a steady stream of runs allocates
  // nothing) before each run, or already has the model's strides.
  std::vector<uint8_t> convert;
  std::vector<std::vector<char>> scratch;
  // Set for a run whose outputs are allocated once the model has sized them
  // (run_sizing_outputs); the output descriptors in `tensors` are unused.
  OutputSink* sink = nullptr;

  // Input views, one per input. Making a tensor over the caller's memory and
  // destroying it again (the model steals its input handles) costs ~2,000
  // instructions per input; when input i comes with the same data pointer,
  // dtype and shape as on the previous run of this Work, the model gets a new
  // reference to the kept view instead (new_tensor_handle). A view only
  // points at memory, it owns none; it is used again only for a run whose
  // caller passes that same memory.
  std::vector<View> views;
  // Set while a run uses the views: a captured graph may replay one Work on
  // two streams at once; the second then makes fresh tensors.
  std::atomic<bool> views_busy{false};
  // The shim's delete, copied: a Work may be destroyed late in the process.
  TorchShim::Delete delete_handle = nullptr;
  // Where destroy_work parks it (the pool of the container it was made for).
  std::shared_ptr<WorkPool> pool;

  Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
  ~Work() { fit_views(0); }
  // One view per input: views past `n` are released, missing ones added.
  void fit_views(size_t n) {
    for (size_t i = n; i < views.size(); ++i) {
      if (views[i].h != nullptr) (void)delete_handle(views[i].h);
      views[i].h = nullptr;
    }
    views.resize(n);
  }
};

}  // namespace

// A container's spare launch contexts. A run takes one (or makes one); its
// release (destroy_work, exactly once per launch) parks it again, so a
// steady stream of runs allocates nothing here. The pool outlives its
// container while any context made for it exists (a graph may hold one past
// the container's destruction): a closed pool frees what is released to it.
// Lock-free: take and park are atomic exchanges, and close and park agree on
// who frees a context through the slots themselves.
struct WorkPool {
  static constexpr size_t kSlots = 4;  // concurrent runs on one container that reuse contexts
  std::atomic<Work*> slots[kSlots] = {};
  std::atomic<bool> closed{false};

  Work* take() noexcept {
    for (auto& s : slots) {
      if (s.load(std::memory_order_relaxed) != nullptr) {
        if (Work* w = s.exchange(nullptr, std::memory_order_acquire)) return w;
      }
    }
    return nullptr;
  }
  // Parks `w`, or frees it when the pool is closed or full. Returns right
  // after any delete: that may have destroyed the pool.
  void park(Work* w) noexcept {
    for (auto& s : slots) {
      Work* expected = nullptr;
      if (closed.load() || !s.compare_exchange_strong(expected, w)) continue;
      // Closed after the check: whichever of close() and this exchange
      // finds the context in the slot frees it.
      if (closed.load()) delete s.exchange(nullptr);
      return;
    }
    delete w;
  }
  void close() noexcept {
    closed.store(true);
    for (auto& s : slots) delete s.exchange(nullptr);
  }
};

BridgeContainer::BridgeContainer() : pool(std::make_shared<WorkPool>()) {}
BridgeContainer::~BridgeContainer() {
  if (pool) pool->close();
  // After the model: what it still holds returns to the device when freed.
  if (cuda_pool != nullptr) (void)b->cuda_shim->pool_destroy(cuda_pool);
}

namespace {

void destroy_work(void* p) {
  auto* w = static_cast<Work*>(p);
  w->c = nullptr;
  // park may free w and, with w's reference, the pool itself (its container
  // is gone): neither is touched after it frees.
  WorkPool* pool = w->pool.get();
  if (pool != nullptr) {
    pool->park(w);
  } else {
    delete w;
  }
}

bool same_dims(const int64_t* a, const int64_t* b, size_t n) {
  for (size_t d = 0; d < n; ++d) {
    if (a[d] != b[d]) return false;
  }
  return true;
}

bool view_matches(const TorchShim& shim, const View& v, const DLTensor& t) {
  if (v.h == nullptr || v.data != t.data || v.dtype.code != t.dtype.code || v.dtype.bits != t.dtype.bits ||
      v.dtype.lanes != t.dtype.lanes || v.shape.size() != static_cast<size_t>(t.ndim) ||
      !same_dims(v.shape.data(), t.shape, v.shape.size())) {
    return false;
  }
  // The view must still be what it was made as (a model that changed an
  // input's metadata in place would have changed the kept tensor).
  void* data = nullptr;
  int64_t* sizes = nullptr;
  return shim.get_data_ptr(v.h, &data) == 0 && data == t.data && shim.get_sizes(v.h, &sizes) == 0 &&
         same_dims(v.shape.data(), sizes, v.shape.size());
}

// The handle the model gets for input i (`t`: the caller's tensor, or its
// padded copy): a new reference to the kept view when `use_views`, else (or
// when libtorch cannot make references) a fresh tensor over that memory.
bool input_handle(const TorchShim& shim, Work& w, size_t i, DLTensor t, bool use_views, std::vector<char>* own,
                  AtenTensorHandle* out, std::string* why) {
  const std::vector<int64_t>& want = w.c->b->layouts[i];
  const int64_t* layout = want.empty() ? nullptr : want.data();
  if (layout != nullptr && w.convert[i]) {
    // Row-major in, the model's layout out: into the Work's scratch, or
    // `own` when a concurrent replay holds the Work's buffers.
    std::vector<char>& buf = use_views ? w.scratch[i] : *own;
    uint64_t bytes = 0;
    if (!checked_numel(t.shape, t.ndim, &bytes) || !checked_mul<uint64_t>(bytes, element_bytes(t.dtype), &bytes)) {
      *why = "shape is too large to address";
      return false;
    }
    if (buf.size() < bytes) buf.resize(static_cast<size_t>(bytes));
    if (bytes != 0) {
      to_strided(buf.data(), static_cast<const char*>(t.data), t.shape, layout, t.ndim, element_bytes(t.dtype));
      t.data = buf.data();
    }
  }
  if (use_views && shim.new_tensor_handle != nullptr) {
    View& v = w.views[i];
    if (view_matches(shim, v, t) && shim.new_tensor_handle(v.h, out) == 0) return true;
    if (v.h != nullptr) (void)shim.delete_tensor_object(v.h);
    v.h = nullptr;
    if (!wrap_input(shim, t, &v.h, why, layout)) return false;
    v.data = t.data;
    v.dtype = t.dtype;
    v.shape.assign(t.shape, t.shape + t.ndim);  // allocates only when the rank grows
    if (shim.new_tensor_handle(v.h, out) == 0) return true;
  }
  return wrap_input(shim, t, out, why, layout);
}

// The shim's current CUDA stream for a scope (nothing for CPU models).
class CudaStreamScope {
 public:
  CudaStreamScope(const CudaShim* cuda, void* stream) : cuda_(cuda) {
    if (cuda_ != nullptr) ok_ = cuda_->create_stream_guard(stream, 0, &guard_) == 0;
  }
  ~CudaStreamScope() {
    if (guard_ != nullptr) (void)cuda_->delete_stream_guard(guard_);
  }
  CudaStreamScope(const CudaStreamScope&) = delete;
  CudaStreamScope& operator=(const CudaStreamScope&) = delete;
  bool ok() const { return ok_; }

 private:
  const CudaShim* cuda_;
  void* guard_ = nullptr;
  bool ok_ = true;
};

// Memory from `sink` for output `index`, of the shape the model gave it
// (its padded dims cut back to the request's rows, as copy_output cuts the
// copy); *out describes it. The package's status, t_last_error set.
int32_t sized_output(const Bridge& b, const TorchShim& shim, AtenTensorHandle h, size_t index,
                     const std::vector<int64_t>& rows, OutputSink* sink, DLTensor* out) {
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  const std::string name = "output " + std::to_string(index) + " ('" + b.outputs[index].name + "')";
  if (shim.get_dim(h, &dim) != 0 || shim.get_sizes(h, &sizes) != 0 || dim < 0 || dim > 32) {
    return fail_with(AOTRUN_PKG_ERR_RUNTIME, name + ": the C shim could not describe it");
  }
  int64_t shape[32];
  for (int64_t d = 0; d < dim; ++d) {
    const int g = index < b.follows.size() && static_cast<size_t>(d) < b.follows[index].size()
                      ? b.follows[index][static_cast<size_t>(d)]
                      : -1;
    shape[d] = padded(b, rows, g) ? rows[static_cast<size_t>(g)] : sizes[d];
  }
  std::string why;
  const int32_t rc = sink->allocate(index, shape, static_cast<int32_t>(dim), out, &why);
  if (rc != AOTRUN_PKG_OK) return fail_with(rc, name + ": " + why);
  return AOTRUN_PKG_OK;
}

// A graph the caller captured, launched after the runner it was captured
// from destroyed the container (it closes the pool first): refused, the
// container is gone.
int32_t check_container_alive(const Work& w) {
  if (w.pool == nullptr || w.pool->closed.load(std::memory_order_acquire)) {
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                     "the runner this graph was captured from has been destroyed (or its constants swapped "
                     "out); capture it again from a live runner");
  }
  return AOTRUN_PKG_OK;
}

// The model's input and output handles, on the stack for the common case:
// no heap allocation per call. (Not kept in the Work: a caller may launch
// one captured graph on two streams at once.)
class Handles {
 public:
  explicit Handles(size_t n) {
    if (n > kStackHandles) heap_.assign(n, nullptr);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  AtenTensorHandle* data() { return heap_.empty() ? stack_ : heap_.data(); }

 private:
  static constexpr size_t kStackHandles = 16;
  AtenTensorHandle stack_[kStackHandles] = {};
  std::vector<AtenTensorHandle> heap_;
};

// Here, not before the launch: a graph replays this call with whatever
// the caller's inputs hold then.
// (A CUDA model's inputs are read to the host for it, outside captures.)
int32_t check_input_values(const Bridge& b, const Work& w) {
  return b.cuda ? check_cuda_index_values(b, w.tensors.data(), w.n_in, w.stream)
                : check_index_values(b, w.tensors.data(), w.n_in);
}

// The Work's views and scratch buffers are this run's unless a concurrent
// replay of the same Work holds them. Released once the handles are made
// (they are the model's then), or after the run when the model reads a
// scratch buffer.
struct Busy {
  std::atomic<bool>* flag;
  void release() {
    if (flag != nullptr) flag->store(false, std::memory_order_release);
    flag = nullptr;
  }
  ~Busy() { release(); }
};

// One view and one scratch buffer per input: resized once per Work and
// input count.
void fit_to_inputs(Work& w) {
  if (w.views.size() != w.n_in) w.fit_views(w.n_in);
  if (w.scratch.size() != w.n_in) w.scratch.resize(w.n_in);
}

// The inputs of a batch below the model's minimum (pad_batch), padded to it
// by repeating their last row, into buffers alive until the model has run;
// the outputs are cut back to the caller's shapes (copy_output).
struct PaddedInputs {
  std::vector<DLTensor> inputs;  // the padded copies (nothing allocated when not padded)
  std::vector<std::vector<char>> bytes;
  std::vector<std::vector<int64_t>> shapes;
};

// Input `t` of `rows` rows as `min` rows, the last repeated, in `bytes` and
// `shape`; `t` describes them then. False when its size does not fit.
bool pad_input(DLTensor& t, int64_t rows, int64_t min, std::vector<char>& bytes, std::vector<int64_t>& shape) {
  uint64_t row = 0;  // bytes per row
  if (!checked_numel(t.shape + 1, t.ndim - 1, &row) || !checked_mul<uint64_t>(row, element_bytes(t.dtype), &row)) {
    return false;
  }
  bytes.resize(static_cast<size_t>(row * static_cast<uint64_t>(min)));
  if (row != 0) {
    std::memcpy(bytes.data(), t.data, static_cast<size_t>(row * static_cast<uint64_t>(rows)));
    for (int64_t r = rows; r < min; ++r) {
      std::memcpy(bytes.data() + r * row, bytes.data() + (rows - 1) * row, static_cast<size_t>(row));
    }
  }
  shape.assign(t.shape, t.shape + t.ndim);
  shape[0] = min;
  t.data = bytes.data();
  t.shape = shape.data();
  return true;
}

// Every input of a padded batch (`rows_of`: padded_rows()).
int32_t pad_inputs(const Bridge& b, const Work& w, const std::vector<int64_t>& rows_of, PaddedInputs* pad) {
  pad->inputs.assign(w.tensors.begin(), w.tensors.begin() + static_cast<long>(w.n_in));
  pad->bytes.resize(w.n_in);
  pad->shapes.resize(w.n_in);
  for (size_t i = 0; i < w.n_in; ++i) {
    const int g = i < b.batch_of.size() ? b.batch_of[i] : -1;
    if (!padded(b, rows_of, g)) continue;
    const int64_t rows = rows_of[static_cast<size_t>(g)], min = b.batch_min[static_cast<size_t>(g)];
    if (!pad_input(pad->inputs[i], rows, min, pad->bytes[i], pad->shapes[i])) {
      return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                       "input " + std::to_string(i) + ": shape is too large to address");
    }
  }
  return AOTRUN_PKG_OK;
}

// The model's handle for each of `inputs` (input_handle) into `in`; on a
// failure the handles made so far are deleted. *converted: whether an input
// is converted to the model's layout (the run reads its scratch buffer).
int32_t make_input_handles(const TorchShim& shim, Work& w, const DLTensor* inputs, bool views,
                           std::vector<std::vector<char>>& own, AtenTensorHandle* in, std::string* why,
                           bool* converted) {
  for (size_t i = 0; i < w.n_in; ++i) {
    *converted |= w.convert[i] != 0;
    if (!input_handle(shim, w, i, inputs[i], views, views ? nullptr : &own[i], &in[i], why)) {
      delete_handles(shim, in, i);
      return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "input " + std::to_string(i) + ": " + *why);
    }
  }
  return AOTRUN_PKG_OK;
}

// The model's outputs copied to the caller's tensors (or to the sink's
// memory), then released. A CUDA model's outputs are copied and released on
// the caller's stream: under a capture, the copies are recorded and the
// releases become free nodes of the graph that allocated them (docs/SHIM.md,
// "CUDA").
int32_t copy_outputs(const Bridge& b, const TorchShim& shim, const Work& w, AtenTensorHandle* out, size_t n_out,
                     const std::vector<int64_t>& rows_of, bool padded, std::string* why) {
  CudaStreamScope scope(b.cuda_shim, w.stream);  // null for CPU models
  int32_t rc = scope.ok() ? AOTRUN_PKG_OK
                          : fail_with(AOTRUN_PKG_ERR_RUNTIME, "setting the model's CUDA stream for its outputs failed");
  for (size_t i = 0; i < n_out && rc == AOTRUN_PKG_OK; ++i) {
    DLTensor sized{};
    if (w.sink != nullptr) {
      rc = sized_output(b, shim, out[i], i, rows_of, w.sink, &sized);
      if (rc != AOTRUN_PKG_OK) break;
    }
    if (!copy_output(shim, out[i], w.sink != nullptr ? sized : w.tensors[w.n_in + i], why, padded)) {
      rc = fail_with(AOTRUN_PKG_ERR_RUNTIME, "output " + std::to_string(i) + " ('" + b.outputs[i].name + "'): " + *why);
    }
  }
  delete_handles(shim, out, n_out);
  return rc;
}

int32_t run_work_impl(void* p) {
  auto* w = static_cast<Work*>(p);
  if (const int32_t rc = check_container_alive(*w); rc != AOTRUN_PKG_OK) return rc;
  Bridge& b = *w->c->b;
  const TorchShim& shim = *b.shim;
  const size_t n_out = w->tensors.size() - w->n_in;
  Handles handles(w->tensors.size());
  AtenTensorHandle* in = handles.data();
  AtenTensorHandle* out = in + w->n_in;
  if (const int32_t rc = check_input_values(b, *w); rc != AOTRUN_PKG_OK) return rc;
  std::string why;
  const bool use_views = !w->views_busy.exchange(true, std::memory_order_acquire);
  Busy busy{use_views ? &w->views_busy : nullptr};
  if (use_views) fit_to_inputs(*w);
  const std::vector<int64_t> rows_of = padded_rows(b, w->n_in, w->tensors.data());
  const bool padded = !rows_of.empty();
  PaddedInputs pad;
  if (padded) {
    if (const int32_t rc = pad_inputs(b, *w, rows_of, &pad); rc != AOTRUN_PKG_OK) return rc;
  }
  // Padded inputs are fresh memory each run: no kept views for them.
  const bool views = use_views && !padded;
  // Converted inputs of a concurrent replay: alive until the model has run.
  std::vector<std::vector<char>> own(views ? 0 : w->n_in);
  bool converted = false;
  if (const int32_t rc = make_input_handles(shim, *w, padded ? pad.inputs.data() : w->tensors.data(), views, own, in,
                                            &why, &converted);
      rc != AOTRUN_PKG_OK) {
    return rc;
  }
  if (!converted) busy.release();
  const AotiFunctions& f = b.lib->fn();
  const auto run = w->single_threaded ? f.run_single_threaded : f.run;
  // The model's intermediates and outputs, and their releases below.
  CudaPoolScope pool(b.cuda_shim, w->c->cuda_pool);
  OmpThreadsScope threads(w->c->omp_threads);  // a CPU model's share of the cores
  // On failure the inputs may or may not have been stolen; leaking them is
  // the safe side of that uncertainty (they only view the caller's memory).
  if (!call_model(b, run, w->single_threaded ? AotiLibrary::kRunSingleThreaded : AotiLibrary::kRun, w->c->h, in,
                  w->n_in, out, n_out, w->stream, &why)) {
    return fail_with(AOTRUN_PKG_ERR_RUNTIME, why);
  }
  return copy_outputs(b, shim, *w, out, n_out, rows_of, padded, &why);
}

int32_t run_work(void* p) {
  return bridge_guard(static_cast<Work*>(p)->single_threaded ? AotiLibrary::kRunSingleThreaded : AotiLibrary::kRun,
                      [&] { return run_work_impl(p); });
}

}  // namespace

int32_t run_common(aotrun_pkg_container* pc, const aotrun_pkg_run_args* a, bool single_threaded, OutputSink* sink) {
  BridgeContainer* c = as_container(pc);
  if (c == nullptr || a == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: bad argument");
  if (const int32_t rc = check_run(*c, a, single_threaded); rc != AOTRUN_PKG_OK) return rc;
  const Bridge& b = *c->b;
  Work* w = c->pool->take();
  if (w == nullptr) {
    w = new (std::nothrow) Work();
    if (w == nullptr) return fail_with(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "run: out of memory");
    w->pool = c->pool;  // never throws (shared_ptr copies)
    w->lib = c->lib;
  }
  w->c = c;
  w->sink = sink;
  w->single_threaded = single_threaded;
  w->stream = b.cuda ? a->stream : nullptr;
  w->n_in = a->num_inputs;
  w->delete_handle = b.shim->delete_tensor_object;
  try {
    const size_t n = a->num_inputs + a->num_outputs;
    size_t total = 0;
    for (size_t i = 0; i < a->num_inputs; ++i) total += static_cast<size_t>(a->inputs[i].ndim);
    for (size_t i = 0; i < a->num_outputs && a->outputs != nullptr; ++i) {
      total += static_cast<size_t>(a->outputs[i].ndim);
    }
    // A reused Work already has these sizes: no allocation. dims is never
    // resized below, the tensors point into it.
    if (w->dims.size() < total) w->dims.resize(total);
    if (w->tensors.size() != n) w->tensors.resize(n);
    w->convert.assign(a->num_inputs, 0);  // no allocation once sized
    for (size_t i = 0; i < a->num_inputs && !b.layouts.empty(); ++i) {
      const DLTensor& t = a->inputs[i];
      w->convert[i] = !b.layouts[i].empty() && (t.strides == nullptr || is_row_major(t.shape, t.strides, t.ndim));
    }
    int64_t* at = w->dims.data();
    for (size_t i = 0; i < n; ++i) {
      DLTensor& copy = w->tensors[i];
      if (i >= a->num_inputs && a->outputs == nullptr) {
        copy = DLTensor{};  // sized by the model: the sink's (sized_output)
        continue;
      }
      const DLTensor& t = i < a->num_inputs ? a->inputs[i] : a->outputs[i - a->num_inputs];
      copy = t;
      copy.shape = at;
      copy.strides = nullptr;  // compact (checked by the runner)
      at = std::copy(t.shape, t.shape + t.ndim, at);
    }
  } catch (const std::bad_alloc&) {
    delete w;
    return fail_with(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "run: out of memory");
  }
  if (b.cuda) {
    // The model enqueues its kernels on the stream itself, from this thread
    // (a host function launched on a CUDA stream may not call CUDA); a
    // capture of the stream records them.
    const int32_t rc = run_work(w);
    destroy_work(w);
    return rc;
  }
  return c->host->launch(c->host->host_ctx, a->stream, &run_work, w, &destroy_work);
}

bool call_model(const Bridge& b, AotiFunctions::Run run, const char* what, AotiContainerHandle h, AtenTensorHandle* in,
                size_t n_in, AtenTensorHandle* out, size_t n_out, void* stream, std::string* why) {
  const TorchShim& shim = *b.shim;
  if (shim.set_last_error != nullptr) shim.set_last_error(nullptr);
  if (run(h, in, n_in, out, n_out, stream, b.proxy_executor.get()) == 0) return true;
  const char* reason = shim.last_error != nullptr ? shim.last_error() : nullptr;
  *why = b.lib->failure(what) +
         (reason != nullptr && *reason != '\0' ? std::string("; aotrun's shim: ") + reason : std::string());
  return false;
}

}  // namespace aotrun::pt2::bridge
