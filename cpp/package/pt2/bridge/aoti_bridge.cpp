#include "package/pt2/bridge/aoti_bridge.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "package/tensor_spec.hpp"
#include "package/pt2/binding/aoti_library.hpp"
#include "package/pt2/constants/constant_list.hpp"
#include "package/pt2/constants/model_constant_update.hpp"
#include "package/pt2/binding/cuda_requirements.hpp"
#include "package/pt2/specs/input_layout.hpp"
#include "package/pt2/binding/link_check.hpp"
#include "package/pt2/constants/model_constants.hpp"
#include "package/pt2/archive/pt2_archive.hpp"
#include "package/pt2/binding/tensor_convert.hpp"
#include "package/pt2/specs/wrapper_specs.hpp"
#include "base/guard.hpp"
#include "base/checked_math.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

constexpr uint64_t kMagic = 0x7074325f62726467ull;  // "pt2_brdg"
constexpr size_t kMaxShapeKeys = 256;
constexpr size_t kMaxSourceBytes = 64u << 20;

thread_local std::string t_last_error;

int32_t fail_with(int32_t code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

// The bridge is a package: nothing may leave its entry points as an
// exception. It calls foreign C++ (the model, libtorch's shim) behind C
// functions that should not throw, and allocates; whatever escapes anyway
// becomes a status (bad_alloc: OUT_OF_MEMORY) with its text as last error.
template <class F>
int32_t bridge_guard(const char* where, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    const bool oom = caught().kind == Caught::Kind::OutOfMemory;
    try {
      t_last_error =
          oom ? std::string(where) + ": out of memory" : std::string(where) + " " + detail::describe_thrown();
    } catch (...) {
      t_last_error.clear();
    }
    return oom ? AOTRUN_PKG_ERR_OUT_OF_MEMORY : AOTRUN_PKG_ERR_RUNTIME;
  }
}

uint32_t bridge_abi_version() { return AOTRUN_PKG_MAKE_VERSION(1, 1); }
const char* bridge_last_error() { return t_last_error.c_str(); }

// Shared by every container of one opened .pt2.
struct Bridge {
  std::unique_ptr<PrivateDir> dir;
  std::unique_ptr<AotiLibrary> lib;
  std::unique_ptr<ModelConstants> constants;  // where the weights are; provided to every container
  const TorchShim* shim = nullptr;
  std::string name;

  UpdatePlan update_plan;  // how this release takes replacement constants (read at open)

  std::mutex mu;  // guards everything below
  // The model's constants, read from the first container (package open
  // creates one). Never changed once constants_ready is set.
  std::atomic<bool> constants_ready{false};
  std::vector<Pt2Constant> constants_list;
  std::vector<ConstantInfo> constants_infos;  // what model_constants() hands out
  bool has_folded = false;
  std::string sources;             // the model's C++ sources, until settle_specs parses them
  std::vector<InputCheck> checks;  // empty when the sources carry none
  // Per input: the strides the model was compiled for; empty = row-major.
  std::vector<std::vector<int64_t>> layouts;
  std::string no_checks_reason;
  bool specs_ready = false;
  std::vector<TensorSpec> inputs, outputs;                      // the storage the ABI specs point into
  std::map<std::vector<int64_t>, std::vector<int64_t>> shapes;  // input shapes -> output shapes
};

struct WorkPool;

struct Container {
  uint64_t magic = kMagic;
  Bridge* b = nullptr;
  AotiContainerHandle h = nullptr;
  const aotrun_pkg_host* host = nullptr;
  // Tensor handles the model's container uses without owning them (its
  // user-managed constants): deleted after the container.
  std::vector<AtenTensorHandle> kept;
  // This container's view of the weights blob its kept handles point into
  // (none when the constants are elsewhere or were copied).
  std::unique_ptr<BlobMapping> weights;
  // Launch contexts released by finished runs, for the next runs (shared
  // with every context made here, which may outlive the container).
  std::shared_ptr<WorkPool> pool;
  Container();
  ~Container();
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;
};

Container* as_container(aotrun_pkg_container* c) {
  auto* k = reinterpret_cast<Container*>(c);
  return k != nullptr && k->magic == kMagic ? k : nullptr;
}

