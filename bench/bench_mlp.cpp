// bench_mlp: the example MLP package (256 -> 1024 -> 1024 -> 64, OpenBLAS,
// one thread per instance) at batch 1, 16 and 64, called directly and
// through the runner in each mode. Each row is paired with the direct
// run_single_threaded call (threaded: the direct `run`) measured in the same
// benchmark, so the ratio column is the runner's relative cost.
#include <string>

#include <benchmark/benchmark.h>

#include "support/aotrun_util.hpp"
#include "support/bench_main.hpp"
#include "support/calls.hpp"
#include "support/paired.hpp"

namespace aotrun_bench {
namespace {

class Mlp : public Calls {
 public:
  explicit Mlp(int64_t batch) : Calls("mlp", batch, 256, 64) {}
};

const PairedOptions kOptions{Unit::kUs, 2e6};  // blocks of ~2 ms

// Which path is under test; the reference is always a direct call.
enum class Path { kDirect, kThreaded, kSingleThreaded, kGraph };

void BM_Mlp(benchmark::State& state, Path path) {
  const int64_t batch = state.range(0);
  guarded(state, [&] {
    Mlp m(batch);
    if (path == Path::kDirect) {
      run_paired(state, m.direct_single_threaded(), m.direct_single_threaded(), &m.error, kOptions);
    } else {
      const aotrun_mode mode = path == Path::kThreaded         ? AOTRUN_MODE_THREADED
                               : path == Path::kSingleThreaded ? AOTRUN_MODE_SINGLE_THREADED
                                                               : AOTRUN_MODE_GRAPH;
      Runner r = m.runner(mode);
      // Graph mode: the first calls warm up and capture; check the replay
      // computes what the direct call computes before timing it.
      for (int i = 0; i < 3; ++i) {
        if (!m.outputs_match(m.via(r.get()), m.direct_single_threaded())) return fail(state, m.error);
      }
      if (path == Path::kThreaded) {
        run_paired(state, m.via(r.get()), m.direct_run(), &m.error, kOptions);
      } else {
        run_paired(state, m.via(r.get()), m.direct_single_threaded(), &m.error, kOptions);
      }
      if (path == Path::kGraph && r.stats().graph_replays == 0) {
        return fail(state, "graph runner never replayed a graph");
      }
    }
    state.SetItemsProcessed(state.iterations() * batch);  // samples/s
  });
}

void batches(benchmark::internal::Benchmark* b) {
  b->ArgName("batch")->Arg(1)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Mlp, direct, Path::kDirect)->Apply(batches);
BENCHMARK_CAPTURE(BM_Mlp, threaded, Path::kThreaded)->Apply(batches);
BENCHMARK_CAPTURE(BM_Mlp, single_threaded, Path::kSingleThreaded)->Apply(batches);
BENCHMARK_CAPTURE(BM_Mlp, graph, Path::kGraph)->Apply(batches);

}  // namespace

void setup() {
  benchmark::AddCustomContext("reference", "floor = mlp's entry point called directly on an inline host");
}

}  // namespace aotrun_bench
