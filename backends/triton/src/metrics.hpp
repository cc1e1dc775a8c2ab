// aotrun's runner statistics as Triton custom metrics (the server's
// Prometheus endpoint, /metrics): one gauge family per counter, one series
// per model instance, refreshed after each batch.
#pragma once

#include <aotrun/aotrun.h>

#include <cstdint>
#include <string>
#include <vector>

#include "triton_api.h"

namespace aotrun_triton {

class Metrics {
 public:
  // Registers the families; a server without metrics leaves them out
  // (logged), which disables the series but nothing else.
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  struct Family {
    const char* name;
    const char* help;
    uint64_t aotrun_runner_stats::*field;
    TRITONSERVER_MetricFamily* family = nullptr;
  };
  std::vector<Family>& families() { return families_; }

 private:
  std::vector<Family> families_;
};

// The series of one instance.
class InstanceMetrics {
 public:
  InstanceMetrics(Metrics* metrics, const std::string& model, uint64_t version, const std::string& instance);
  ~InstanceMetrics();
  InstanceMetrics(const InstanceMetrics&) = delete;
  InstanceMetrics& operator=(const InstanceMetrics&) = delete;

  void update(const aotrun_runner_stats& stats) noexcept;

 private:
  std::vector<TRITONSERVER_Metric*> series_;  // in Metrics' family order; may hold nullptr
  const std::vector<Metrics::Family>* fields_ = nullptr;
};

}  // namespace aotrun_triton