// Runs the model once, synchronously, on zero inputs of the given shapes and
// dtypes, and reports its outputs. AOTInductor's threaded run is safe to call
// from any thread.
bool probe(Bridge& b, AotiContainerHandle h, const std::vector<DLDataType>& dtypes,
           const std::vector<std::vector<int64_t>>& shapes, std::vector<OutputMeta>* out, std::string* why) {
  // Zeros read the same in any layout; the handles still carry the one the
  // model expects (its checks, when on, compare them).
  const size_t n_in = dtypes.size();
  std::vector<std::vector<char>> storage(n_in);
  std::vector<AtenTensorHandle> in(n_in, nullptr);
  for (size_t i = 0; i < n_in; ++i) {
    // The shapes come from the caller (validated) or from the model's
    // sources (its compiled minimum sizes): a product that wraps would hand
    // the model a buffer smaller than the shape it is told.
    uint64_t count = 0, bytes = 0;
    if (!checked_numel(shapes[i].data(), static_cast<int>(shapes[i].size()), &count) ||
        !checked_mul<uint64_t>(count, element_bytes(dtypes[i]), &bytes) || !checked_add<uint64_t>(bytes, 1, &bytes) ||
        bytes > (uint64_t(1) << 62)) {
      std::string dims;
      for (int64_t d : shapes[i]) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      *why = "probe input " + std::to_string(i) + " of shape [" + dims + "] is too large to address";
      delete_handles(*b.shim, in.data(), i);
      return false;
    }
    storage[i].assign(static_cast<size_t>(bytes), 0);
    DLTensor t{};
    t.data = storage[i].data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int>(shapes[i].size());
    t.dtype = dtypes[i];
    t.shape = const_cast<int64_t*>(shapes[i].data());
    const int64_t* layout = i < b.layouts.size() && !b.layouts[i].empty() ? b.layouts[i].data() : nullptr;
    if (!wrap_input(*b.shim, t, &in[i], why, layout)) {
      delete_handles(*b.shim, in.data(), i);
      return false;
    }
  }
  size_t n_out = 0;
  b.lib->fn().num_outputs(h, &n_out);
  std::vector<AtenTensorHandle> outs(n_out, nullptr);
  if (b.lib->fn().run(h, in.data(), n_in, outs.data(), n_out, nullptr, nullptr) != 0) {
    *why = b.lib->failure(AotiLibrary::kRun) + " (on zero inputs)";
    return false;  // the inputs were stolen by the model
  }
  out->assign(n_out, OutputMeta{});
  bool ok = true;
  for (size_t i = 0; i < n_out && ok; ++i) ok = describe_output(*b.shim, outs[i], &(*out)[i], why);
  delete_handles(*b.shim, outs.data(), n_out);
  return ok;
}

// Reads the model's constants and its way of replacing them, once (before
// settle_specs, which drops the sources).
void settle_constants(Bridge& b, AotiContainerHandle h) {
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.constants_ready) return;
  b.constants_list = read_constants(*b.lib, h, *b.shim, b.sources);
  for (const auto& c : b.constants_list) {
    b.constants_infos.push_back(c.info);
    b.has_folded = b.has_folded || c.info.folded;
  }
  b.constants_ready.store(true, std::memory_order_release);
}

// Deletes a container's kept handles (after the container itself).
void release_kept(const TorchShim& shim, std::vector<AtenTensorHandle>* kept) {
  delete_handles(shim, kept->data(), kept->size());
  kept->clear();
}

