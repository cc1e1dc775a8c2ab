// Runner options, creation and synchronous runs.
#include <algorithm>
#include <thread>

#include "handles.hpp"
#include "base/log.hpp"
#include "runner/container/validate.hpp"
#include "status.hpp"
#include "struct_out.hpp"

using aotrun::Code;
using aotrun::fail;
using aotrun::capi::copy_out;
using aotrun::capi::guarded;
using aotrun::capi::require;

namespace {

void check_range(const char* what, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    fail(Code::InvalidArgument, std::string(what) + " must be " + std::to_string(lo) + ".." + std::to_string(hi) +
                                    ", got " + std::to_string(v));
  }
}

}  // namespace

extern "C" {

aotrun_status* aotrun_runner_options_create(aotrun_runner_options** out) {
  return guarded([&] {
    require(out, "out");
    *out = new aotrun_runner_options();
  });
}

void aotrun_runner_options_free(aotrun_runner_options* options) { delete options; }

aotrun_status* aotrun_runner_options_set_mode(aotrun_runner_options* options, aotrun_mode mode) {
  return guarded([&] {
    require(options, "options");
    const int32_t m = aotrun::capi::enum_value(mode);
    check_range("mode", m, AOTRUN_MODE_THREADED, AOTRUN_MODE_GRAPH);
    options->options.mode = static_cast<aotrun::RunMode>(m);
  });
}

aotrun_status* aotrun_runner_options_set_num_models(aotrun_runner_options* options, int32_t num_models) {
  return guarded([&] {
    require(options, "options");
    check_range("num_models", num_models, 1, aotrun::kMaxModels);
    options->options.num_models = num_models;
  });
}

aotrun_status* aotrun_runner_options_set_strict(aotrun_runner_options* options, int strict) {
  return guarded([&] {
    require(options, "options");
    options->options.strict = strict != 0;
  });
}

aotrun_status* aotrun_runner_options_set_device(aotrun_runner_options* options, DLDevice device) {
  return guarded([&] {
    require(options, "options");
    aotrun::validate_device_option(device);
    options->options.has_device = true;
    options->options.device = device;
  });
}

aotrun_status* aotrun_runner_options_set_graph_warmup_runs(aotrun_runner_options* options, int32_t runs) {
  return guarded([&] {
    require(options, "options");
    check_range("graph warm-up runs", runs, 0, 1000);
    options->options.warmup_runs = runs;
  });
}

aotrun_status* aotrun_runner_options_set_graph_cache_limit(aotrun_runner_options* options, int32_t limit) {
  return guarded([&] {
    require(options, "options");
    check_range("graph_cache_limit", limit, 1, 4096);
    options->options.graph_cache_limit = limit;
  });
}

aotrun_status* aotrun_runner_options_set_graph_frozen(aotrun_runner_options* options, int frozen) {
  return guarded([&] {
    require(options, "options");
    options->options.frozen = frozen != 0;
  });
}

aotrun_status* aotrun_runner_options_add_capture_shapes(aotrun_runner_options* options, const int32_t* ndims,
                                                        size_t num_inputs, const int64_t* dims) {
  return guarded([&] {
    require(options, "options");
    if (num_inputs > 0) require(ndims, "ndims");
    std::vector<std::vector<int64_t>> set;
    size_t pos = 0;
    for (size_t i = 0; i < num_inputs; ++i) {
      check_range("ndims[i]", ndims[i], 0, 32);
      if (ndims[i] > 0) require(dims, "dims");
      set.emplace_back(dims + pos, dims + pos + ndims[i]);
      for (int64_t d : set.back()) check_range("capture dimension", d, 0, int64_t(1) << 40);
      pos += static_cast<size_t>(ndims[i]);
    }
    options->options.capture_shapes.push_back(std::move(set));
  });
}

aotrun_status* aotrun_runner_options_set_max_inflight(aotrun_runner_options* options, int32_t max_inflight) {
  return guarded([&] {
    require(options, "options");
    check_range("max_inflight", max_inflight, 1, aotrun::kMaxInflight);
    options->options.max_inflight = max_inflight;
  });
}

aotrun_status* aotrun_runner_create(aotrun_package* package, const aotrun_runner_options* options,
                                    aotrun_runner** out) {
  return guarded([&] {
    require(package, "package");
    require(out, "out");
    aotrun::RunnerOptions defaults;
    auto r = aotrun::Runner::create(package->pkg, options ? options->options : defaults);
    *out = new aotrun_runner{std::move(r)};
  });
}

void aotrun_runner_destroy(aotrun_runner* runner) {
  if (runner == nullptr) return;
  try {
    if (runner->runner->on_own_worker()) {
      // From an event callback of this runner, on one of its workers: the
      // destructor waits for this very run to retire and joins this thread.
      // Hand the destruction to a thread of its own; it completes once the
      // callback has returned.
      std::thread([runner] { delete runner; }).detach();
      return;
    }
    delete runner;
  } catch (const std::exception& e) {
    // No status to return: say it, never terminate.
    aotrun::log(aotrun::LogLevel::Error, std::string("aotrun_runner_destroy failed: ") + e.what());
  } catch (...) {
    aotrun::log(aotrun::LogLevel::Error, "aotrun_runner_destroy failed with an unknown exception");
  }
}

aotrun_mode aotrun_runner_mode(const aotrun_runner* runner) {
  return runner ? static_cast<aotrun_mode>(runner->runner->effective_mode()) : AOTRUN_MODE_THREADED;
}

aotrun_status* aotrun_runner_get_output_shapes(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                               int64_t* shapes, size_t capacity) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->output_shapes(inputs, num_inputs, shapes, capacity);
  });
}

