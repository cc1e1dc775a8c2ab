// What a .pt2 run is refused for before the model sees it: tensor counts,
// dims outside the range the model was compiled for or disagreeing where
// they must agree, the threaded run under capture, strides the model cannot
// take, and (in the launched call, so at every replay too) index values
// outside the tables the model reads. The runner has checked the tensors
// against the specs; these are the model's own limits.
//
// Inline (launch_contexts.cpp, entry_points.cpp): the checks run on every
// call and are compiled into the run path.
#pragma once

#include "base/checked_math.hpp"
#include "base/dltensor.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/specs/input_layout.hpp"

namespace aotrun::pt2::bridge {

// The rows of each batch of a request (Bridge::batch_of: dim 0 of its first
// input) when some batch runs padded (Pt2Options::pad_batch); empty when
// none does, the usual case, which allocates nothing.
inline std::vector<int64_t> padded_rows(const Bridge& b, size_t num_inputs, const DLTensor* inputs) {
  if (b.batch_min.empty()) return {};
  bool any = false;
  for (size_t i = 0; i < num_inputs && i < b.batch_of.size(); ++i) {
    const int64_t v = inputs[i].ndim > 0 ? inputs[i].shape[0] : 0;
    any |= v >= 1 && v < b.batch_min[static_cast<size_t>(b.batch_of[i])];
  }
  if (!any) return {};
  std::vector<int64_t> rows(b.batch_min.size(), -1);
  for (size_t i = 0; i < num_inputs && i < b.batch_of.size(); ++i) {
    int64_t& r = rows[static_cast<size_t>(b.batch_of[i])];
    if (r < 0 && inputs[i].ndim > 0) r = inputs[i].shape[0];
  }
  return rows;
}

// Whether batch `g` runs padded, given padded_rows().
inline bool padded(const Bridge& b, const std::vector<int64_t>& rows, int g) {
  return !rows.empty() && g >= 0 && rows[static_cast<size_t>(g)] >= 1 &&
         rows[static_cast<size_t>(g)] < b.batch_min[static_cast<size_t>(g)];
}

inline std::string below_minimum_advice() {
  return "; the compiled code assumes every dynamic size is 2 or more (torch's 0/1 specialisation, whatever minimum "
         "the export declared): open the package with pad_batch when dim 0 is a batch of independent rows, or pad "
         "this dim to 2 yourself";
}

// The model's check that rules out running above a compiled maximum, or
// null (issue #40). Checks on indices from the dims (position tables) or
// from constants read at places the dims give hold only inside the compiled
// ranges; an unguarded check in parallel code may depend on the dims in
// ways aotrun cannot read, and its failure ends the process.
inline const UnguardedCheck* above_maximum_blocker(const Bridge& b) {
  if (!b.index_checks.dim_fed.empty()) return &b.index_checks.dim_fed.front();
  for (const UnguardedCheck& u : b.index_checks.unguarded) {
    if (u.parallel) return &u;
  }
  return nullptr;
}

// What to say of a dim above its compiled maximum: the option that runs it
// only where the option is safe for this model.
inline std::string above_maximum_advice(const Bridge& b) {
  if (const UnguardedCheck* c = above_maximum_blocker(b)) {
    return "; the model checks an index inside its kernels that may depend on this dim (" + c->kernel + ": \"" +
           c->message + "\"), which holds only inside the compiled ranges" +
           (c->parallel ? " and ends the process when it fails" : std::string()) +
           ", so this is refused even with pt2_above_compiled_max (docs/PT2.md, \"Upper bounds\")";
  }
  if (b.above_compiled_max) return "";
  return "; torch narrows upper bounds for heuristics the compiled code need not depend on (a convolution's oneDNN "
         "choice at batch 16): if the model computes right above it, open the package with pt2_above_compiled_max "
         "(docs/PT2.md, \"Upper bounds\")";
}

// The input shapes against what the model was compiled for: dynamic dims in
// their range, dims that share a symbol equal. Every path into the model
// runs it (run, output shape query, capture): a probe that skipped it ran
// the model on shapes its own checks would refuse (issue #29).
inline int32_t check_input_shapes(const Bridge& b, size_t num_inputs, const DLTensor* inputs) {
  if (num_inputs != b.inputs.size()) {
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "the model takes " + std::to_string(b.inputs.size()) +
                                                          " inputs, " + std::to_string(num_inputs) + " given");
  }
  // pad_batch: the inputs of one batch have its rows (what padding pads).
  for (size_t i = 1; !b.batch_min.empty() && i < num_inputs && i < b.batch_of.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (b.batch_of[j] != b.batch_of[i] || inputs[i].ndim < 1 || inputs[j].ndim < 1) continue;
      if (inputs[i].shape[0] != inputs[j].shape[0]) {
        return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                         "input " + std::to_string(i) + " ('" + b.inputs[i].name + "') has " +
                             std::to_string(inputs[i].shape[0]) + " rows, input " + std::to_string(j) + " ('" +
                             b.inputs[j].name + "') " + std::to_string(inputs[j].shape[0]) +
                             ": with pad_batch their dim 0 is one batch");
      }
      break;
    }
  }
  const std::vector<int64_t> rows = padded_rows(b, num_inputs, inputs);
  // Dynamic dims must lie in the range the model was compiled for (the
  // runner's specs only say "dynamic").
  for (size_t i = 0; i < b.checks.size() && i < num_inputs; ++i) {
    const InputCheck& k = b.checks[i];
    const DLTensor& t = inputs[i];
    for (size_t d = 0; d < k.dims.size() && d < static_cast<size_t>(t.ndim); ++d) {
      const int64_t v = t.shape[d];
      if (d == 0 && i < b.batch_of.size() && padded(b, rows, b.batch_of[i])) continue;  // run at the minimum
      const bool above = k.max_dims[d] >= 0 && v > k.max_dims[d];
      // Above the compiled maximum only where the option allows it and no
      // index check of the model may depend on the dims.
      if (v < k.min_dims[d] || (above && (!b.above_compiled_max || above_maximum_blocker(b) != nullptr))) {
        return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                         "input " + std::to_string(i) + " ('" + b.inputs[i].name + "'): dim " + std::to_string(d) +
                             " is " + std::to_string(v) + ", outside the range the model was compiled for [" +
                             std::to_string(k.min_dims[d]) + ", " +
                             (k.max_dims[d] >= 0 ? std::to_string(k.max_dims[d]) : std::string("inf")) + "]" +
                             // Refused, not run: the generated code may rely on the bound
                             // (PyTorch's loader checks it too with AOTI_RUNTIME_CHECK_INPUTS=1).
                             (v >= 1 && v < k.min_dims[d] && k.min_dims[d] == 2 ? below_minimum_advice()
                              : above                                           ? above_maximum_advice(b)
                                                                                : std::string()));
      }
    }
  }
  if (b.symbolic.stated()) {
    constexpr size_t kStack = 16;
    const int64_t* shapes[kStack];
    int ndims[kStack];
    std::vector<const int64_t*> heap_shapes;
    std::vector<int> heap_ndims;
    const int64_t** s = shapes;
    int* n = ndims;
    if (num_inputs > kStack) {
      heap_shapes.resize(num_inputs);
      heap_ndims.resize(num_inputs);
      s = heap_shapes.data();
      n = heap_ndims.data();
    }
    for (size_t i = 0; i < num_inputs; ++i) {
      s[i] = inputs[i].shape;
      n[i] = inputs[i].ndim;
    }
    std::string why;
    if (!b.symbolic.check(s, n, num_inputs, b.input_names, &why)) {
      return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, why);
    }
  }
  return AOTRUN_PKG_OK;
}

