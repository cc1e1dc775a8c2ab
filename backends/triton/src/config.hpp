// The model configuration as the backend reads it: the aotrun parameters
// (config.pbtxt `parameters`, documented in docs/SERVING.md) and the
// input/output tensors. Triton hands the configuration over as the JSON
// form of its protobuf, so int64 dims arrive as strings.
#pragma once

#include <aotrun/aotrun.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "triton_api.h"

namespace aotrun_triton {

struct BackendParameters {
  std::string package;              // as written; "" = look for model.pt2 / model.so / model
  std::string libtorch;             // "" = $AOTRUN_LIBTORCH
  std::string provider;             // C shim provider of a .pt2: auto, shim, libtorch; "" = $AOTRUN_PROVIDER
  bool pad_batch = false;           // a .pt2's dim 0 is a batch of independent rows: pad below its compiled minimum
  bool above_compiled_max = false;  // a .pt2 runs sizes above its compiled maximum (docs/PT2.md "Upper bounds")
  std::string pt2_model;            // "" = aotrun's default
  aotrun_mode mode = AOTRUN_MODE_THREADED;
  int32_t num_models = 1;
  int32_t max_inflight = 0;        // 0: synchronous; N: asynchronous, N runs in flight
  int32_t graph_warmup_runs = -1;  // -1: aotrun's default
  int32_t graph_cache_limit = -1;
  bool graph_frozen = false;
  bool strict = false;
  bool verify_hashes = true;
};

struct TensorConfig {
  std::string name;
  TRITONSERVER_DataType dtype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> dims;  // without the batch dimension when batching
};

// Reads `parameters`; throws an INVALID_ARG BackendError naming the key and
// the value for an unknown key or a bad value.
BackendParameters parse_parameters(const nlohmann::json& config);

// Reads `input` or `output` (`key`); throws naming the tensor.
std::vector<TensorConfig> parse_tensors(const nlohmann::json& config, const char* key);

// Parses `message`'s JSON; with `owned` it deletes the message (a model
// configuration is the caller's; the backend configuration is Triton's).
nlohmann::json message_json(TRITONSERVER_Message* message, bool owned);

// max_batch_size (0 when absent).
int32_t parse_max_batch_size(const nlohmann::json& config);

}  // namespace aotrun_triton
