#include "config.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "dtypes.hpp"
#include "errors.hpp"
#include "triton_api.h"

namespace aotrun_triton {
namespace {

constexpr const char* kKeys =
    "package, mode, num_models, max_inflight, graph_warmup_runs, graph_cache_limit, graph_frozen, strict, "
    "libtorch, provider, pt2_model, pad_batch, above_compiled_max, verify_hashes";

[[noreturn]] void bad_value(const std::string& key, const std::string& value, const std::string& expected) {
  invalid("model configuration: parameter '" + key + "': '" + value + "' is not " + expected);
}

int32_t to_int(const std::string& key, const std::string& value, int32_t lo, int32_t hi) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
    bad_value(key, value, "an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  return static_cast<int32_t>(v);
}

bool to_bool(const std::string& key, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  bad_value(key, value, "true or false");
}

aotrun_mode to_mode(const std::string& value) {
  if (value == "threaded") return AOTRUN_MODE_THREADED;
  if (value == "single_threaded") return AOTRUN_MODE_SINGLE_THREADED;
  if (value == "graph") return AOTRUN_MODE_GRAPH;
  bad_value("mode", value, "one of threaded, single_threaded, graph");
}

// A dim as Triton serialises it: a JSON string ("256") or number.
int64_t to_dim(const nlohmann::json& d, const std::string& tensor) {
  if (d.is_number_integer()) return d.get<int64_t>();
  if (d.is_string()) {
    const std::string s = d.get<std::string>();
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && *end == '\0' && errno == 0) return v;
  }
  invalid("model configuration: tensor '" + tensor + "': dim " + d.dump() + " is not an integer");
}

}  // namespace

BackendParameters parse_parameters(const nlohmann::json& config) {
  BackendParameters p;
  auto it = config.find("parameters");
  if (it == config.end() || !it->is_object()) return p;
  for (const auto& [key, entry] : it->items()) {
    if (!entry.is_object() || !entry.contains("string_value") || !entry["string_value"].is_string()) {
      invalid("model configuration: parameter '" + key + "' has no string_value");
    }
    const std::string v = entry["string_value"].get<std::string>();
    if (key == "package") {
      p.package = v;
    } else if (key == "libtorch") {
      p.libtorch = v;
    } else if (key == "provider") {
      if (v != "auto" && v != "shim" && v != "libtorch") bad_value(key, v, "one of auto, shim, libtorch");
      p.provider = v;
    } else if (key == "pt2_model") {
      p.pt2_model = v;
    } else if (key == "pad_batch") {
      p.pad_batch = to_bool(key, v);
    } else if (key == "above_compiled_max") {
      p.above_compiled_max = to_bool(key, v);
    } else if (key == "mode") {
      p.mode = to_mode(v);
    } else if (key == "num_models") {
      p.num_models = to_int(key, v, 1, 1024);
    } else if (key == "max_inflight") {
      p.max_inflight = to_int(key, v, 0, 65536);
    } else if (key == "graph_warmup_runs") {
      p.graph_warmup_runs = to_int(key, v, 0, 1000);
    } else if (key == "graph_cache_limit") {
      p.graph_cache_limit = to_int(key, v, 1, 4096);
    } else if (key == "graph_frozen") {
      p.graph_frozen = to_bool(key, v);
    } else if (key == "strict") {
      p.strict = to_bool(key, v);
    } else if (key == "verify_hashes") {
      p.verify_hashes = to_bool(key, v);
    } else {
      invalid("model configuration: unknown parameter '" + key + "' (the aotrun backend knows " + kKeys + ")");
    }
  }
  return p;
}

std::vector<TensorConfig> parse_tensors(const nlohmann::json& config, const char* key) {
  std::vector<TensorConfig> out;
  auto it = config.find(key);
  if (it == config.end() || !it->is_array()) return out;
  for (const nlohmann::json& t : *it) {
    TensorConfig c;
    c.name = t.value("name", "");
    if (c.name.empty()) invalid(std::string("model configuration: an ") + key + " has no name");
    const std::string type = t.value("data_type", "");
    c.dtype = from_config_name(type);
    if (c.dtype == TRITONSERVER_TYPE_INVALID) {
      invalid("model configuration: " + std::string(key) + " '" + c.name + "': data_type '" + type +
              "' is not supported by aotrun");
    }
    // A reshape would change what the package sees; the backend does not do it.
    if (t.contains("reshape"))
      invalid("model configuration: " + std::string(key) + " '" + c.name + "': reshape is not supported");
    for (const nlohmann::json& d : t.value("dims", nlohmann::json::array())) c.dims.push_back(to_dim(d, c.name));
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json message_json(TRITONSERVER_Message* message, bool owned) {
  const char* base = nullptr;
  size_t size = 0;
  TRITONSERVER_Error* e = TRITONSERVER_MessageSerializeToJson(message, &base, &size);
  nlohmann::json config;
  if (e == nullptr) config = nlohmann::json::parse(base, base + size, nullptr, false);
  if (owned) TRITONSERVER_MessageDelete(message);
  check(e, "reading a configuration");
  if (config.is_discarded()) invalid("the server's configuration JSON does not parse");
  return config;
}

int32_t parse_max_batch_size(const nlohmann::json& config) {
  auto it = config.find("max_batch_size");
  if (it == config.end() || !it->is_number_integer()) return 0;
  return it->get<int32_t>();
}

}  // namespace aotrun_triton
