// The package ABI's entry points of a .pt2 (everything but the run's body:
// run_checks.hpp, launch_contexts.cpp). Nothing leaves them as an exception.
#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "package/pt2/loading/omp_threads.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/bridge/run_checks.hpp"
#include "package/pt2/constants/parameters.hpp"

namespace aotrun::pt2::bridge {

thread_local std::string t_last_error;

uint32_t abi_version() { return AOTRUN_PKG_MAKE_VERSION(1, 1); }
const char* last_error() { return t_last_error.c_str(); }

int32_t create(void* binding, aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  try {
    auto* b = static_cast<Bridge*>(binding);
    if (out == nullptr || args == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: NULL argument");
    const DLDeviceType compiled = b->cuda ? kDLCUDA : kDLCPU;
    if (args->device.device_type != compiled || (b->cuda && args->device.device_id != 0)) {
      return fail_with(AOTRUN_PKG_ERR_UNSUPPORTED, std::string("the model was compiled for ") +
                                                       (b->cuda ? "CUDA device 0" : "the CPU") + " (device type " +
                                                       std::to_string(args->device.device_type) + ", id " +
                                                       std::to_string(args->device.device_id) + " requested)");
    }
    if (BridgeContainer* kept = take_spare(*b, *args)) {  // package open's, the weights loaded
      *out = reinterpret_cast<aotrun_pkg_container*>(kept);
      return AOTRUN_PKG_OK;
    }
    const size_t models = args->num_models > 0 ? static_cast<size_t>(args->num_models) : 1;
    auto c = std::make_unique<BridgeContainer>();
    c->b = b;
    c->lib = b->lib;
    c->host = args->host;
    if (!b->cuda) c->omp_threads = omp_threads_per_run(models);
    const AotiFunctions& f = b->lib->fn();
    const char* dir = b->dir->path().c_str();
    // A CUDA container's tensors, from its creation on, come from a pool of
    // its own (destroyed with it, also when creation fails below).
    if (b->cuda && b->cuda_shim->pool_create(0, &c->cuda_pool) != 0) {
      return fail_with(AOTRUN_PKG_ERR_RUNTIME,
                       "create: creating the model's CUDA memory pool failed" + shim_error(*b->shim));
    }
    CudaPoolScope pool(b->cuda_shim, c->cuda_pool);
    // Creation (constant folding) runs model code on the opening thread: on
    // one thread, so that thread keeps no OpenMP team (omp_threads.hpp).
    OmpThreadsScope one(b->cuda ? 0 : 1);
    // The library's pages of the weights copied so far go back to the kernel
    // as each constant is made, not only once all are: otherwise the whole
    // blob is resident twice for a moment (frozen BERT-base: 266 MiB peak
    // against 158 steady; docs/PERFORMANCE.md section 27).
    // Slides in place only when no constant update will copy into the blob.
    ConstantPagesScope pages(*b->shim, *b->lib, args->num_constants == 0 || b->update_plan.keeps_tensors());
    const int32_t rc = f.create_with_device != nullptr
                           ? f.create_with_device(&c->h, models, b->cuda ? "cuda" : "cpu", dir)
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
      const bool merged = b->constants->provide(*b->lib, c->h, *b->shim, b->cuda, b->constants_list, b->update_plan,
                                                entries, &c->weights, &c->kept);
      if (!entries.empty()) {
        apply_constant_updates(*b->lib, c->h, b->update_plan, merged ? std::vector<AotiConstantEntry>{} : entries,
                               b->has_folded, {b->shim, b->cuda, &c->kept});
        if (!b->update_plan.keeps_tensors()) release_kept(*b->shim, &c->kept);  // copied
      }
      settle_specs(*b, c->h);
      // Its constants are final now.
      c->declared_parameters = declare_parameters(*b->lib, c->h, *b->shim, b->constants_list, b->cuda);
      b->lib->release_constant_pages();  // the container has its copy now
    } catch (...) {
      f.destroy(c->h);
      release_kept(*b->shim, &c->kept);
      throw;
    }
    c->spare_kind = !b->cuda && args->num_models == 0 && args->num_constants == 0;
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

int32_t destroy(aotrun_pkg_container* pc) {
  BridgeContainer* c = as_container(pc);
  if (c == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "destroy: not a .pt2 container");
  if (park_spare(c)) return AOTRUN_PKG_OK;
  return destroy_container(c);
}

int32_t destroy_container(BridgeContainer* c) {
  const int32_t rc = bridge_guard("destroy", [&] {
    c->lib->fn().destroy(c->h);
    release_kept(*c->b->shim, &c->kept);
    return AOTRUN_PKG_OK;
  });
  c->magic = 0;
  delete c;
  return rc;
}

namespace {

int32_t count(aotrun_pkg_container* pc, size_t* out, bool inputs) {
  BridgeContainer* c = as_container(pc);
  if (c == nullptr || out == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "count: bad argument");
  *out = inputs ? c->b->inputs.size() : c->b->outputs.size();
  return AOTRUN_PKG_OK;
}
}  // namespace

int32_t num_inputs(aotrun_pkg_container* c, size_t* out) { return count(c, out, true); }
int32_t num_outputs(aotrun_pkg_container* c, size_t* out) { return count(c, out, false); }

namespace {

int32_t spec(aotrun_pkg_container* pc, size_t i, aotrun_pkg_tensor_spec* out, bool input) {
  BridgeContainer* c = as_container(pc);
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
}  // namespace

int32_t input_spec(aotrun_pkg_container* c, size_t i, aotrun_pkg_tensor_spec* s) { return spec(c, i, s, true); }
int32_t output_spec(aotrun_pkg_container* c, size_t i, aotrun_pkg_tensor_spec* s) { return spec(c, i, s, false); }

namespace {

int32_t output_shapes_impl(aotrun_pkg_container* pc, const aotrun_pkg_shape_args* a) {
  BridgeContainer* c = as_container(pc);
  if (c == nullptr || a == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "output_shapes: bad argument");
  Bridge& b = *c->b;
  // The query runs the model (on zeros): the same checks as a run first.
  if (const int32_t rc = check_input_shapes(b, a->num_inputs, a->inputs); rc != AOTRUN_PKG_OK) return rc;
  if (!b.outputs.empty() && !b.outputs[0].known) {
    return fail_with(AOTRUN_PKG_ERR_UNSUPPORTED,
                     "the model's output shapes are unknown ahead of a run (" + b.no_checks_reason + ")");
  }
  if (b.any_data_dependent) {
    // A probe on zeros would give the sizes of zeros, not of this request
    // (issue #40): a clear refusal instead of a wrong shape.
    size_t i = 0;
    while (i + 1 < b.data_dependent.size() && !b.data_dependent[i]) ++i;
    return fail_with(AOTRUN_PKG_ERR_UNSUPPORTED,
                     "output " + std::to_string(i) + " ('" + b.outputs[i].name +
                         "') has a size that depends on the values of the inputs (the model reads it from a "
                         "tensor during the run), so it is known only after the run: run it with "
                         "aotrun_runner_run_alloc, which allocates each output once the model has sized it "
                         "(docs/PT2.md, \"Data-dependent sizes\")");
  }
  std::vector<int64_t> key;
  std::vector<DLDataType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  // A padded batch computes at its minimum; the dims that follow it are set
  // back below.
  const std::vector<int64_t> rows = padded_rows(b, a->num_inputs, a->inputs);
  for (size_t i = 0; i < a->num_inputs; ++i) {
    const DLTensor& t = a->inputs[i];
    shapes.emplace_back(t.shape, t.shape + t.ndim);
    const int g = i < b.batch_of.size() ? b.batch_of[i] : -1;
    if (padded(b, rows, g) && t.ndim > 0) shapes.back()[0] = b.batch_min[static_cast<size_t>(g)];
    key.push_back(t.ndim);
    key.insert(key.end(), shapes.back().begin(), shapes.back().end());
    dtypes.push_back(t.dtype);
  }
  std::vector<int64_t> result;
  bool have = false;  // not result.empty(): all-scalar outputs have no dims
  // Every output dim fixed (the wrapper writes each as an integer literal):
  // the specs are the answer, and the model does not run. A probe here was a
  // whole extra run before the first request of `run_alloc` or of a caller
  // that sizes its outputs first (issue #41: 130 ms of ResNet-18's first
  // result).
  if (std::all_of(b.outputs.begin(), b.outputs.end(), [](const TensorSpec& o) {
        return std::all_of(o.shape.begin(), o.shape.end(), [](int64_t d) { return d >= 0; });
      })) {
    for (const TensorSpec& o : b.outputs) result.insert(result.end(), o.shape.begin(), o.shape.end());
    have = true;
  }
  if (!have) {
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.shapes.find(key);
    if (it != b.shapes.end()) {
      result = it->second;
      have = true;
    }
  }
  if (!have) {
    std::vector<OutputMeta> m;
    std::string why;
    CudaPoolScope pool(b.cuda_shim, c->cuda_pool);
    if (!probe(b, c->h, dtypes, shapes, &m, &why)) return fail_with(AOTRUN_PKG_ERR_RUNTIME, "output_shapes: " + why);
    for (const auto& o : m) result.insert(result.end(), o.shape.begin(), o.shape.end());
    std::lock_guard<std::mutex> lock(b.mu);
    if (b.shapes.size() < kMaxShapeKeys) b.shapes.emplace(key, result);
  }
  if (!rows.empty()) {  // the dims that follow a padded batch (settle_batch)
    size_t at = 0;
    for (size_t o = 0; o < b.outputs.size(); ++o) {
      for (size_t d = 0; d < b.outputs[o].shape.size() && at + d < result.size(); ++d) {
        const int g = o < b.follows.size() && d < b.follows[o].size() ? b.follows[o][d] : -1;
        if (padded(b, rows, g)) result[at + d] = rows[static_cast<size_t>(g)];
      }
      at += b.outputs[o].shape.size();
    }
  }
  if (result.size() > a->output_shapes_capacity) {
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "output_shapes: capacity too small");
  }
  std::copy(result.begin(), result.end(), a->output_shapes);
  return AOTRUN_PKG_OK;
}

}  // namespace

int32_t output_shapes(aotrun_pkg_container* pc, const aotrun_pkg_shape_args* a) {
  return bridge_guard("output_shapes", [&] { return output_shapes_impl(pc, a); });
}

int32_t run(aotrun_pkg_container* pc, const aotrun_pkg_run_args* a) {
  return bridge_guard("run", [&] { return run_common(pc, a, false); });
}
int32_t run_single_threaded(aotrun_pkg_container* pc, const aotrun_pkg_run_args* a) {
  return bridge_guard("run_single_threaded", [&] { return run_common(pc, a, true); });
}

int32_t run_sizing_outputs(aotrun_pkg_container* pc, bool single_threaded, const DLTensor* inputs, size_t num_inputs,
                           void* stream, OutputSink* sink) {
  const char* what = single_threaded ? "run_single_threaded" : "run";
  return bridge_guard(what, [&] {
    BridgeContainer* c = as_container(pc);
    if (c == nullptr || sink == nullptr) return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: bad argument");
    aotrun_pkg_run_args a{};
    a.struct_size = sizeof(a);
    a.inputs = inputs;
    a.num_inputs = num_inputs;
    a.num_outputs = c->b->outputs.size();  // a.outputs stays NULL: the sink's
    a.stream = stream;
    return run_common(pc, &a, single_threaded, sink);
  });
}

}  // namespace aotrun::pt2::bridge
