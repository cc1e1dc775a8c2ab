// Graph mode of the runner: warm-up, capture per shape, replay equal to eager
// bit for bit, cache limit, frozen mode, up-front capture, eviction.
#include "test_util.hpp"

using namespace aotrun_test;

namespace {

// Runs x through `r` into a fresh output and returns it.
std::vector<float> mlp(aotrun_runner* r, Tensor& x) {
  Tensor y({x.shape[0], 64});
  aotrun_status* s = run_vec(r, x, y);
  EXPECT_EQ(s, nullptr) << describe(s);
  return y.data;
}

}  // namespace

TEST(GraphMode, ReplayEqualsEagerOverBatchesAndInterleavedShapes) {
  Package pkg(pkg_path("mlp"));
  Runner graph(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  Runner eager(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  ASSERT_EQ(aotrun_runner_mode(graph.get()), AOTRUN_MODE_GRAPH);
  const int64_t batches[] = {1, 16, 64, 16, 1, 64, 1, 16};
  uint32_t seed = 100;
  for (int round = 0; round < 3; ++round) {
    for (int64_t b : batches) {
      Tensor x({b, 256});
      x.randomize(seed++);
      ASSERT_EQ(mlp(graph.get(), x), mlp(eager.get(), x)) << "batch " << b << " round " << round;
    }
  }
  auto st = graph.stats();
  EXPECT_EQ(st.graph_captures, 3u);         // one per shape
  EXPECT_EQ(st.graph_warmups, 3u);          // default: one eager warm-up per shape
  EXPECT_EQ(st.graph_replays, 3u * 8 - 3);  // all but the warm-ups: a capture is replayed at once
  EXPECT_EQ(st.graphs_cached, 3u);
  EXPECT_GT(st.graph_pool_bytes, 0u);
  EXPECT_EQ(st.runs, 24u);
}

TEST(GraphMode, EvictionRecapturesAndStillMatches) {
  Package pkg(pkg_path("mlp"));
  Runner graph(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  Runner eager(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  Tensor x({8, 256});
  for (uint32_t i = 0; i < 3; ++i) {
    x.randomize(i);
    ASSERT_EQ(mlp(graph.get(), x), mlp(eager.get(), x));
  }
  AOTRUN_ASSERT_OK(aotrun_runner_evict_graphs(graph.get()));
  EXPECT_EQ(graph.stats().graphs_cached, 0u);
  EXPECT_EQ(graph.stats().graph_pool_bytes, 0u);
  for (uint32_t i = 3; i < 6; ++i) {
    x.randomize(i);
    ASSERT_EQ(mlp(graph.get(), x), mlp(eager.get(), x));
  }
  EXPECT_EQ(graph.stats().graph_captures, 2u);
}

TEST(GraphMode, CacheLimitRunsEagerWithCountedReason) {
  Package pkg(pkg_path("mlp"));
  RunnerOptions o;
  o.mode(AOTRUN_MODE_GRAPH);
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_graph_cache_limit(o.get(), 2));
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_graph_warmup_runs(o.get(), 0));
  Runner graph(pkg, o);
  Runner eager(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  for (int64_t b : {1, 2, 3, 3, 1}) {
    Tensor x({b, 256});
    x.randomize(static_cast<uint32_t>(b));
    ASSERT_EQ(mlp(graph.get(), x), mlp(eager.get(), x));
  }
  auto st = graph.stats();
  EXPECT_EQ(st.graph_captures, 2u);
  EXPECT_EQ(st.eager_cache_full, 2u);
  EXPECT_EQ(st.graph_replays, 3u);
}

TEST(GraphMode, FrozenCapturesUpFrontLargestFirstAndNeverAfter) {
  Package pkg(pkg_path("mlp"));
  RunnerOptions o;
  o.mode(AOTRUN_MODE_GRAPH);
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_graph_frozen(o.get(), 1));
  for (int64_t b : {4, 32}) {
    int32_t nd = 2;
    int64_t dims[2] = {b, 256};
    AOTRUN_ASSERT_OK(aotrun_runner_options_add_capture_shapes(o.get(), &nd, 1, dims));
  }
  Runner graph(pkg, o);
  Runner eager(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  auto st = graph.stats();
  EXPECT_EQ(st.graph_captures, 2u);
  EXPECT_EQ(st.graph_warmups, 2u);
  for (int64_t b : {4, 32, 5, 4}) {
    Tensor x({b, 256});
    x.randomize(static_cast<uint32_t>(b) + 50);
    ASSERT_EQ(mlp(graph.get(), x), mlp(eager.get(), x)) << b;
  }
  st = graph.stats();
  EXPECT_EQ(st.graph_captures, 2u);
  EXPECT_EQ(st.graph_replays, 3u);
  EXPECT_EQ(st.eager_frozen, 1u);
}

TEST(GraphMode, FreezeAfterWarmupStopsCapturing) {
  Package pkg(pkg_path("noop"));
  Runner graph(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  Tensor a({1, 4}), b({2, 4}), ya({1, 4}), yb({2, 4});
  for (int i = 0; i < 3; ++i) AOTRUN_ASSERT_OK(run_vec(graph.get(), a, ya));
  AOTRUN_ASSERT_OK(aotrun_runner_freeze_graphs(graph.get()));
  for (int i = 0; i < 3; ++i) AOTRUN_ASSERT_OK(run_vec(graph.get(), b, yb));
  auto st = graph.stats();
  EXPECT_EQ(st.graph_captures, 1u);
  EXPECT_EQ(st.eager_frozen, 3u);
}

TEST(GraphMode, UpFrontShapesAreValidated) {
  Package pkg(pkg_path("mlp"));
  RunnerOptions o;
  o.mode(AOTRUN_MODE_GRAPH);
  int32_t nd = 2;
  int64_t dims[2] = {4, 100};  // wrong feature size
  AOTRUN_ASSERT_OK(aotrun_runner_options_add_capture_shapes(o.get(), &nd, 1, dims));
  aotrun_runner* r = nullptr;
  Outcome out = outcome(aotrun_runner_create(pkg.get(), o.get(), &r));
  EXPECT_EQ(out.code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(out.message.find("[4, 100]"), std::string::npos) << out.message;
}

TEST(GraphMode, PackageFailureDuringReplaySurfaces) {
  Package pkg(pkg_path("fault_async"));
  RunnerOptions o;
  o.mode(AOTRUN_MODE_GRAPH);
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_graph_warmup_runs(o.get(), 0));
  Runner graph(pkg, o);
  Tensor x({1, 4}), y({1, 4});
  int failures = 0;
  for (int i = 0; i < 14; ++i) failures += outcome(run_vec(graph.get(), x, y)).code == AOTRUN_ERR_PACKAGE;
  EXPECT_EQ(failures, 2);
  EXPECT_EQ(graph.stats().graph_captures, 1u);
}
