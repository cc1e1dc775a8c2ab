// What the bridge works out from the model's first container: its constants,
// and its specs from the input checks in its sources and probe runs.
#include <algorithm>
#include <cstring>
#include <map>

#include "base/checked_math.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"
#include "base/log.hpp"
#include "package/pt2/loading/omp_threads.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/specs/call_spec.hpp"
#include "package/pt2/specs/input_layout.hpp"

namespace aotrun::pt2::bridge {

// A CUDA model probes on device memory: the zeros of host tensor *h copied
// into a new CUDA tensor (the shim's, on the legacy stream), which replaces it.
static bool to_device(const Bridge& b, AtenTensorHandle* h, std::string* why) {
  AtenTensorHandle dev = nullptr;
  if (!copy_to_cuda(*b.shim, *h, &dev, why)) {
    *why = "a CUDA probe input: " + *why;
    return false;
  }
  (void)b.shim->delete_tensor_object(*h);
  *h = dev;
  return true;
}

// Fills a probe input: zeros, or with `varied` a fixed pattern in [0.5, 1.5)
// for float32/float64 inputs (other dtypes stay zero: integer inputs index
// tables, and 0 is a valid index of every table).
static void fill_probe_input(std::vector<char>* bytes, DLDataType dt, bool varied) {
  if (!varied || dt.code != kDLFloat || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1) return;
  uint32_t s = 12345;
  const size_t item = dt.bits / 8, n = (bytes->size() - 1) / item;  // storage has one spare byte
  for (size_t k = 0; k < n; ++k) {
    s = s * 1664525u + 1013904223u;
    const double v = 0.5 + static_cast<double>(s >> 8) / 16777216.0;
    if (dt.bits == 32) {
      const float f = static_cast<float>(v);
      std::memcpy(bytes->data() + k * item, &f, item);
    } else {
      std::memcpy(bytes->data() + k * item, &v, item);
    }
  }
}

static bool probe_once(Bridge& b, AotiContainerHandle h, const std::vector<DLDataType>& dtypes,
                       const std::vector<std::vector<int64_t>>& shapes, bool varied, std::vector<OutputMeta>* out,
                       std::string* why, bool* model_failed) {
  *model_failed = false;
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
    // The pattern fills row-major order; any layout still holds only values
    // in [0.5, 1.5), which is all a varied probe needs.
    fill_probe_input(&storage[i], dtypes[i], varied);
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
    if (b.cuda && !to_device(b, &in[i], why)) {
      delete_handles(*b.shim, in.data(), i + 1);
      return false;
    }
  }
  size_t n_out = 0;
  b.lib->fn().num_outputs(h, &n_out);
  std::vector<AtenTensorHandle> outs(n_out, nullptr);
  // One thread: a probe runs on the thread that opens the package or asks
  // for shapes, which then keeps no OpenMP team of its own (omp_threads.hpp).
  OmpThreadsScope one(b.cuda ? 0 : 1);
  if (!call_model(b, b.lib->fn().run, AotiLibrary::kRun, h, in.data(), n_in, outs.data(), n_out, nullptr, why)) {
    *model_failed = true;
    return false;  // the inputs were stolen by the model
  }
  out->assign(n_out, OutputMeta{});
  bool ok = true;
  for (size_t i = 0; i < n_out && ok; ++i) ok = describe_output(*b.shim, outs[i], &(*out)[i], why);
  delete_handles(*b.shim, outs.data(), n_out);
  return ok;
}