aotrun_status* aotrun_runner_run(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                 size_t num_outputs) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->run(inputs, num_inputs, outputs, num_outputs);
  });
}

aotrun_status* aotrun_runner_run_alloc(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                       DLManagedTensor** outputs, size_t num_outputs) {
  return guarded([&] {
    require(runner, "runner");
    aotrun::Runner& r = *runner->runner;
    const size_t produced = r.package().outputs().size();
    if (num_outputs != produced) {
      fail(Code::InvalidArgument, "package '" + r.package().name() + "' produces " + std::to_string(produced) +
                                      " outputs, got room for " + std::to_string(num_outputs));
    }
    if (num_outputs > 0) require(outputs, "outputs");
    const std::vector<DLManagedTensor*> handed = r.run_alloc(inputs, num_inputs);
    std::copy(handed.begin(), handed.end(), outputs);
  });
}

aotrun_status* aotrun_runner_get_stats(const aotrun_runner* runner, aotrun_runner_stats* stats) {
  return guarded([&] {
    require(runner, "runner");
    require(stats, "stats");
    const aotrun::Runner& r = *runner->runner;
    const auto& c = r.counters();
    aotrun_runner_stats s{};
    s.struct_size = sizeof(s);
    s.requested_mode = static_cast<aotrun_mode>(r.requested_mode());
    s.effective_mode = static_cast<aotrun_mode>(r.effective_mode());
    s.num_models = r.options().num_models;
    s.max_inflight = r.max_inflight();
    s.fallback_reason = r.fallback_reason().c_str();
    s.runs = c.runs.load();
    s.failures = c.failures.load();
    s.fallback_runs = c.fallback_runs.load();
    s.graph_captures = c.captures.load();
    s.graph_replays = c.replays.load();
    s.graph_warmups = c.warmups.load();
    s.graph_capture_ns = c.capture_ns.load();
    s.graph_pool_bytes = c.graph_pool_bytes.load();
    s.graphs_cached = c.graphs_cached.load();
    s.eager_cache_full = c.eager_cache_full.load();
    s.eager_frozen = c.eager_frozen.load();
    s.eager_capture_failed = c.eager_capture_failed.load();
    s.eager_caller_capturing = c.eager_caller_capturing.load();
    s.inflight = c.inflight.load();
    s.peak_inflight = c.peak_inflight.load();
    s.async_submitted = c.async_submitted.load();
    s.async_completed = c.async_completed.load();
    s.async_failed = c.async_failed.load();
    s.submit_blocked_ns = c.submit_blocked_ns.load();
    s.would_block = c.would_block.load();
    copy_out(s, stats, "stats");
  });
}

aotrun_status* aotrun_runner_evict_graphs(aotrun_runner* runner) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->evict_graphs();
  });
}

aotrun_status* aotrun_runner_freeze_graphs(aotrun_runner* runner) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->freeze_graphs();
  });
}

}  // extern "C"
