#include "report.hpp"

#include "describe.hpp"

namespace aotrun::cli {

namespace {

const char* str(const char* s) { return s != nullptr ? s : ""; }

std::string count(uint64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

nlohmann::ordered_json load_ns_json(const aotrun_package_info& info) {
  return {{"open", info.open_ns},
          {"verify", info.verify_ns},
          {"dlopen", info.dlopen_ns},
          {"weights", info.weights_ns},
          {"metadata", info.metadata_ns}};
}

std::string load_text(const aotrun_package_info& info) {
  return "open " + duration_text(static_cast<double>(info.open_ns)) + " (verify " +
         duration_text(static_cast<double>(info.verify_ns)) + ", dlopen " +
         duration_text(static_cast<double>(info.dlopen_ns)) + ", weights " +
         duration_text(static_cast<double>(info.weights_ns)) + ", metadata " +
         duration_text(static_cast<double>(info.metadata_ns)) + ")";
}

nlohmann::ordered_json tensor_spec_json(const TensorSpec& spec) {
  // model_name == name where the model gives no name of its own (as in the C API).
  const std::string& model_name = spec.model_name.empty() ? spec.name : spec.model_name;
  if (!spec.known) {  // unknown
    return {{"name", spec.name}, {"model_name", model_name}, {"dtype", nullptr}, {"shape", nullptr}};
  }
  return {{"name", spec.name}, {"model_name", model_name}, {"dtype", dtype_name(spec.dtype)}, {"shape", spec.shape}};
}

std::string package_line(const aotrun_package_info& info) {
  return std::string(str(info.name)) + " (" + str(info.format) + ", ABI " + abi_version_string(info.abi_version) +
         ", " + device_name(info.device) + ")";
}

nlohmann::ordered_json stats_json(const aotrun_runner_stats& stats) {
  return {{"requested_mode", aotrun_mode_name(stats.requested_mode)},
          {"effective_mode", aotrun_mode_name(stats.effective_mode)},
          {"num_models", stats.num_models},
          {"max_inflight", stats.max_inflight},
          {"fallback_reason", str(stats.fallback_reason)},
          {"runs", stats.runs},
          {"failures", stats.failures},
          {"fallback_runs", stats.fallback_runs},
          {"graph",
           {{"captures", stats.graph_captures},
            {"replays", stats.graph_replays},
            {"warmups", stats.graph_warmups},
            {"capture_ns", stats.graph_capture_ns},
            {"pool_bytes", stats.graph_pool_bytes},
            {"cached", stats.graphs_cached},
            {"eager_cache_full", stats.eager_cache_full},
            {"eager_frozen", stats.eager_frozen},
            {"eager_capture_failed", stats.eager_capture_failed},
            {"eager_caller_capturing", stats.eager_caller_capturing}}},
          {"async",
           {{"inflight", stats.inflight},
            {"peak_inflight", stats.peak_inflight},
            {"submitted", stats.async_submitted},
            {"completed", stats.async_completed},
            {"failed", stats.async_failed},
            {"submit_blocked_ns", stats.submit_blocked_ns},
            {"would_block", stats.would_block}}}};
}

std::string graph_stats_text(const aotrun_runner_stats& stats) {
  return count(stats.graph_captures, "capture") + " (" + duration_text(static_cast<double>(stats.graph_capture_ns)) +
         "), " + count(stats.graph_replays, "replay") + ", " + count(stats.graph_warmups, "warm-up") + ", " +
         std::to_string(stats.graphs_cached) + " cached, pool " + bytes_text(stats.graph_pool_bytes) +
         "; eager: cache full " + std::to_string(stats.eager_cache_full) + ", frozen " +
         std::to_string(stats.eager_frozen) + ", capture failed " + std::to_string(stats.eager_capture_failed) +
         ", caller capturing " + std::to_string(stats.eager_caller_capturing);
}

std::string async_stats_text(const aotrun_runner_stats& stats) {
  return "submitted " + std::to_string(stats.async_submitted) + ", completed " + std::to_string(stats.async_completed) +
         ", failed " + std::to_string(stats.async_failed) + ", peak in-flight " + std::to_string(stats.peak_inflight) +
         " of " + std::to_string(stats.max_inflight) + ", submit blocked " +
         duration_text(static_cast<double>(stats.submit_blocked_ns)) + ", would block " +
         std::to_string(stats.would_block);
}

}  // namespace aotrun::cli