// Runs the model once, synchronously, on zero inputs of the given shapes and
// dtypes, and reports its outputs. A model whose own checks refuse zeros
// (torch.linalg.inv: a zero matrix is singular) is run once more with its
// floating inputs varied before the probe fails; a model with ops behind the
// proxy executor (the linear algebra that refuses zeros) is run varied
// first, so that opening it does not log the model's failure on zeros.
// AOTInductor's threaded run is safe to call from any thread.
bool probe(Bridge& b, AotiContainerHandle h, const std::vector<DLDataType>& dtypes,
           const std::vector<std::vector<int64_t>>& shapes, std::vector<OutputMeta>* out, std::string* why) {
  const bool floating = std::any_of(dtypes.begin(), dtypes.end(), [](DLDataType d) { return d.code == kDLFloat; });
  const bool varied_first = floating && b.proxy_executor != nullptr;
  bool model_failed = false;
  if (probe_once(b, h, dtypes, shapes, varied_first, out, why, &model_failed)) return true;
  if (!model_failed || !floating) {
    if (model_failed) *why += " (on zero inputs)";
    return false;
  }
  std::string again;
  if (probe_once(b, h, dtypes, shapes, !varied_first, out, &again, &model_failed)) return true;
  *why += " (on zero inputs and with the floating inputs in [0.5, 1.5))";
  return false;
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

// Says at open what the model checks inside parallel code that aotrun
// cannot check before the run (a failure there ends the process).
static void report_index_checks(const Bridge& b) {
  size_t parallel = 0;
  std::string first;
  for (const UnguardedCheck& u : b.index_checks.unguarded) {
    if (!u.parallel) continue;
    if (parallel++ == 0) first = u.kernel + ": \"" + u.message + "\"";
  }
  if (parallel == 0) return;
  log(LogLevel::Warn, "package '" + b.name + "' (AOTInductor .pt2): " + std::to_string(parallel) +
                          " check(s) inside its parallel kernels test values computed in the model, which aotrun "
                          "cannot check before a run (first: " +
                          first + "); a request that fails one ends the process (docs/PT2.md, \"Bad requests\")");
}

// Batch padding (Pt2Options::pad_batch), checked once. Every input's dim 0
// is dynamic; inputs whose dim 0 share a size symbol are one batch (all
// inputs one batch where the wrapper does not bind every dim 0), with one
// compiled minimum. For each batch compiled for 2 and up, a probe with one
// more row (everything else at its minimum) tells which output dims follow
// it; each must grow by exactly that row, no dim may follow two batches,
// and every output must follow one. Anything else cannot be padded and cut
// back right: UNSUPPORTED, naming what does not fit.
static void settle_batch(Bridge& b, AotiContainerHandle h, const std::vector<DLDataType>& dtypes,
                         const std::vector<std::vector<int64_t>>& lo, const std::vector<OutputMeta>& at_lo,
                         const std::vector<TensorSpec>& inputs) {
  const std::string refused = "package '" + b.name + "': pad_batch needs ";
  const size_t n_in = b.checks.size();
  for (size_t i = 0; i < n_in; ++i) {
    const InputCheck& k = b.checks[i];
    if (k.dims.empty() || k.dims[0] >= 0) {
      fail(Code::Unsupported, refused + "a dynamic dim 0 on every input; input " + std::to_string(i) + " ('" +
                                  inputs[i].name + "') has " +
                                  (k.dims.empty() ? std::string("none") : "a static " + std::to_string(k.dims[0])));
    }
  }
  // Batches: by the symbol of each input's dim 0.
  std::vector<int> symbol_of(n_in, -1);
  for (const auto& bind : b.symbolic.bindings()) {
    if (bind.input < n_in && bind.dim == 0) symbol_of[bind.input] = static_cast<int>(bind.symbol);
  }
  const bool by_symbol = std::all_of(symbol_of.begin(), symbol_of.end(), [](int s) { return s >= 0; });
  std::vector<int> batch_of(n_in, 0);
  std::vector<int64_t> batch_min;
  std::vector<size_t> first_of;  // per batch: its first input
  std::map<int, int> batch_of_symbol;
  for (size_t i = 0; i < n_in; ++i) {
    const int key = by_symbol ? symbol_of[i] : 0;
    auto it = batch_of_symbol.find(key);
    if (it == batch_of_symbol.end()) {
      it = batch_of_symbol.emplace(key, static_cast<int>(batch_min.size())).first;
      batch_min.push_back(b.checks[i].min_dims[0]);
      first_of.push_back(i);
    }
    batch_of[i] = it->second;
    const size_t g = static_cast<size_t>(it->second);
    if (b.checks[i].min_dims[0] != batch_min[g]) {
      fail(Code::Unsupported, refused + "one compiled minimum per batch; input " + std::to_string(i) + " ('" +
                                  inputs[i].name +
                                  "') is compiled for dim 0 >= " + std::to_string(b.checks[i].min_dims[0]) +
                                  ", input " + std::to_string(first_of[g]) + " ('" + inputs[first_of[g]].name +
                                  "') of the same batch for >= " + std::to_string(batch_min[g]));
    }
  }
  std::vector<std::vector<int>> follows(at_lo.size());
  for (size_t o = 0; o < at_lo.size(); ++o) follows[o].assign(at_lo[o].shape.size(), -1);
  bool any = false;
  for (size_t g = 0; g < batch_min.size(); ++g) {
    const int64_t min = batch_min[g];
    if (min <= 1) continue;  // nothing below the minimum to pad
    any = true;
    std::vector<std::vector<int64_t>> more = lo;
    for (size_t i = 0; i < n_in; ++i) {
      if (batch_of[i] == static_cast<int>(g)) more[i][0] = min + 1;
    }
    std::vector<OutputMeta> at_more;
    std::string why;
    if (!probe(b, h, dtypes, more, &at_more, &why)) {
      fail(Code::Package, "package '" + b.name + "': probing its batch for pad_batch failed: " + why);
    }
    const std::string batch =
        "the batch of input " + std::to_string(first_of[g]) + " ('" + inputs[first_of[g]].name + "')";
    for (size_t o = 0; o < at_lo.size(); ++o) {
      if (at_more[o].shape.size() != at_lo[o].shape.size()) {
        fail(Code::Unsupported, refused + "outputs whose rank does not change with " + batch + "; output " +
                                    std::to_string(o) + "'s does");
      }
      for (size_t d = 0; d < at_lo[o].shape.size(); ++d) {
        const int64_t a = at_lo[o].shape[d], z = at_more[o].shape[d];
        if (a == z) continue;
        if (a != min || z != min + 1 || follows[o][d] >= 0) {
          fail(Code::Unsupported, refused + "each output dim to follow one batch row for row; output " +
                                      std::to_string(o) + " dim " + std::to_string(d) + " goes from " +
                                      std::to_string(a) + " to " + std::to_string(z) + " when " + batch +
                                      " grows from " + std::to_string(min) + " to " + std::to_string(min + 1));
        }
        follows[o][d] = static_cast<int>(g);
      }
    }
  }
  if (!any) return;
  for (size_t o = 0; o < follows.size(); ++o) {
    if (std::none_of(follows[o].begin(), follows[o].end(), [](int g) { return g >= 0; })) {
      fail(Code::Unsupported, refused + "every output to follow a batch; output " + std::to_string(o) +
                                  " does not (rank " + std::to_string(at_lo[o].shape.size()) +
                                  "): padded rows would enter it");
    }
  }
  b.batch_of = std::move(batch_of);
  b.batch_min = std::move(batch_min);
  b.follows = std::move(follows);
}

namespace {

// The model's own names (keyword arguments, output keys) from the call
// spec, where the library keeps one. Without it, or where it does not match
// the counts, the placeholders stay the only names (logged at debug).
void name_from_call_spec(const Bridge& b, AotiContainerHandle h, std::vector<TensorSpec>* inputs,
                         std::vector<TensorSpec>* outputs) {
  const AotiFunctions& f = b.lib->fn();
  const char* in_spec = nullptr;
  const char* out_spec = nullptr;
  if (f.call_spec == nullptr || f.call_spec(h, &in_spec, &out_spec) != 0) return;
  auto apply = [&](const char* spec, std::vector<TensorSpec>* specs, bool in) {
    if (spec == nullptr) return;
    std::vector<std::string> placeholders;
    for (const TensorSpec& s : *specs) placeholders.push_back(s.name);
    std::string why;
    const std::vector<std::string> names = call_spec_names(spec, specs->size(), in, placeholders, &why);
    if (names.empty() && !specs->empty()) {
      log(LogLevel::Debug,
          "package '" + b.name + "': no model names for its " + (in ? "inputs" : "outputs") + ": " + why);
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != (*specs)[i].name) (*specs)[i].model_name = names[i];
    }
  };
  apply(in_spec, inputs, true);
  apply(out_spec, outputs, false);
}

}  // namespace

