// One Triton model instance: one aotrun runner, created with the model's
// mode, num_models, in-flight window and graph options, and the Execute
// that turns Triton's requests into batches for it.
#pragma once

#include <aotrun/aotrun.hpp>

#include <memory>
#include <string>

#include "metrics.hpp"
#include "model.hpp"
#include "triton_api.h"

namespace aotrun_triton {

class Instance {
 public:
  Instance(TRITONBACKEND_ModelInstance* instance, const Model& model);

  // Answers and releases every request, whatever happens (never throws).
  void execute(TRITONBACKEND_Request** requests, uint32_t count) noexcept;

 private:
  TRITONBACKEND_ModelInstance* instance_;
  const Model& model_;
  std::string name_;
  std::unique_ptr<InstanceMetrics> metrics_;
  // Last: destroyed first, waiting for asynchronous runs that still use
  // the metrics and the model.
  aotrun::cxx::Runner runner_;
};

}  // namespace aotrun_triton