// Fills b.inputs / b.outputs once, from the checks and two probes (the
// second with every dynamic input dim one larger, to tell which output dims
// follow the inputs).
void settle_specs(Bridge& b, AotiContainerHandle h) {
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.specs_ready) return;
  const AotiFunctions& f = b.lib->fn();
  size_t n_in = 0, n_out = 0;
  if (f.num_inputs(h, &n_in) != 0 || f.num_outputs(h, &n_out) != 0 || n_in > 4096 || n_out > 4096) {
    fail(Code::BadPackage, "package '" + b.name + "' does not report its input and output counts");
  }
  auto name_of = [&](AotiFunctions::GetName get, size_t i, const char* kind) {
    const char* s = nullptr;
    if (get != nullptr && get(h, i, &s) == 0 && s != nullptr && *s != '\0') return std::string(s);
    return std::string(kind) + std::to_string(i);
  };
  std::vector<TensorSpec> inputs(n_in), outputs(n_out);
  for (size_t i = 0; i < n_in; ++i) inputs[i].name = name_of(f.input_name, i, "input");
  for (size_t i = 0; i < n_out; ++i) outputs[i].name = name_of(f.output_name, i, "output");

  // Input checks for exactly the inputs the model reports.
  std::string why;
  bool known = !b.sources.empty() && parse_input_checks(b.sources, n_in, &b.checks, &why);
  if (b.sources.empty()) why = "the archive holds no C++ sources of the model";
  std::string().swap(b.sources);  // parsed once; can be megabytes
  for (size_t i = 0; known && i < n_in; ++i) {
    const InputCheck& c = b.checks[i];
    if (!dlpack_dtype_named(c.dtype, &inputs[i].dtype)) {
      known = false;
      why = "input " + std::to_string(i) + " has dtype '" + c.dtype + "', which aotrun cannot represent";
    }
    inputs[i].shape = c.dims;
  }
  // The layout each input was compiled for: a model given other strides
  // computes wrong numbers without an error, so one aotrun cannot provide
  // is refused here.
  std::vector<std::vector<int64_t>> layouts(n_in);
  for (size_t i = 0; known && i < n_in; ++i) {
    std::string bad;
    if (!layout_from_checks(b.checks[i], &layouts[i], &bad)) {
      fail(Code::Unsupported,
           "package '" + b.name + "': input " + std::to_string(i) + " ('" + inputs[i].name + "'): " + bad);
    }
  }
  b.layouts = std::move(layouts);
  if (known) {
    // Probe sizes: each dynamic dim at its lower bound (at least 1), then +1.
    std::vector<DLDataType> dtypes;
    std::vector<std::vector<int64_t>> lo, hi;
    bool dynamic = false;
    for (size_t i = 0; i < n_in; ++i) {
      dtypes.push_back(inputs[i].dtype);
      std::vector<int64_t> a = b.checks[i].dims, z = a;
      for (size_t d = 0; d < a.size(); ++d) {
        if (a[d] >= 0) continue;
        a[d] = std::max<int64_t>(b.checks[i].min_dims[d], 1);
        const int64_t up = b.checks[i].max_dims[d];
        z[d] = up < 0 || a[d] + 1 <= up ? a[d] + 1 : a[d];
        dynamic = true;
      }
      lo.push_back(std::move(a));
      hi.push_back(std::move(z));
    }
    std::vector<OutputMeta> m1, m2;
    if (!probe(b, h, dtypes, lo, &m1, &why) || (dynamic && !probe(b, h, dtypes, hi, &m2, &why))) {
      fail(Code::Package, "package '" + b.name + "': reading its output specs failed: " + why);
    }
    for (size_t i = 0; i < n_out; ++i) {
      outputs[i].dtype = m1[i].dtype;
      outputs[i].shape = m1[i].shape;
      if (dynamic) {
        if (m2[i].shape.size() != m1[i].shape.size()) {
          fail(Code::Package,
               "package '" + b.name + "': the rank of output " + std::to_string(i) + " changes with the input sizes");
        }
        for (size_t d = 0; d < m1[i].shape.size(); ++d) {
          if (m1[i].shape[d] != m2[i].shape[d]) outputs[i].shape[d] = -1;
        }
      }
    }
  } else {
    b.no_checks_reason = why;
    for (auto& s : inputs) s.known = false;
    for (auto& s : outputs) s.known = false;
    log(LogLevel::Warn, "package '" + b.name + "' (AOTInductor .pt2): " + why +
                            ", so input dtypes and shapes are unknown: aotrun checks inputs for device and layout "
                            "only (a wrong shape is undefined behaviour in the model) and outputs after each run; "
                            "output shapes cannot be computed ahead (run_alloc and graph mode are unavailable)");
  }
  b.inputs = std::move(inputs);
  b.outputs = std::move(outputs);
  b.specs_ready = true;
}

// --- the package ABI -----------------------------------------------------------

