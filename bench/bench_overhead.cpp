// bench_overhead: what aotrun adds to one call of the noop package (x, y
// float32 [1, 4]; one empty launch per run), per mode, against the package's
// own entry points called directly on an inline host (the floor).
//
// Targets: single_threaded <= floor + 100 ns, threaded <= floor + 1 us,
// graph replay <= single_threaded (ratio of graph_vs_single_threaded <= 1).
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>

#include "support/aotrun_util.hpp"
#include "support/bench_main.hpp"
#include "support/calls.hpp"
#include "support/paired.hpp"

namespace aotrun_bench {
namespace {

// The noop package: x, y float32 [1, 4].
class Noop : public Calls {
 public:
  explicit Noop(const std::string& name = "noop") : Calls(name, 1, 4, 4) {}
};

void BM_DirectRun(benchmark::State& state) {
  guarded(state, [&] {
    Noop n;
    run_paired(state, n.direct_run(), n.direct_run(), &n.error);
  });
}

void BM_DirectSingleThreaded(benchmark::State& state) {
  guarded(state, [&] {
    Noop n;
    run_paired(state, n.direct_single_threaded(), n.direct_single_threaded(), &n.error);
  });
}

void BM_Threaded(benchmark::State& state) {
  guarded(state, [&] {
    Noop n;
    Runner r = n.runner(AOTRUN_MODE_THREADED);
    run_paired(state, n.via(r.get()), n.direct_run(), &n.error);
  });
}

void BM_SingleThreaded(benchmark::State& state) {
  guarded(state, [&] {
    Noop n;
    Runner r = n.runner(AOTRUN_MODE_SINGLE_THREADED);
    run_paired(state, n.via(r.get()), n.direct_single_threaded(), &n.error);
  });
}

void BM_Graph(benchmark::State& state) {
  guarded(state, [&] {
    Noop n;
    Runner r = n.runner(AOTRUN_MODE_GRAPH);
    run_paired(state, n.via(r.get()), n.direct_single_threaded(), &n.error);
    const aotrun_runner_stats s = r.stats();
    if (s.effective_mode != AOTRUN_MODE_GRAPH || s.graph_replays == 0) {
      fail(state, "graph runner did not replay (effective mode " + std::string(aotrun_mode_name(s.effective_mode)) +
                      ", " + std::to_string(s.graph_replays) + " replays)");
      return;
    }
    state.counters["captures"] = static_cast<double>(s.graph_captures);
  });
}

// Graph replay against the single_threaded runner it should beat.
void BM_GraphVsSingleThreaded(benchmark::State& state) {
  guarded(state, [&] {
    Noop n;
    Runner graph = n.runner(AOTRUN_MODE_GRAPH);
    Runner st = n.runner(AOTRUN_MODE_SINGLE_THREADED);
    run_paired(state, n.via(graph.get()), n.via(st.get()), &n.error);
  });
}

// An ABI 1.0 package has no run_single_threaded: the runner falls back to
// the threaded entry point (with a one-time warning).
void BM_SingleThreadedFallback(benchmark::State& state) {
  guarded(state, [&] {
    Noop n("noop_abi10");
    aotrun_set_log_level(AOTRUN_LOG_ERROR);  // the fallback warning is expected
    Runner r = n.runner(AOTRUN_MODE_SINGLE_THREADED);
    aotrun_set_log_level(AOTRUN_LOG_WARN);
    run_paired(state, n.via(r.get()), n.direct_run(), &n.error);
  });
}

BENCHMARK(BM_DirectRun)->Name("noop/direct_run");
BENCHMARK(BM_DirectSingleThreaded)->Name("noop/direct_single_threaded");
BENCHMARK(BM_Threaded)->Name("noop/threaded");
BENCHMARK(BM_SingleThreaded)->Name("noop/single_threaded");
BENCHMARK(BM_Graph)->Name("noop/graph");
BENCHMARK(BM_GraphVsSingleThreaded)->Name("noop/graph_vs_single_threaded");
BENCHMARK(BM_SingleThreadedFallback)->Name("noop_abi10/single_threaded_fallback");

}  // namespace

void setup() {
  benchmark::AddCustomContext("reference", "floor = the package's entry point called directly on an inline host");
}

}  // namespace aotrun_bench
