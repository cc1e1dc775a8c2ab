// The CUDA MLP package (examples/packages/cuda_mlp) through the public C API
// of libaotrun, with the assertions of the CPU suites (tests/core): output
// equal to a naive CPU reference, every mode, graph replay bit-equal to
// eager, concurrent threaded callers, and the bounded asynchronous window.
// Every test skips with "no CUDA device: <reason>" where there is none.
//
// Caller-driven capture on a cudaStream_t: caller_capture_test.cpp.
#include <cstring>
#include <thread>

#include "gpu_util.hpp"
#include "mlp_reference.h"

using namespace aotrun_gpu;

namespace {

struct Reference {
  aotrun::test::Safetensors weights;
  aotrun::test::MlpReference mlp;
  Reference() : weights(aotrun::test::Safetensors::load(pkg_path("cuda_mlp") + "/weights.safetensors")), mlp(weights) {}
};

const Reference& reference() {
  static const Reference ref;
  return ref;
}

// Runs x (host data, [batch, 256]) through `r` and returns y ([batch, 64]).
std::vector<float> run_mlp(aotrun_runner* r, const std::vector<float>& x, int64_t batch) {
  DeviceTensor dx({batch, 256}), dy({batch, 64});
  dx.upload(x);
  dy.poison();
  aotrun_status* s = aotrun_runner_run(r, dx.dl(), 1, dy.dl(), 1);
  EXPECT_EQ(s, nullptr) << describe(s);
  return dy.download();
}

}  // namespace

class CudaMlpModes : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaMlpModes, MatchesNaiveReference) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions().mode(GetParam()).num_models(2));
  ASSERT_NE(r.get(), nullptr);
  EXPECT_EQ(aotrun_runner_mode(r.get()), GetParam());  // cuda_mlp is ABI 1.1: no fallback
  for (int64_t batch : {1, 3, 17, 64, 3}) {
    const std::vector<float> x = aotrun::test::mlp_reference_input(batch, static_cast<uint64_t>(batch) + 11);
    const std::vector<float> y = run_mlp(r.get(), x, batch);
    const std::vector<float> want = reference().mlp.forward(x, batch);
    ASSERT_EQ(y.size(), want.size());
    EXPECT_LE(worst_error(y, want), 1e-3) << "batch " << batch << " mode " << aotrun_mode_name(GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, CudaMlpModes,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

TEST(CudaMlpGraph, ReplayEqualsEagerBitForBit) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  Runner graph(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  Runner eager(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  ASSERT_NE(graph.get(), nullptr);
  ASSERT_NE(eager.get(), nullptr);
  ASSERT_EQ(aotrun_runner_mode(graph.get()), AOTRUN_MODE_GRAPH);
  const int64_t batches[] = {1, 16, 64, 16, 1, 64, 1, 16};
  uint64_t seed = 100;
  for (int round = 0; round < 3; ++round) {
    for (int64_t b : batches) {
      const std::vector<float> x = aotrun::test::mlp_reference_input(b, seed++);
      const std::vector<float> g = run_mlp(graph.get(), x, b);
      const std::vector<float> e = run_mlp(eager.get(), x, b);
      ASSERT_EQ(g.size(), e.size());
      ASSERT_EQ(0, std::memcmp(g.data(), e.data(), g.size() * sizeof(float))) << "batch " << b << " round " << round;
    }
  }
  const aotrun_runner_stats st = graph.stats();
  EXPECT_EQ(st.graph_captures, 3u);  // one per shape
  EXPECT_EQ(st.graph_warmups, 3u);   // default: one eager warm-up per shape
  EXPECT_EQ(st.graph_replays, 3u * 8 - 3);
  EXPECT_EQ(st.graphs_cached, 3u);
  EXPECT_GT(st.graph_pool_bytes, 0u);
  EXPECT_EQ(st.runs, 24u);
  EXPECT_EQ(st.failures, 0u);
}

TEST(CudaMlpThreaded, FourThreadsTwoModelsAllCorrect) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_THREADED).num_models(2));
  ASSERT_NE(r.get(), nullptr);
  const Reference& ref = reference();
  std::vector<std::thread> threads;
  std::vector<double> worst(4, 0.0);
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const int64_t batch = 1 + t * 5;
      for (int i = 0; i < 25; ++i) {
        const std::vector<float> x = aotrun::test::mlp_reference_input(batch, static_cast<uint64_t>(t * 1000 + i));
        DeviceTensor dx({batch, 256}), dy({batch, 64});
        dx.upload(x);
        aotrun_status* s = aotrun_runner_run(r.get(), dx.dl(), 1, dy.dl(), 1);
        if (s != nullptr) {
          ++failures[t];
          aotrun_status_free(s);
          continue;
        }
        worst[t] = std::max(worst[t], worst_error(dy.download(), ref.mlp.forward(x, batch)));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_LE(worst[t], 1e-3) << "thread " << t;
  }
  EXPECT_EQ(r.stats().runs, 100u);
}