int32_t bridge_create(void* binding, aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  try {
    auto* b = static_cast<Bridge*>(binding);
    if (out == nullptr || args == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: NULL argument");
    if (args->device.device_type != kDLCPU) {
      return fail_with(AOTRUN_PKG_ERR_UNSUPPORTED, "aotrun runs CPU .pt2 packages only (device type " +
                                                       std::to_string(args->device.device_type) + " requested)");
    }
    const size_t models = args->num_models > 0 ? static_cast<size_t>(args->num_models) : 1;
    auto c = std::make_unique<Container>();
    c->b = b;
    c->host = args->host;
    const AotiFunctions& f = b->lib->fn();
    const char* dir = b->dir->path().c_str();
    const int32_t rc = f.create_with_device != nullptr ? f.create_with_device(&c->h, models, "cpu", dir)
                                                       : f.create(&c->h, models, true, dir);
    if (rc != 0 || c->h == nullptr) {
      return fail_with(AOTRUN_PKG_ERR_RUNTIME,
                       b->lib->failure(f.create_with_device ? "AOTInductorModelContainerCreateWithDevice"
                                                            : "AOTInductorModelContainerCreate"));
    }
    try {
      settle_constants(*b, c->h);
      // The host keeps the replacement tensors alive for the container's
      // lifetime; the handles made over them are kept as long.
      std::vector<AotiConstantEntry> entries;
      if (args->num_constants > 0) {
        if (args->constants == nullptr) fail(Code::InvalidArgument, "create: constants is NULL");
        entries = wrap_replacements(*b->shim, b->constants_list, args->constants, args->num_constants, &c->kept);
      }
      // Before anything runs it: the model's own constants (with the
      // replacements, when they come from a mapped blob), then the rest.
      const bool merged = b->constants->provide(*b->lib, c->h, *b->shim, b->constants_list, b->update_plan, entries,
                                                &c->weights, &c->kept);
      if (!entries.empty()) {
        apply_constant_updates(*b->lib, c->h, b->update_plan, merged ? std::vector<AotiConstantEntry>{} : entries,
                               b->has_folded);
        if (!b->update_plan.keeps_tensors()) release_kept(*b->shim, &c->kept);  // copied
      }
      settle_specs(*b, c->h);
    } catch (...) {
      f.destroy(c->h);
      release_kept(*b->shim, &c->kept);
      throw;
    }
    *out = reinterpret_cast<aotrun_pkg_container*>(c.release());
    return AOTRUN_PKG_OK;
  } catch (...) {
    // aotrun's own refusal keeps its kind; anything else (the model's create
    // or a probe run threw: the model failed; out of memory) as bridge_guard.
    const Caught c = caught();
    if (c.kind != Caught::Kind::Error) return bridge_guard("create", []() -> int32_t { throw; });
    return fail_with(c.code == Code::BadPackage || c.code == Code::InvalidArgument ? AOTRUN_PKG_ERR_INVALID_ARGUMENT
                     : c.code == Code::Unsupported                                 ? AOTRUN_PKG_ERR_UNSUPPORTED
                                                                                   : AOTRUN_PKG_ERR_RUNTIME,
                     c.what);
  }
}

int32_t bridge_destroy(aotrun_pkg_container* pc) {
  Container* c = as_container(pc);
  if (c == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "destroy: not a .pt2 container");
  const int32_t rc = bridge_guard("destroy", [&] {
    c->b->lib->fn().destroy(c->h);
    release_kept(*c->b->shim, &c->kept);
    return AOTRUN_PKG_OK;
  });
  c->magic = 0;
  delete c;
  return rc;
}

int32_t bridge_num(aotrun_pkg_container* pc, size_t* out, bool inputs) {
  Container* c = as_container(pc);
  if (c == nullptr || out == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "count: bad argument");
  *out = inputs ? c->b->inputs.size() : c->b->outputs.size();
  return AOTRUN_PKG_OK;
}
int32_t bridge_num_inputs(aotrun_pkg_container* c, size_t* out) { return bridge_num(c, out, true); }
int32_t bridge_num_outputs(aotrun_pkg_container* c, size_t* out) { return bridge_num(c, out, false); }

int32_t bridge_spec(aotrun_pkg_container* pc, size_t i, aotrun_pkg_tensor_spec* out, bool input) {
  Container* c = as_container(pc);
  if (c == nullptr || out == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "spec: bad argument");
  const auto& v = input ? c->b->inputs : c->b->outputs;
  if (i >= v.size()) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "spec: index out of range");
  aotrun_pkg_tensor_spec s{};
  s.struct_size = std::min(out->struct_size, sizeof(s));
  s.name = v[i].name.c_str();
  s.dtype = v[i].dtype;
  s.ndim = v[i].known ? static_cast<int32_t>(v[i].shape.size()) : -1;
  s.shape = v[i].shape.data();
  std::memcpy(out, &s, s.struct_size);
  return AOTRUN_PKG_OK;
}
int32_t bridge_input_spec(aotrun_pkg_container* c, size_t i, aotrun_pkg_tensor_spec* s) {
  return bridge_spec(c, i, s, true);
}
int32_t bridge_output_spec(aotrun_pkg_container* c, size_t i, aotrun_pkg_tensor_spec* s) {
  return bridge_spec(c, i, s, false);
}

