// One Triton model: its configuration, resolved once, and the opened aotrun
// package every instance of the model creates its runner from.
#pragma once

#include <aotrun/aotrun.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "specs.hpp"
#include "triton_api.h"

namespace aotrun_triton {

class Metrics;

class Model {
 public:
  // Reads the configuration (auto-completing it when the server asks),
  // opens the package and checks that the two fit. Throws BackendError or
  // aotrun::cxx::Error.
  // `default_max_batch`: what auto-complete gives a batchable package
  // (Triton's --backend-config=aotrun,default-max-batch-size=N).
  static std::unique_ptr<Model> create(TRITONBACKEND_Model* model, Metrics* metrics, int32_t default_max_batch);

  const std::string& name() const { return name_; }
  uint64_t version() const { return version_; }
  const BackendParameters& parameters() const { return parameters_; }
  const aotrun::cxx::Package& package() const { return package_; }
  const std::string& package_path() const { return package_path_; }
  int32_t max_batch_size() const { return max_batch_size_; }
  const PackageSpecs& specs() const { return specs_; }
  // Package order.
  const std::vector<TensorConfig>& inputs() const { return inputs_; }
  const std::vector<TensorConfig>& outputs() const { return outputs_; }
  // Output shapes from the configuration, not aotrun (output_shapes_from_config).
  bool shapes_from_config() const { return shapes_from_config_; }
  Metrics* metrics() const { return metrics_; }

 private:
  std::string name_;
  uint64_t version_ = 0;
  BackendParameters parameters_;
  std::string package_path_;
  aotrun::cxx::Package package_;
  PackageSpecs specs_;
  int32_t max_batch_size_ = 0;
  bool shapes_from_config_ = false;
  std::vector<TensorConfig> inputs_, outputs_;
  Metrics* metrics_ = nullptr;
};

}  // namespace aotrun_triton