// Which dims of output `i` (as the probe on zeros gave them, in *shape) are
// fixed, from what the wrapper states (output_dims.hpp): a dim is fixed
// only where the wrapper writes it as an integer literal, or, where the
// wrapper does not state the output, where every input dim is static and no
// size is read from values. Everything else is -1: a dim wrongly declared
// fixed refuses every request that moves it, one wrongly declared dynamic
// only says less. Data-dependent outputs are marked in *data_dependent.
static void settle_output_dims(const OutputDims& stated, size_t i, bool dynamic, std::vector<int64_t>* shape,
                               bool* data_dependent) {
  if (stated.stated[i] && stated.dims[i].size() == shape->size()) {
    for (size_t d = 0; d < shape->size(); ++d) {
      const OutputDim& od = stated.dims[i][d];
      if (od.kind == OutputDim::Fixed && od.value == (*shape)[d]) continue;
      (*shape)[d] = -1;
      if (od.kind == OutputDim::DataDependent) *data_dependent = true;
    }
    return;
  }
  if (!dynamic && !stated.has_unbacked) return;  // a static model: the probe's shape is its shape
  for (int64_t& d : *shape) d = -1;
  *data_dependent = stated.has_unbacked;
}

// Every output's dtype and shape as the wrapper states them (a dim that is
// not a literal as -1, which settle_output_dims keeps dynamic); false when
// one dtype is not stated or not one aotrun represents.
static bool outputs_from_wrapper(const OutputDims& stated, std::vector<OutputMeta>* out) {
  out->assign(stated.dims.size(), OutputMeta{});
  for (size_t i = 0; i < stated.dims.size(); ++i) {
    if (!stated.stated[i] || !dlpack_dtype_named(stated.dtypes[i], &(*out)[i].dtype)) return false;
    for (const OutputDim& d : stated.dims[i]) (*out)[i].shape.push_back(d.kind == OutputDim::Fixed ? d.value : -1);
  }
  return true;
}