int32_t output_shapes_impl(aotrun_pkg_container* pc, const aotrun_pkg_shape_args* a) {
  Container* c = as_container(pc);
  if (c == nullptr || a == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "output_shapes: bad argument");
  Bridge& b = *c->b;
  if (!b.outputs.empty() && !b.outputs[0].known) {
    return fail_with(AOTRUN_PKG_ERR_UNSUPPORTED,
                     "the model's output shapes are unknown ahead of a run (" + b.no_checks_reason + ")");
  }
  std::vector<int64_t> key;
  std::vector<DLDataType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < a->num_inputs; ++i) {
    const DLTensor& t = a->inputs[i];
    key.push_back(t.ndim);
    key.insert(key.end(), t.shape, t.shape + t.ndim);
    dtypes.push_back(t.dtype);
    shapes.emplace_back(t.shape, t.shape + t.ndim);
  }
  std::vector<int64_t> result;
  bool cached = false;  // not result.empty(): all-scalar outputs have no dims
  {
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.shapes.find(key);
    if (it != b.shapes.end()) {
      result = it->second;
      cached = true;
    }
  }
  if (!cached) {
    std::vector<OutputMeta> m;
    std::string why;
    if (!probe(b, c->h, dtypes, shapes, &m, &why)) return fail_with(AOTRUN_PKG_ERR_RUNTIME, "output_shapes: " + why);
    for (const auto& o : m) result.insert(result.end(), o.shape.begin(), o.shape.end());
    std::lock_guard<std::mutex> lock(b.mu);
    if (b.shapes.size() < kMaxShapeKeys) b.shapes.emplace(key, result);
  }
  if (result.size() > a->output_shapes_capacity) {
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "output_shapes: capacity too small");
  }
  std::copy(result.begin(), result.end(), a->output_shapes);
  return AOTRUN_PKG_OK;
}

int32_t bridge_output_shapes(aotrun_pkg_container* pc, const aotrun_pkg_shape_args* a) {
  return bridge_guard("output_shapes", [&] { return output_shapes_impl(pc, a); });
}

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
  Container* c = nullptr;
  bool single_threaded = false;
  std::vector<DLTensor> tensors;  // inputs, then outputs
  size_t n_in = 0;
  std::vector<int64_t> dims;  // every shape, concatenated
  // Per input of a model compiled for a layout other than row-major
  // (Bridge::layouts): whether the caller's tensor is row-major and is
  // converted into `scratch` (kept, so a steady stream of runs allocates
  // nothing) before each run, or already has the model's strides.
  std::vector<uint8_t> convert;
  std::vector<std::vector<char>> scratch;

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

Container::Container() : pool(std::make_shared<WorkPool>()) {}
Container::~Container() {
  if (pool) pool->close();
}

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

