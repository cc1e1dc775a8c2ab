// Runner configuration, filled by the C API's option setters.
#pragma once

#include <cstdint>
#include <vector>

#include <dlpack/dlpack.h>

#include "package/package.hpp"

namespace aotrun {

struct RunnerOptions {
  RunMode mode = RunMode::Threaded;
  int32_t num_models = 1;
  bool strict = false;
  bool has_device = false;
  DLDevice device{kDLCPU, 0};
  // Graph mode.
  int32_t warmup_runs = 1;                                        // eager runs per shape before its capture
  int32_t graph_cache_limit = 16;                                 // captured shapes kept; beyond, eager
  bool frozen = false;                                            // no capture after the up-front list
  std::vector<std::vector<std::vector<int64_t>>> capture_shapes;  // per key: input shapes
  // Asynchronous runs.
  int32_t max_inflight = 0;  // 0 = default: 2 x num_models
};

constexpr int32_t kMaxModels = 1024;
constexpr int32_t kMaxInflight = 1 << 16;

// Refuses a device id no device of its type can have (negative; a CPU id
// other than 0): INVALID_ARGUMENT where the option is set. Whether the type
// is supported, and a CUDA id present, is decided at runner creation.
void validate_device_option(const DLDevice& device);

}  // namespace aotrun
