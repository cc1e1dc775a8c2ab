// Package descriptions shared by `inspect`, `run` and `bench`, as JSON and
// as text.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include <aotrun/aotrun.h>

#include "runtime.hpp"

namespace aotrun::cli {

// {"open": ns, "verify": ns, "dlopen": ns, "weights": ns, "metadata": ns}
nlohmann::ordered_json load_ns_json(const aotrun_package_info& info);
// "open 1.2 ms (verify 10 us, dlopen 300 us, weights 5 us, metadata 40 us)"
std::string load_text(const aotrun_package_info& info);

// {"name", "dtype", "shape"} with dynamic dimensions as -1.
nlohmann::ordered_json tensor_spec_json(const TensorSpec& spec);

// "mlp (aotrun-dir, ABI 1.1, cpu:0)"
std::string package_line(const aotrun_package_info& info);

// Runner stats as JSON (modes by name).
nlohmann::ordered_json stats_json(const aotrun_runner_stats& stats);
// One line of graph-mode counters: captures, replays, cache, eager reasons.
std::string graph_stats_text(const aotrun_runner_stats& stats);
// One line of asynchronous-run counters: submitted, completed, failed, peak
// in-flight against the window, time submitters were blocked, refusals.
std::string async_stats_text(const aotrun_runner_stats& stats);

}  // namespace aotrun::cli