// Fills b.inputs / b.outputs once, from the checks, what the wrapper states
// of the outputs (settle_output_dims) and, where it does not state every
// output's dims and dtype, a probe run for their dtypes and ranks (a second
// one, every dynamic input dim one step larger, where it does not state
// every output's dims).
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
  name_from_call_spec(b, h, &inputs, &outputs);

  // Input checks for exactly the inputs the model reports.
  std::string why;
  bool known = !b.sources.empty() && parse_input_checks(b.sources, n_in, &b.checks, &why);
  if (b.sources.empty()) why = "the archive holds no C++ sources of the model";
  b.symbolic = SymbolicShapes::parse(b.sources, n_in);
  b.index_checks = parse_index_checks(b.sources);
  const OutputDims stated = parse_output_dims(b.sources, n_out);
  std::string().swap(b.sources);  // parsed once; can be megabytes
  report_index_checks(b);
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
    if (b.cuda && !layouts[i].empty()) {  // the conversion is a host copy
      fail(Code::Unsupported, "package '" + b.name + "': input " + std::to_string(i) + " ('" + inputs[i].name +
                                  "') is compiled for a layout other than row-major, which aotrun converts to on "
                                  "the CPU only so far");
    }
  }
  b.layouts = std::move(layouts);
  if (known) {
    // Probe sizes: each dynamic dim at its lower bound (at least 1), then one
    // step more (1, or the K of a dim exported as K*s: a size between two
    // multiples would be cut down and read as a fixed dim).
    std::vector<DLDataType> dtypes;
    std::vector<std::vector<int64_t>> lo, hi;
    bool dynamic = false;
    for (size_t i = 0; i < n_in; ++i) {
      dtypes.push_back(inputs[i].dtype);
      std::vector<int64_t> a = b.checks[i].dims, z = a;
      for (size_t d = 0; d < a.size(); ++d) {
        if (a[d] >= 0) continue;
        const int64_t step = b.symbolic.step(i, static_cast<int>(d));
        a[d] = std::max<int64_t>(b.checks[i].min_dims[d], 1);
        a[d] = (a[d] + step - 1) / step * step;
        const int64_t up = b.checks[i].max_dims[d];
        z[d] = up < 0 || a[d] + step <= up ? a[d] + step : a[d];
        dynamic = true;
      }
      lo.push_back(std::move(a));
      hi.push_back(std::move(z));
    }
    // The second probe checks that no output's rank moves with the sizes;
    // where the wrapper states every output's dims (output_dims.hpp) their
    // count is the rank, and the model runs once at open, not twice; where
    // it states their dtypes too, not at all (issue #41: the run at open was
    // most of a convolution net's open time). Batch padding reads its
    // outputs from a probe.
    const bool all_stated = std::all_of(stated.stated.begin(), stated.stated.end(), [](bool v) { return v; });
    std::vector<OutputMeta> m1, m2;
    const bool unprobed = all_stated && !b.pad_batch && outputs_from_wrapper(stated, &m1);
    const bool second = dynamic && !all_stated;
    if (!unprobed && (!probe(b, h, dtypes, lo, &m1, &why) || (second && !probe(b, h, dtypes, hi, &m2, &why)))) {
      fail(Code::Package, "package '" + b.name + "': reading its output specs failed: " + why);
    }
    b.data_dependent.assign(n_out, false);
    for (size_t i = 0; i < n_out; ++i) {
      outputs[i].dtype = m1[i].dtype;
      outputs[i].shape = m1[i].shape;
      if (second && m2[i].shape.size() != m1[i].shape.size()) {
        fail(Code::Package,
             "package '" + b.name + "': the rank of output " + std::to_string(i) + " changes with the input sizes");
      }
      bool depends = false;
      settle_output_dims(stated, i, dynamic, &outputs[i].shape, &depends);
      b.data_dependent[i] = depends;
      b.any_data_dependent = b.any_data_dependent || depends;
    }
    if (b.pad_batch) settle_batch(b, h, dtypes, lo, m1, inputs);
  } else {
    b.no_checks_reason = why;
    for (auto& s : inputs) s.known = false;
    for (auto& s : outputs) s.known = false;
    log(LogLevel::Warn, "package '" + b.name + "' (AOTInductor .pt2): " + why +
                            ", so input dtypes and shapes are unknown: aotrun checks inputs for device and layout "
                            "only (a wrong shape is undefined behaviour in the model) and outputs after each run; "
                            "output shapes cannot be computed ahead (run_alloc and graph mode are unavailable)");
  }
  b.input_names.clear();
  for (const auto& in : inputs) b.input_names.push_back(in.name);
  b.inputs = std::move(inputs);
  b.outputs = std::move(outputs);
  b.specs_ready = true;
}

}  // namespace aotrun::pt2::bridge