// The handle the model gets for input i: a new reference to the kept view
// when `use_views`, else (or when libtorch cannot make references) a fresh
// tensor over the caller's memory.
bool input_handle(const TorchShim& shim, Work& w, size_t i, bool use_views, std::vector<char>* own,
                  AtenTensorHandle* out, std::string* why) {
  DLTensor t = w.tensors[i];
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

int32_t run_work_impl(void* p) {
  auto* w = static_cast<Work*>(p);
  Bridge& b = *w->c->b;
  const TorchShim& shim = *b.shim;
  const size_t n_out = w->tensors.size() - w->n_in;
  // Handles on the stack for the common case: no heap allocation per call.
  // (Not kept in the Work: a caller may launch one captured graph on two
  // streams at once.)
  constexpr size_t kStackHandles = 16;
  AtenTensorHandle stack[kStackHandles] = {};
  std::vector<AtenTensorHandle> heap;
  if (w->tensors.size() > kStackHandles) heap.assign(w->tensors.size(), nullptr);
  AtenTensorHandle* in = heap.empty() ? stack : heap.data();
  AtenTensorHandle* out = in + w->n_in;
  std::string why;
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
  const bool use_views = !w->views_busy.exchange(true, std::memory_order_acquire);
  Busy busy{use_views ? &w->views_busy : nullptr};
  if (use_views && w->views.size() != w->n_in) w->fit_views(w->n_in);  // once per Work and input count
  if (use_views && w->scratch.size() != w->n_in) w->scratch.resize(w->n_in);
  // Converted inputs of a concurrent replay: alive until the model has run.
  std::vector<std::vector<char>> own(use_views ? 0 : w->n_in);
  bool converted = false;
  for (size_t i = 0; i < w->n_in; ++i) {
    converted |= w->convert[i] != 0;
    if (!input_handle(shim, *w, i, use_views, use_views ? nullptr : &own[i], &in[i], &why)) {
      delete_handles(shim, in, i);
      return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "input " + std::to_string(i) + ": " + why);
    }
  }
  if (!converted) busy.release();
  const AotiFunctions& f = b.lib->fn();
  const auto run = w->single_threaded ? f.run_single_threaded : f.run;
  // On failure the inputs may or may not have been stolen; leaking them is
  // the safe side of that uncertainty (they only view the caller's memory).
  if (run(w->c->h, in, w->n_in, out, n_out, nullptr, nullptr) != 0) {
    return fail_with(AOTRUN_PKG_ERR_RUNTIME,
                     b.lib->failure(w->single_threaded ? AotiLibrary::kRunSingleThreaded : AotiLibrary::kRun));
  }
  int32_t rc = AOTRUN_PKG_OK;
  for (size_t i = 0; i < n_out && rc == AOTRUN_PKG_OK; ++i) {
    if (!copy_output(shim, out[i], w->tensors[w->n_in + i], &why)) {
      rc = fail_with(AOTRUN_PKG_ERR_RUNTIME, "output " + std::to_string(i) + " ('" + b.outputs[i].name + "'): " + why);
    }
  }
  delete_handles(shim, out, n_out);
  return rc;
}

int32_t run_work(void* p) {
  return bridge_guard(static_cast<Work*>(p)->single_threaded ? AotiLibrary::kRunSingleThreaded : AotiLibrary::kRun,
                      [&] { return run_work_impl(p); });
}

