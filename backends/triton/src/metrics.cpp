#include "metrics.hpp"

#include "errors.hpp"

namespace aotrun_triton {

namespace {

void ignore(TRITONSERVER_Error* e, const char* what) {
  if (e == nullptr) return;
  log(TRITONSERVER_LOG_WARN, std::string(what) + ": " + TRITONSERVER_ErrorMessage(e));
  TRITONSERVER_ErrorDelete(e);
}

}  // namespace

Metrics::Metrics() {
  families_ = {
      {"aotrun_runs", "Runs aotrun completed successfully (one per batch)", &aotrun_runner_stats::runs, nullptr},
      {"aotrun_failures", "Runs that failed in the package", &aotrun_runner_stats::failures, nullptr},
      {"aotrun_fallback_runs", "Runs through a fallback entry point", &aotrun_runner_stats::fallback_runs, nullptr},
      {"aotrun_graph_captures", "Graphs captured (graph mode)", &aotrun_runner_stats::graph_captures, nullptr},
      {"aotrun_graph_replays", "Runs replayed from a captured graph", &aotrun_runner_stats::graph_replays, nullptr},
      {"aotrun_inflight", "Asynchronous runs queued or executing", &aotrun_runner_stats::inflight, nullptr},
      {"aotrun_peak_inflight", "Most asynchronous runs in flight at once", &aotrun_runner_stats::peak_inflight,
       nullptr},
  };
  for (Family& f : families_) {
    ignore(TRITONSERVER_MetricFamilyNew(&f.family, TRITONSERVER_METRIC_KIND_GAUGE, f.name, f.help),
           "metrics (aotrun's statistics will not be exported)");
  }
}

Metrics::~Metrics() {
  for (Family& f : families_)
    if (f.family != nullptr) ignore(TRITONSERVER_MetricFamilyDelete(f.family), "metrics");
}

InstanceMetrics::InstanceMetrics(Metrics* metrics, const std::string& model, uint64_t version,
                                 const std::string& instance) {
  const std::string v = std::to_string(version);
  const TRITONSERVER_Parameter* labels[3] = {
      TRITONSERVER_ParameterNew("model", TRITONSERVER_PARAMETER_STRING, model.c_str()),
      TRITONSERVER_ParameterNew("version", TRITONSERVER_PARAMETER_STRING, v.c_str()),
      TRITONSERVER_ParameterNew("instance", TRITONSERVER_PARAMETER_STRING, instance.c_str())};
  for (Metrics::Family& f : metrics->families()) {
    TRITONSERVER_Metric* m = nullptr;
    if (f.family != nullptr) ignore(TRITONSERVER_MetricNew(&m, f.family, labels, 3), "metrics");
    series_.push_back(m);
  }
  for (const TRITONSERVER_Parameter* p : labels) TRITONSERVER_ParameterDelete(const_cast<TRITONSERVER_Parameter*>(p));
  fields_ = &metrics->families();
}

InstanceMetrics::~InstanceMetrics() {
  for (TRITONSERVER_Metric* m : series_)
    if (m != nullptr) ignore(TRITONSERVER_MetricDelete(m), "metrics");
}

void InstanceMetrics::update(const aotrun_runner_stats& stats) noexcept {
  for (size_t i = 0; i < series_.size(); ++i) {
    if (series_[i] == nullptr) continue;
    ignore(TRITONSERVER_MetricSet(series_[i], static_cast<double>(stats.*((*fields_)[i].field))), "metrics");
  }
}

}  // namespace aotrun_triton