class CudaMlpAsync : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaMlpAsync, WindowIsNeverExceededAndEveryRunIsCorrect) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  constexpr int kWindow = 3;
  constexpr int kRuns = 120;
  constexpr int64_t kBatch = 4;
  Runner r(pkg, RunnerOptions().mode(GetParam()).num_models(2).max_inflight(kWindow));
  ASSERT_NE(r.get(), nullptr);
  std::vector<std::vector<float>> xs;
  std::vector<std::unique_ptr<DeviceTensor>> dx, dy;
  std::vector<aotrun_event*> events(kRuns, nullptr);
  for (int i = 0; i < kRuns; ++i) {
    xs.push_back(aotrun::test::mlp_reference_input(kBatch, static_cast<uint64_t>(500 + i % 7)));
    dx.push_back(std::make_unique<DeviceTensor>(std::vector<int64_t>{kBatch, 256}));
    dy.push_back(std::make_unique<DeviceTensor>(std::vector<int64_t>{kBatch, 64}));
    dx.back()->upload(xs.back());
    dy.back()->poison();
  }
  for (int i = 0; i < kRuns; ++i) {
    AOTRUN_GPU_ASSERT_OK(aotrun_runner_run_async(r.get(), dx[i]->dl(), 1, dy[i]->dl(), 1, &events[i]));
  }
  for (int i = 0; i < kRuns; ++i) {
    aotrun_status* s = aotrun_event_wait(events[i]);
    EXPECT_EQ(s, nullptr) << "run " << i << ": " << describe(s);
    aotrun_event_free(events[i]);
  }
  AOTRUN_GPU_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  const aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.max_inflight, kWindow);
  EXPECT_LE(st.peak_inflight, static_cast<uint64_t>(kWindow));
  EXPECT_GE(st.peak_inflight, 1u);
  EXPECT_EQ(st.inflight, 0u);
  EXPECT_EQ(st.async_submitted, static_cast<uint64_t>(kRuns));
  EXPECT_EQ(st.async_completed, static_cast<uint64_t>(kRuns));
  EXPECT_EQ(st.async_failed, 0u);
  for (int i = 0; i < kRuns; ++i) {
    EXPECT_LE(worst_error(dy[i]->download(), reference().mlp.forward(xs[i], kBatch)), 1e-3) << "run " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, CudaMlpAsync,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

TEST(CudaMlpArguments, HostMemoryInputIsRefusedNamingTheDevice) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  Runner r(pkg, RunnerOptions());
  ASSERT_NE(r.get(), nullptr);
  std::vector<float> x(256, 0.5f), y(64, 0.f);
  int64_t xs[2] = {1, 256}, ys[2] = {1, 64};
  DLTensor tx{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, nullptr, 0};
  DLTensor ty{y.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, ys, nullptr, 0};
  aotrun_status* s = aotrun_runner_run(r.get(), &tx, 1, &ty, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(aotrun_status_code(s), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotrun_status_message(s)).find("device"), std::string::npos) << aotrun_status_message(s);
  aotrun_status_free(s);
}

TEST(CudaMlpArguments, MissingDeviceIdFailsWithDeviceError) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  Package pkg(pkg_path("cuda_mlp"));
  aotrun_runner* r = nullptr;
  RunnerOptions o;
  o.device(DLDevice{kDLCUDA, count});  // one past the last device
  aotrun_status* s = aotrun_runner_create(pkg.get(), o.get(), &r);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(aotrun_status_code(s), AOTRUN_ERR_DEVICE) << aotrun_status_message(s);
  EXPECT_NE(std::string(aotrun_status_message(s)).find("does not exist"), std::string::npos)
      << aotrun_status_message(s);
  aotrun_status_free(s);
  EXPECT_EQ(r, nullptr);
}