int32_t run_common_impl(aotrun_pkg_container* pc, const aotrun_pkg_run_args* a, bool single_threaded) {
  Container* c = as_container(pc);
  if (c == nullptr || a == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: bad argument");
  const Bridge& b = *c->b;
  if (a->num_inputs != b.inputs.size() || a->num_outputs != b.outputs.size()) {
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: tensor counts differ from the model's");
  }
  // Dynamic dims must lie in the range the model was compiled for (the
  // runner's specs only say "dynamic").
  for (size_t i = 0; i < b.checks.size() && i < a->num_inputs; ++i) {
    const InputCheck& k = b.checks[i];
    const DLTensor& t = a->inputs[i];
    for (size_t d = 0; d < k.dims.size() && d < static_cast<size_t>(t.ndim); ++d) {
      const int64_t v = t.shape[d];
      if (v < k.min_dims[d] || (k.max_dims[d] >= 0 && v > k.max_dims[d])) {
        return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                         "input " + std::to_string(i) + " ('" + b.inputs[i].name + "'): dim " + std::to_string(d) +
                             " is " + std::to_string(v) + ", outside the range the model was compiled for [" +
                             std::to_string(k.min_dims[d]) + ", " +
                             (k.max_dims[d] >= 0 ? std::to_string(k.max_dims[d]) : std::string("inf")) + "]" +
                             // Refused, not run: the generated code may rely on the bound
                             // (PyTorch's loader checks it too with AOTI_RUNTIME_CHECK_INPUTS=1).
                             (v <= 1 && k.min_dims[d] == 2
                                  ? std::string("; torch.export specialises sizes 0 and 1, so a dim declared dynamic "
                                                "with min 0 or 1 is compiled for 2 and up (pad this dim to 2, or "
                                                "export a model for size ") +
                                        std::to_string(v) + ")"
                                  : std::string()));
      }
    }
  }
  if (!single_threaded) {
    int32_t capturing = 0;
    if (c->host->stream_is_capturing(c->host->host_ctx, a->stream, &capturing) == AOTRUN_PKG_OK && capturing) {
      return fail_with(AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED,
                       std::string(AotiLibrary::kRun) +
                           " tracks model instances with events, which is not permitted while a stream is "
                           "capturing; capture " +
                           AotiLibrary::kRunSingleThreaded + " (single_threaded or graph mode)");
    }
  }
  // Validated by the runner: a row-major tensor (converted before the run)
  // or exactly the layout the model was compiled for.
  for (size_t i = 0; i < a->num_inputs; ++i) {
    const DLTensor& t = a->inputs[i];
    if (t.strides == nullptr || is_row_major(t.shape, t.strides, t.ndim)) continue;
    const std::vector<int64_t>* want = i < b.layouts.size() && !b.layouts[i].empty() ? &b.layouts[i] : nullptr;
    if (want != nullptr && want->size() == static_cast<size_t>(t.ndim) && same_layout(t.shape, t.strides, *want)) {
      continue;
    }
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                     "input " + std::to_string(i) + " ('" + b.inputs[i].name + "') has strides " +
                         shape_string(t.strides, t.ndim) + ", expected row-major" +
                         (want ? " or " + shape_string(want->data(), static_cast<int>(want->size())) : std::string()));
  }
  Work* w = c->pool->take();
  if (w == nullptr) {
    w = new (std::nothrow) Work();
    if (w == nullptr) return fail_with(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "run: out of memory");
    w->pool = c->pool;  // never throws (a shared_ptr copy)
  }
  w->c = c;
  w->single_threaded = single_threaded;
  w->n_in = a->num_inputs;
  w->delete_handle = b.shim->delete_tensor_object;
  try {
    const size_t n = a->num_inputs + a->num_outputs;
    size_t total = 0;
    for (size_t i = 0; i < a->num_inputs; ++i) total += static_cast<size_t>(a->inputs[i].ndim);
    for (size_t i = 0; i < a->num_outputs; ++i) total += static_cast<size_t>(a->outputs[i].ndim);
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
      const DLTensor& t = i < a->num_inputs ? a->inputs[i] : a->outputs[i - a->num_inputs];
      DLTensor& copy = w->tensors[i];
      copy = t;
      copy.shape = at;
      copy.strides = nullptr;  // compact (checked by the runner)
      at = std::copy(t.shape, t.shape + t.ndim, at);
    }
  } catch (const std::bad_alloc&) {
    delete w;
    return fail_with(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "run: out of memory");
  }
  return c->host->launch(c->host->host_ctx, a->stream, &run_work, w, &destroy_work);
}

int32_t bridge_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* a) {
  return bridge_guard("run", [&] { return run_common_impl(c, a, false); });
}
int32_t bridge_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* a) {
  return bridge_guard("run_single_threaded", [&] { return run_common_impl(c, a, true); });
}

// The model's C++ sources in the archive, concatenated (for their checks).
std::string model_sources(const ZipArchive& zip, const Pt2Model& m) {
  std::string all;
  for (const auto& e : m.files) {
    const std::string& n = e.name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".cpp") == 0 && all.size() + e.size <= kMaxSourceBytes) {
      all += zip.read(e, kMaxSourceBytes);
    }
  }
  return all;
}

