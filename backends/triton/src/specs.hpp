// A package's input/output specs in Triton's terms, and the two things the
// backend derives from them: the configuration Triton's auto-complete asks
// for, and the check that a written configuration fits the package.
#pragma once

#include <functional>

#include <aotrun/aotrun.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"

namespace aotrun_triton {

struct Spec {
  std::string name;
  // The model's own name (a .pt2's keyword argument or output key), == name
  // when it has none. Auto-complete writes it; a configuration may use either.
  std::string model_name;
  TRITONSERVER_DataType dtype = TRITONSERVER_TYPE_INVALID;  // INVALID: unknown (ndim < 0)
  int32_t ndim = -1;                                        // -1: rank unknown (some .pt2)
  std::vector<int64_t> shape;                               // -1 = dynamic
};

struct PackageSpecs {
  std::vector<Spec> inputs, outputs;
  // Every input and output has a dynamic first dimension, so requests can be
  // stacked along it: Triton may batch them.
  bool batchable() const;
};

PackageSpecs read_specs(const aotrun::cxx::Package& package);

// Fills in what `config` leaves out: `input` / `output` from the specs and,
// when the package is batchable and the config set no max_batch_size,
// max_batch_size `default_max_batch` with dynamic batching. True if changed.
// Throws naming a tensor whose dtype or rank the package does not state.
// `served` (may be null) says which batches the package serves: batching is
// switched on only where batch 1 is, and up to the largest served batch
// (batch_probe.hpp); it is called only when batching would be switched on.
bool autocomplete(nlohmann::json& config, const PackageSpecs& specs, int32_t default_max_batch,
                  const std::function<int32_t(int32_t)>& served = nullptr);

// The configured tensors in package order, checked against the specs: the
// same names, dtypes, and dims that fit (config -1 only where the package
// is dynamic; a fixed config dim narrows a dynamic one). Throws naming the
// tensor and both shapes.
std::vector<TensorConfig> match_config(const std::vector<TensorConfig>& configured, const std::vector<Spec>& specs,
                                       int32_t max_batch_size, const char* kind);

// Whether output shapes come from the configuration instead of aotrun: a
// package (an older .pt2) that states neither its inputs nor some output
// cannot compute output shapes ahead of a run, so the configured dims are
// the shapes (the batch dimension from the request) and aotrun checks the
// model's outputs against them after the run. Throws naming an unstated
// output whose configured dims are not all fixed.
bool output_shapes_from_config(const PackageSpecs& specs, const std::vector<TensorConfig>& outputs);

std::string shape_string(const std::vector<int64_t>& dims);

}  // namespace aotrun_triton