// Whether the inputs' ranks and dims are those c.accepted holds.
inline bool accepted_before(const BridgeContainer& c, size_t num_inputs, const DLTensor* inputs) {
  const BridgeContainer::AcceptedShapes& a = c.accepted;
  if (a.len == 0) return false;
  size_t k = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    const int nd = inputs[i].ndim;
    if (nd < 0 || k + 1 + static_cast<size_t>(nd) > a.len || a.dims[k++] != nd) return false;
    for (int d = 0; d < nd; ++d) {
      if (a.dims[k++] != inputs[i].shape[d]) return false;
    }
  }
  return k == a.len;
}

// Keeps the inputs' ranks and dims in c->accepted (none when they do not fit).
inline void remember_accepted(BridgeContainer* c, size_t num_inputs, const DLTensor* inputs) {
  BridgeContainer::AcceptedShapes& a = c->accepted;
  a.len = 0;
  size_t k = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    const int nd = inputs[i].ndim;
    if (k + 1 + static_cast<size_t>(nd) > BridgeContainer::AcceptedShapes::kDims) return;
    a.dims[k++] = nd;
    for (int d = 0; d < nd; ++d) a.dims[k++] = inputs[i].shape[d];
  }
  a.len = k;
}

inline int32_t check_run(BridgeContainer& c, const aotrun_pkg_run_args* a, bool single_threaded) {
  const Bridge& b = *c.b;
  if (a->num_inputs != b.inputs.size() || a->num_outputs != b.outputs.size()) {
    return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: tensor counts differ from the model's");
  }
  // The shape checks once per shape for a serial caller: the dims of its
  // last run that passed them pass them again (issue #41 item 4).
  if (!single_threaded || !accepted_before(c, a->num_inputs, a->inputs)) {
    if (const int32_t rc = check_input_shapes(b, a->num_inputs, a->inputs); rc != AOTRUN_PKG_OK) return rc;
    if (single_threaded && b.specs_ready) remember_accepted(&c, a->num_inputs, a->inputs);
  }
  if (!single_threaded) {
    int32_t capturing = 0;
    if (c.host->stream_is_capturing(c.host->host_ctx, a->stream, &capturing) == AOTRUN_PKG_OK && capturing) {
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
  return AOTRUN_PKG_OK;
}

// The elements of integer inputs that the model uses as indices, against
// the tables it indexes (IndexChecks): an index out of range fails a check
// inside the model's parallel code, which ends the process (a CUDA model's
// device assert ends its CUDA context), so it is refused here. `inputs`
// are compact (row-major or the model's layout: every element is checked
// either way).

// Input k.input, in host memory, against its table's rows.
inline int32_t check_index_value(const Bridge& b, const IndexBound& k, const DLTensor& t) {
  uint64_t count = 0;
  if (t.data == nullptr || !checked_numel(t.shape, t.ndim, &count)) return AOTRUN_PKG_OK;
  uint64_t at = 0;
  int64_t value = 0;
  if (!find_out_of_range(t.data, t.dtype.code, t.dtype.bits, count, k.lo, k.hi, &at, &value)) return AOTRUN_PKG_OK;
  // The element's index, from its flat offset.
  std::string index;
  uint64_t rest = at;
  for (int d = t.ndim - 1; d >= 0; --d) {
    const uint64_t n = t.shape[d] > 0 ? static_cast<uint64_t>(t.shape[d]) : 1;
    index = std::to_string(rest % n) + (index.empty() ? "" : ", ") + index;
    rest /= n;
  }
  return fail_with(AOTRUN_PKG_ERR_INVALID_ARGUMENT,
                   "input " + std::to_string(k.input) + " ('" + b.inputs[k.input].name + "'): element [" + index +
                       "] is " + std::to_string(value) + ", outside [" + std::to_string(k.lo) + ", " +
                       std::to_string(k.hi) + "), the rows of the table the model indexes with it (" + k.where +
                       "); the model was not run");
}

inline int32_t check_index_values(const Bridge& b, const DLTensor* inputs, size_t num_inputs) {
  for (const IndexBound& k : b.index_checks.bounds) {
    if (k.input >= num_inputs) continue;
    if (const int32_t rc = check_index_value(b, k, inputs[k.input]); rc != AOTRUN_PKG_OK) return rc;
  }
  return AOTRUN_PKG_OK;
}

// The same for a CUDA model, whose inputs are device memory: each checked
// input is read to the host on the run's stream first (after the stream's
// earlier work). Not while the stream is being captured (a capture cannot
// wait for the host): a captured graph's replays are not checked.
inline int32_t check_cuda_index_values(const Bridge& b, const DLTensor* inputs, size_t num_inputs, void* stream) {
  for (const IndexBound& k : b.index_checks.bounds) {
    if (k.input >= num_inputs) continue;
    DLTensor t = inputs[k.input];
    uint64_t bytes = 0;
    if (t.data == nullptr || !checked_numel(t.shape, t.ndim, &bytes) ||
        !checked_mul<uint64_t>(bytes, element_bytes(t.dtype), &bytes)) {
      continue;
    }
    std::vector<char> host(static_cast<size_t>(bytes));
    int32_t done = 0;
    if (b.cuda_shim->read_to_host(stream, static_cast<const char*>(t.data) + t.byte_offset, host.data(), host.size(),
                                  &done) != 0) {
      return fail_with(AOTRUN_PKG_ERR_RUNTIME, "input " + std::to_string(k.input) + " ('" + b.inputs[k.input].name +
                                                   "'): reading it for its index check failed" + shim_error(*b.shim));
    }
    if (done == 0) return AOTRUN_PKG_OK;  // capturing
    t.data = host.data();
    t.byte_offset = 0;
    if (const int32_t rc = check_index_value(b, k, t); rc != AOTRUN_PKG_OK) return rc;
  }
  return AOTRUN_PKG_OK;
}

}  // namespace aotrun::pt2::bridge