// The package ABI over one opened model: the PackageCode of a .pt2 archive.
class Pt2Code final : public PackageCode {
 public:
  Pt2Code(const std::string& archive, std::unique_ptr<Bridge> bridge) : bridge_(std::move(bridge)) {
    path_ = archive;
    abi_version_ = bridge_abi_version();
    fn_.abi_version = &bridge_abi_version;
    fn_.get_last_error = &bridge_last_error;
    fn_.destroy = &bridge_destroy;
    fn_.num_inputs = &bridge_num_inputs;
    fn_.num_outputs = &bridge_num_outputs;
    fn_.input_spec = &bridge_input_spec;
    fn_.output_spec = &bridge_output_spec;
    fn_.output_shapes = &bridge_output_shapes;
    fn_.run = &bridge_run;
    fn_.run_single_threaded = bridge_->lib->fn().run_single_threaded != nullptr ? &bridge_run_single_threaded : nullptr;
    symbols_ = bridge_->lib->symbols();
  }
  int32_t create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const override {
    return bridge_create(bridge_.get(), out, args);
  }
  std::string label() const override { return "AOTInductor .pt2"; }
  std::string subject() const override { return label(); }
  std::string run_symbol() const override { return AotiLibrary::kRun; }
  std::string run_single_threaded_symbol() const override { return AotiLibrary::kRunSingleThreaded; }
  bool may_leave_specs_unknown() const override { return true; }
  // Filled by the first create (package open makes a metadata container).
  const std::vector<ConstantInfo>* model_constants() const override {
    return bridge_->constants_ready.load(std::memory_order_acquire) ? &bridge_->constants_infos : nullptr;
  }
  std::vector<int64_t> input_layout(size_t index) const override {
    // Settled by the first container (the host's metadata container).
    std::lock_guard<std::mutex> lock(bridge_->mu);
    return index < bridge_->layouts.size() ? bridge_->layouts[index] : std::vector<int64_t>();
  }

 private:
  std::unique_ptr<Bridge> bridge_;  // every container of this code points into it
};

}  // namespace

bool looks_like_zip(int fd) {
  unsigned char magic[4] = {};
  return ::pread(fd, magic, sizeof magic, 0) == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 &&
         magic[3] == 4;
}

std::unique_ptr<PackageCode> open_pt2(const std::string& path, const std::string& display_name,
                                      const Pt2Options& options) {
  const std::unique_ptr<ZipArchive> zip = ZipArchive::open(path);
  const Pt2Model model = find_model(*zip, options.model.empty() ? kDefaultModel : options.model);
  std::string cpu_isa;  // the vector ISA the model's kernels were compiled for, if the archive says
  if (!model.metadata_json.empty()) {
    // {"AOTI_DEVICE_KEY": "cpu", ...}: only CPU models are bridged so far.
    // A CUDA model is checked for what it would need first, so that a
    // machine without it hears which piece is missing (nothing is extracted
    // yet).
    const nlohmann::json meta = nlohmann::json::parse(model.metadata_json, nullptr, false);
    if (meta.is_object() && meta.contains("AOTI_CPU_ISA") && meta["AOTI_CPU_ISA"].is_string()) {
      cpu_isa = meta["AOTI_CPU_ISA"].get<std::string>();
    }
    if (meta.is_object() && meta.contains("AOTI_DEVICE_KEY") && meta["AOTI_DEVICE_KEY"].is_string() &&
        meta["AOTI_DEVICE_KEY"].get<std::string>() != "cpu") {
      const std::string device = meta["AOTI_DEVICE_KEY"].get<std::string>();
      if (device == "cuda") require_cuda_runtime(display_name, options.libtorch, 0);
      fail(Code::Unsupported, "package '" + display_name + "' is an AOTInductor model for device '" + device +
                                  "'; aotrun runs CPU .pt2 packages only" +
                                  (device == "cuda" ? " (CUDA archives are not yet verified on a GPU)" : ""));
    }
  }

  auto b = std::make_unique<Bridge>();
  b->name = display_name;
  b->shim = &torch_shim(options.libtorch);
  b->sources = model_sources(*zip, model);  // parsed with the model's input count (settle_specs)
  b->dir = std::make_unique<PrivateDir>();
  // A weights blob stored uncompressed is mapped from the archive itself:
  // open time does not grow with the weights.
  const std::string so = extract_model(*zip, model, *b->dir, ModelConstants::blob_in_place(path, model));
  check_model_requirements(so, display_name, *b->shim, cpu_isa);  // before dlopen runs any of it
  b->lib = std::make_unique<AotiLibrary>(so);
  b->update_plan = plan_constant_updates(*b->lib, so);
  b->constants = std::make_unique<ModelConstants>(path, *zip, model, b->dir->path(), *b->lib);
  // The library is loaded and a weights blob mapped: nothing reads the
  // extracted files by name any more (unless the model maps its own file),
  // so they go now, and a process killed later leaves no directory behind.
  if (!b->constants->library_reads_itself()) b->dir->remove();

  return std::make_unique<Pt2Code>(path, std::move(b));
}

}  // namespace aotrun::pt2
