// What a .pt2 run is refused for before it is launched: tensor counts, dims
// outside the range the model was compiled for, the threaded run under
// capture, strides the model cannot take. The runner has checked the
// tensors against the specs; these are the model's own limits.
//
// Inline, included by launch_contexts.cpp only: the checks run on every call
// and are compiled into the run path, as they were before the bridge was
// split into files.
#pragma once

#include "base/dltensor.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/specs/input_layout.hpp"

namespace aotrun::pt2::bridge {

inline int32_t check_run(const BridgeContainer& c, const aotrun_pkg_run_args* a, bool single_threaded) {
  const Bridge& b = *c.b;
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

}  // namespace aotrun::pt2::bridge
