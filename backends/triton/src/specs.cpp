#include "specs.hpp"

#include "dtypes.hpp"
#include "errors.hpp"

namespace aotrun_triton {
namespace {

Spec to_spec(const aotrun_tensor_info& t, std::string model_name) {
  Spec s;
  s.name = t.name;
  s.model_name = std::move(model_name);
  s.ndim = t.ndim;
  if (t.ndim >= 0) {
    s.dtype = to_triton(t.dtype);
    s.shape.assign(t.shape, t.shape + t.ndim);
  }
  return s;
}

nlohmann::json tensor_json(const Spec& s, bool batching, const char* kind) {
  if (s.ndim < 0) {
    invalid(std::string("model configuration: the package does not state the dtype and rank of ") + kind + " '" +
            s.name + "'; write it in config.pbtxt");
  }
  if (s.dtype == TRITONSERVER_TYPE_INVALID) {
    invalid(std::string("model configuration: ") + kind + " '" + s.name + "' has a dtype Triton cannot carry");
  }
  nlohmann::json dims = nlohmann::json::array();
  for (size_t i = batching ? 1 : 0; i < s.shape.size(); ++i) dims.push_back(s.shape[i]);
  return {{"name", s.model_name}, {"data_type", config_name(s.dtype)}, {"dims", dims}};
}

bool has_tensors(const nlohmann::json& config, const char* key) {
  auto it = config.find(key);
  return it != config.end() && it->is_array() && !it->empty();
}

}  // namespace

bool PackageSpecs::batchable() const {
  auto dynamic_first = [](const Spec& s) { return s.ndim >= 1 && s.shape[0] == -1; };
  for (const Spec& s : inputs)
    if (!dynamic_first(s)) return false;
  for (const Spec& s : outputs)
    if (!dynamic_first(s)) return false;
  return !inputs.empty();
}

PackageSpecs read_specs(const aotrun::cxx::Package& package) {
  PackageSpecs p;
  const std::vector<aotrun_tensor_info> in = package.inputs(), out = package.outputs();
  for (size_t i = 0; i < in.size(); ++i) p.inputs.push_back(to_spec(in[i], package.input_model_name(i)));
  for (size_t i = 0; i < out.size(); ++i) p.outputs.push_back(to_spec(out[i], package.output_model_name(i)));
  return p;
}

bool autocomplete(nlohmann::json& config, const PackageSpecs& specs, int32_t default_max_batch,
                  const std::function<int32_t(int32_t)>& served) {
  bool changed = false;
  int32_t max_batch = config.value("max_batch_size", 0);
  // Only a configuration that states no tensors gets batching switched on:
  // one that lists them with max_batch_size 0 asked for none; and only as
  // far as the package serves every batch Triton may form.
  const int32_t batch =
      max_batch == 0 && specs.batchable() && !has_tensors(config, "input") && !has_tensors(config, "output")
          ? (served ? served(default_max_batch) : default_max_batch)
          : 0;
  if (batch > 0) {
    max_batch = batch;
    config["max_batch_size"] = max_batch;
    if (!config.contains("dynamic_batching") && !config.contains("sequence_batching") &&
        !config.contains("ensemble_scheduling")) {
      config["dynamic_batching"] = nlohmann::json::object();
    }
    changed = true;
  }
  const bool batching = max_batch > 0;
  if (!has_tensors(config, "input")) {
    nlohmann::json a = nlohmann::json::array();
    for (const Spec& s : specs.inputs) a.push_back(tensor_json(s, batching, "input"));
    config["input"] = a;
    changed = true;
  }
  if (!has_tensors(config, "output")) {
    nlohmann::json a = nlohmann::json::array();
    for (const Spec& s : specs.outputs) a.push_back(tensor_json(s, batching, "output"));
    config["output"] = a;
    changed = true;
  }
  return changed;
}

bool output_shapes_from_config(const PackageSpecs& specs, const std::vector<TensorConfig>& outputs) {
  bool unstated = false;
  for (const Spec& s : specs.inputs) unstated = unstated || s.ndim < 0;
  for (const Spec& s : specs.outputs) unstated = unstated || s.ndim < 0;
  if (!unstated) return false;
  for (size_t o = 0; o < outputs.size(); ++o) {
    for (int64_t d : outputs[o].dims) {
      if (d < 0) {
        invalid("model configuration: output '" + outputs[o].name + "': dims " + shape_string(outputs[o].dims) +
                " must all be fixed: the package does not state its shapes, so they cannot be computed ahead of a "
                "run (only the batch dimension may vary, with max_batch_size)");
      }
    }
  }
  return true;
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::vector<TensorConfig> match_config(const std::vector<TensorConfig>& configured, const std::vector<Spec>& specs,
                                       int32_t max_batch_size, const char* kind) {
  const std::string where = std::string("model configuration: ") + kind + " '";
  // A tensor is configured by its name or the model's own name for it.
  auto names = [](const Spec& s) { return s.model_name == s.name ? s.name : s.model_name + "' ('" + s.name; };
  for (const TensorConfig& c : configured) {
    bool known = false;
    for (const Spec& s : specs) known = known || s.name == c.name || s.model_name == c.name;
    if (!known) {
      std::string all;
      for (const Spec& s : specs) all += (all.empty() ? "'" : ", '") + names(s) + "'";
      invalid(where + c.name + "' is not in the package (its " + kind + "s: " + all + ")");
    }
  }
  std::vector<TensorConfig> ordered;
  for (const Spec& s : specs) {
    const TensorConfig* c = nullptr;
    for (const TensorConfig& t : configured) {
      if (t.name != s.name && t.name != s.model_name) continue;
      if (c != nullptr) invalid(where + names(s) + "' is configured twice ('" + c->name + "' and '" + t.name + "')");
      c = &t;
    }
    if (c == nullptr) invalid(where + names(s) + "' of the package is missing from the configuration");
    if (s.ndim >= 0) {
      if (c->dtype != s.dtype) {
        invalid(where + s.name + "': data_type " + config_name(c->dtype) + " but the package has " +
                config_name(s.dtype));
      }
      std::vector<int64_t> full = c->dims;
      if (max_batch_size > 0) {
        if (s.ndim < 1 || s.shape[0] != -1) {
          invalid(where + s.name + "': max_batch_size " + std::to_string(max_batch_size) +
                  " needs a dynamic first dimension, but the package's shape is " + shape_string(s.shape));
        }
        full.insert(full.begin(), -1);
      }
      bool fits = full.size() == s.shape.size();
      for (size_t i = 0; fits && i < full.size(); ++i) fits = s.shape[i] == -1 || s.shape[i] == full[i];
      if (!fits) {
        invalid(where + s.name + "': dims " + shape_string(c->dims) +
                (max_batch_size > 0 ? " (with the batch dimension first)" : "") + " do not fit the package's shape " +
                shape_string(s.shape));
      }
    }
    ordered.push_back(*c);
  }
  return ordered;
}

}  // namespace aotrun_triton
