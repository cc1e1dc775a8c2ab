// CUDA .pt2 packages through aotrun's public C API (issue #27): opened with
// nothing configured they run on aotrun's shim and its CUDA layer, and every
// way of running them gives eager PyTorch's outputs (the fixtures' .npy
// references, exported on the same GPU):
//  - every mode (threaded, single_threaded, graph: per-shape capture of the
//    shim's allocations), for an MLP, two transformer blocks and a Llama
//    (int64 token ids);
//  - asynchronous runs under the in-flight window;
//  - a caller capturing its own stream (run_on_cuda_stream), its graph
//    replayed between foreign allocations and a graph-memory trim;
//  - run_alloc handing over device outputs;
//  - graph mode's cache limit, frozen shapes, eviction;
//  - each runner's memory in a pool of its own, returned with the runner;
//  - constants updated and swapped while serving, in every mode.
//
//   AOTRUN_CUDA_PT2_DIR  NAME.pt2 and the cases NAME.s<k>.in<i>.npy /
//                        NAME.s<k>.out<j>.npy (tests/gpu/pt2/run.sh)
// Skips without a CUDA device or without the fixtures.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "aotrun_shim/cuda.h"
#include "gpu_util.hpp"
#include "pt2_cuda_cases.hpp"

using namespace aotrun_gpu;

namespace {

// The fixture's package and cases, or a skip naming what is missing.
#define LOAD_FIXTURE(name, cases)                                                                        \
  AOTRUN_REQUIRE_CUDA_DEVICE();                                                                          \
  const std::vector<Pt2Case> cases = load_cases(name);                                                   \
  const std::string cases##_pt2 = cuda_pt2_dir() + "/" + (name) + ".pt2";                                \
  if (cases.empty() || !readable(cases##_pt2)) {                                                         \
    GTEST_SKIP() << "no CUDA .pt2 fixture " << (name) << " (AOTRUN_CUDA_PT2_DIR; tests/gpu/pt2/run.sh)"; \
  }

// One synchronous run of case `c`; "" when it matches eager, else why not.
std::string run_case(aotrun_runner* r, const Pt2Case& c) {
  CaseBuffers b(c);
  std::vector<DLTensor> in = b.inputs(), out = b.outputs();
  aotrun_status* s = aotrun_runner_run(r, in.data(), in.size(), out.data(), out.size());
  if (s != nullptr) return describe(s);
  return outputs_differ(b, c);
}

std::string shape_of(const Pt2Case& c) {
  std::string s;
  for (int64_t d : c.in[0].shape) s += (s.empty() ? "[" : ", ") + std::to_string(d);
  return s + "]";
}

class CudaPt2Runner : public testing::TestWithParam<std::tuple<const char*, aotrun_mode>> {};

TEST_P(CudaPt2Runner, EveryModeMatchesEager) {
  const char* name = std::get<0>(GetParam());
  const aotrun_mode mode = std::get<1>(GetParam());
  LOAD_FIXTURE(name, cases);
  Package pkg(cases_pt2);
  const char* provider = nullptr;
  AOTRUN_GPU_ASSERT_OK(aotrun_package_get_provider(pkg.get(), &provider, nullptr));
  EXPECT_STREQ(provider, "shim");
  Runner r(pkg, RunnerOptions().mode(mode).num_models(2));
  ASSERT_EQ(aotrun_runner_mode(r.get()), mode);
  for (int round = 0; round < 3; ++round) {
    for (const Pt2Case& c : cases) {
      EXPECT_EQ(run_case(r.get(), c), "")
          << name << " " << aotrun_mode_name(mode) << " " << shape_of(c) << " round " << round;
    }
  }
  const aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.failures, 0u);
  EXPECT_EQ(st.runs, 3 * cases.size());
  if (mode == AOTRUN_MODE_GRAPH) {
    EXPECT_EQ(st.graph_captures, cases.size());                        // one per shape
    EXPECT_EQ(st.graph_replays, 3 * cases.size() - st.graph_warmups);  // a capture's run is its first replay
    std::printf("[ runner   ] %s graph: %llu captures, %llu replays, graph pool %llu bytes\n", name,
                (unsigned long long)st.graph_captures, (unsigned long long)st.graph_replays,
                (unsigned long long)st.graph_pool_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaPt2Runner,
                         testing::Combine(testing::Values("mlp", "block", "block_math", "llama"),
                                          testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED,
                                                          AOTRUN_MODE_GRAPH)),
                         [](const testing::TestParamInfo<std::tuple<const char*, aotrun_mode>>& i) {
                           return std::string(std::get<0>(i.param)) + "_" + aotrun_mode_name(std::get<1>(i.param));
                         });

// Threaded callers at once, each with its own shapes.
TEST(CudaPt2Threads, FourCallersTwoModelsAllMatchEager) {
  LOAD_FIXTURE("block", cases);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_THREADED).num_models(2));
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10 && failures[t].empty(); ++i) {
        failures[t] = run_case(r.get(), cases[static_cast<size_t>(t + i) % cases.size()]);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  EXPECT_EQ(r.stats().runs, 40u);
}

class CudaPt2Async : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaPt2Async, WindowHoldsAndEveryRunMatchesEager) {
  LOAD_FIXTURE("block", cases);
  constexpr int kWindow = 3, kRuns = 45;
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(GetParam()).num_models(2).max_inflight(kWindow));
  std::vector<std::unique_ptr<CaseBuffers>> bufs;
  std::vector<aotrun_event*> events(kRuns, nullptr);
  for (int i = 0; i < kRuns; ++i) bufs.push_back(std::make_unique<CaseBuffers>(cases[i % cases.size()]));
  for (int i = 0; i < kRuns; ++i) {
    std::vector<DLTensor> in = bufs[i]->inputs(), out = bufs[i]->outputs();
    AOTRUN_GPU_ASSERT_OK(aotrun_runner_run_async(r.get(), in.data(), in.size(), out.data(), out.size(), &events[i]));
  }
  for (int i = 0; i < kRuns; ++i) {
    aotrun_status* s = aotrun_event_wait(events[i]);
    EXPECT_EQ(s, nullptr) << "run " << i << ": " << describe(s);
    aotrun_event_free(events[i]);
  }
  AOTRUN_GPU_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  for (int i = 0; i < kRuns; ++i) EXPECT_EQ(outputs_differ(*bufs[i], cases[i % cases.size()]), "") << "run " << i;
  const aotrun_runner_stats st = r.stats();
  EXPECT_LE(st.peak_inflight, static_cast<uint64_t>(kWindow));
  EXPECT_GE(st.peak_inflight, 1u);
  EXPECT_EQ(st.inflight, 0u);
  EXPECT_EQ(st.async_completed, static_cast<uint64_t>(kRuns));
  EXPECT_EQ(st.async_failed, 0u);
  std::printf("[ async    ] %s: %d runs, window %d, peak %llu\n", aotrun_mode_name(GetParam()), kRuns, kWindow,
              (unsigned long long)st.peak_inflight);
}

INSTANTIATE_TEST_SUITE_P(AllModes, CudaPt2Async,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

struct CudaStream {
  cudaStream_t s = nullptr;
  CudaStream() { (void)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~CudaStream() {
    if (s != nullptr) (void)cudaStreamDestroy(s);
  }
};

// The caller's own capture (PR #148601's recipe, from C): a single_threaded
// or graph-mode runner records the model into the caller's graph, which is
// instantiated without flags and replayed with new input contents, between
// foreign allocations and a trim of CUDA's graph memory.
class CudaPt2CallerCapture : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaPt2CallerCapture, CallersGraphReplaysMatchEager) {
  LOAD_FIXTURE("block", cases);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  CudaStream stream;
  // Captured once; before each replay the inputs are zeroed and written
  // again, so a replay that read stale or foreign memory shows.
  const Pt2Case& a = cases[1];
  CaseBuffers b(a);
  std::vector<DLTensor> in = b.inputs(), out = b.outputs();
  AOTRUN_GPU_ASSERT_OK(
      aotrun_runner_run_on_cuda_stream(r.get(), stream.s, in.data(), in.size(), out.data(), out.size()));
  AOTRUN_GPU_CHECK_CUDA(cudaStreamSynchronize(stream.s));
  ASSERT_EQ(outputs_differ(b, a), "");
  AOTRUN_GPU_CHECK_CUDA(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeGlobal));
  aotrun_status* s = aotrun_runner_run_on_cuda_stream(r.get(), stream.s, in.data(), in.size(), out.data(), out.size());
  cudaGraph_t g = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream.s, &g);
  ASSERT_EQ(s, nullptr) << describe(s);
  ASSERT_EQ(ended, cudaSuccess) << cudaGetErrorString(ended);
  size_t nodes = 0;
  AOTRUN_GPU_CHECK_CUDA(cudaGraphGetNodes(g, nullptr, &nodes));
  cudaGraphExec_t exec = nullptr;
  AOTRUN_GPU_CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
  for (int replay = 0; replay < 4; ++replay) {
    // Zeroed inputs, then the case's again: the replay must read them now.
    for (size_t i = 0; i < a.in.size(); ++i) {
      AOTRUN_GPU_CHECK_CUDA(cudaMemset(in[i].data, 0, a.in[i].data.size()));
      AOTRUN_GPU_CHECK_CUDA(cudaMemcpy(in[i].data, a.in[i].data.data(), a.in[i].data.size(), cudaMemcpyHostToDevice));
    }
    b.poison();
    void* foreign = nullptr;  // someone else's memory between replays
    AOTRUN_GPU_CHECK_CUDA(cudaMallocAsync(&foreign, 64 << 20, stream.s));
    AOTRUN_GPU_CHECK_CUDA(cudaMemsetAsync(foreign, 0xff, 64 << 20, stream.s));
    AOTRUN_GPU_CHECK_CUDA(cudaGraphLaunch(exec, stream.s));
    AOTRUN_GPU_CHECK_CUDA(cudaFreeAsync(foreign, stream.s));
    AOTRUN_GPU_CHECK_CUDA(cudaStreamSynchronize(stream.s));
    EXPECT_EQ(outputs_differ(b, a), "") << "replay " << replay;
    if (replay == 1) {
      AOTRUN_GPU_CHECK_CUDA(cudaDeviceGraphMemTrim(0));
    }
  }
  // The runner still runs eagerly after it.
  EXPECT_EQ(run_case(r.get(), cases[0]), "");
  const aotrun_runner_stats st = r.stats();
  if (GetParam() == AOTRUN_MODE_GRAPH) {
    EXPECT_EQ(st.eager_caller_capturing, 1u);
  }
  std::printf("[ caller   ] %s: the caller's graph has %zu nodes, replayed 4 times\n", aotrun_mode_name(GetParam()),
              nodes);
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(g);
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaPt2CallerCapture, testing::Values(AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

// run_alloc on a CUDA runner hands over device memory the caller frees,
// also after the runner is gone.
class CudaPt2RunAlloc : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaPt2RunAlloc, OutputsAreDeviceMemoryWithEagersValues) {
  LOAD_FIXTURE("llama", cases);
  Package pkg(cases_pt2);
  std::vector<DLManagedTensor*> kept;
  {
    Runner r(pkg, RunnerOptions().mode(GetParam()));
    for (int round = 0; round < 2; ++round) {
      for (const Pt2Case& c : cases) {
        CaseBuffers b(c);
        std::vector<DLTensor> in = b.inputs();
        std::vector<DLManagedTensor*> outs(c.out.size(), nullptr);
        AOTRUN_GPU_ASSERT_OK(aotrun_runner_run_alloc(r.get(), in.data(), in.size(), outs.data(), outs.size()));
        for (size_t j = 0; j < outs.size(); ++j) {
          ASSERT_NE(outs[j], nullptr);
          const DLTensor& t = outs[j]->dl_tensor;
          EXPECT_EQ(t.device.device_type, kDLCUDA);
          cudaPointerAttributes attr{};
          AOTRUN_GPU_CHECK_CUDA(cudaPointerGetAttributes(&attr, t.data));
          EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
          EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + t.ndim), c.out[j].shape);
          EXPECT_EQ(differs(DeviceArray::download_floats(t.data, static_cast<size_t>(c.out[j].numel())), c.out[j]), "")
              << shape_of(c) << " round " << round;
          if (round == 1 && &c == &cases.back()) {
            kept.push_back(outs[j]);  // released after the runner
          } else {
            outs[j]->deleter(outs[j]);
          }
        }
      }
    }
  }
  for (DLManagedTensor* m : kept) {
    EXPECT_EQ(differs(DeviceArray::download_floats(m->dl_tensor.data, static_cast<size_t>(cases.back().out[0].numel())),
                      cases.back().out[0]),
              "");
    m->deleter(m);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaPt2RunAlloc,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

// Graph mode's bookkeeping with a CUDA .pt2: the block has 3 shapes.
TEST(CudaPt2GraphCache, LimitRunsTheRestEagerly) {
  LOAD_FIXTURE("block", cases);
  ASSERT_GE(cases.size(), 3u);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH).graph_cache_limit(2));
  for (int round = 0; round < 3; ++round) {
    for (const Pt2Case& c : cases) EXPECT_EQ(run_case(r.get(), c), "") << shape_of(c) << " round " << round;
  }
  const aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.graphs_cached, 2u);
  EXPECT_EQ(st.graph_captures, 2u);
  EXPECT_GE(st.eager_cache_full, 2u);
  EXPECT_EQ(st.failures, 0u);
}

TEST(CudaPt2GraphCache, FrozenCapturesOnlyTheGivenShapes) {
  LOAD_FIXTURE("block", cases);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH).graph_frozen(true).add_capture_shapes({cases[1].in[0].shape}));
  EXPECT_EQ(r.stats().graph_captures, 1u);  // at creation
  for (int round = 0; round < 2; ++round) {
    for (const Pt2Case& c : cases) EXPECT_EQ(run_case(r.get(), c), "") << shape_of(c) << " round " << round;
  }
  const aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.graph_captures, 1u);
  EXPECT_EQ(st.graph_replays, 2u);
  EXPECT_EQ(st.eager_frozen, 2 * (cases.size() - 1));
}

TEST(CudaPt2GraphCache, EvictRecapturesAndFreezeStopsCapturing) {
  LOAD_FIXTURE("block", cases);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run_case(r.get(), cases[0]), "") << "before eviction " << i;
  EXPECT_EQ(r.stats().graphs_cached, 1u);
  AOTRUN_GPU_ASSERT_OK(aotrun_runner_evict_graphs(r.get()));
  EXPECT_EQ(r.stats().graphs_cached, 0u);
  // What the evicted graph's memory held is gone; a new capture must work.
  AOTRUN_GPU_CHECK_CUDA(cudaDeviceGraphMemTrim(0));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run_case(r.get(), cases[0]), "") << "after eviction " << i;
  EXPECT_EQ(r.stats().graph_captures, 2u);
  AOTRUN_GPU_ASSERT_OK(aotrun_runner_freeze_graphs(r.get()));
  EXPECT_EQ(run_case(r.get(), cases[1]), "");
  EXPECT_EQ(r.stats().eager_frozen, 1u);
  EXPECT_EQ(r.stats().graph_captures, 2u);
}

// Each runner's tensors come from a pool of its own: runs leave nothing in
// the device's shared pool, and the memory goes back with the runner.
TEST(CudaPt2Pools, EachRunnerKeepsItsMemoryInItsOwnPool) {
  LOAD_FIXTURE("llama", cases);
  Package pkg(cases_pt2);
  {
    // The process's one-time state first: the model's kernels loaded, this
    // thread's cuBLAS handle and workspace (open used to run the model and
    // make them; it no longer runs it when the wrapper states every output).
    // A probe's memory is the shared pool's.
    Runner warm(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    EXPECT_EQ(run_case(warm.get(), cases[0]), "");
  }
  ASSERT_EQ(aotrun_shim_cuda_trim_pool(0), AOTI_TORCH_SUCCESS);
  uint64_t reserved = 0, used = 0;
  ASSERT_EQ(aotrun_shim_cuda_pool_bytes(0, &reserved, &used), AOTI_TORCH_SUCCESS);
  const uint64_t shared = reserved;  // 0 unless the probe's tensors are still alive
  size_t free_before = 0, total = 0;
  AOTRUN_GPU_CHECK_CUDA(cudaMemGetInfo(&free_before, &total));
  {
    Runner a(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    Runner b(pkg, RunnerOptions().mode(AOTRUN_MODE_THREADED));
    for (const Pt2Case& c : cases) {
      EXPECT_EQ(run_case(a.get(), c), "");
      EXPECT_EQ(run_case(b.get(), c), "");
    }
    ASSERT_EQ(aotrun_shim_cuda_pool_bytes(0, &reserved, &used), AOTI_TORCH_SUCCESS);
    EXPECT_EQ(reserved, shared) << "a runner's tensors came from the device's shared pool";
    size_t free_now = 0;
    AOTRUN_GPU_CHECK_CUDA(cudaMemGetInfo(&free_now, &total));
    std::printf("[ pools    ] two llama runners hold %.1f MiB of the device\n",
                (double(free_before) - double(free_now)) / (1 << 20));
  }
  size_t free_after = 0;
  AOTRUN_GPU_CHECK_CUDA(cudaMemGetInfo(&free_after, &total));
  // The runners' pools and constants went back (CUDA's module loads and
  // its 2 MiB granularity aside).
  EXPECT_GE(free_after + (16u << 20), free_before);
  std::printf("[ pools    ] shared pool %llu bytes; after both runners are destroyed: %+.1f MiB against before\n",
              (unsigned long long)shared, (double(free_after) - double(free_before)) / (1 << 20));
}

}  // namespace

// A CUDA model's constants replaced while it serves (C API 1.2). The host
// hands over host memory and every container gets device copies: a CUDA
// model's kernels cannot read the host's memory (before, the model was
// handed host tensors and refused each update: "mixed device constants").
// fc2's weight zeroed and its bias set to s make every
// output element s, so an output names the set it came from; swapping back
// to the package's own set gives eager's outputs again. Graph mode captures
// each set's graphs anew. Replacements in device memory are refused.
class CudaPt2Constants : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaPt2Constants, UpdatedSetsServeAndTheOwnSetComesBack) {
  LOAD_FIXTURE("mlp", cases);
  Package pkg(cases_pt2);
  std::string weight, bias;
  for (const aotrun_constant_info& k : pkg.constants()) {
    if (std::string(k.original_name) == "fc2.weight") weight = k.name;
    if (std::string(k.original_name) == "fc2.bias") bias = k.name;
  }
  ASSERT_FALSE(weight.empty() || bias.empty()) << "the mlp's constants do not list fc2.weight and fc2.bias";
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  const Pt2Case& c = cases[0];
  const DLDataType f32{kDLFloat, 32, 1};
  std::vector<int64_t> w_shape{64, 256}, b_shape{64};
  // How many output elements differ from s (all of them when the run failed).
  auto off_from = [&](float s) {
    CaseBuffers b(c);
    std::vector<DLTensor> in = b.inputs(), out = b.outputs();
    aotrun_status* st = aotrun_runner_run(r.get(), in.data(), in.size(), out.data(), out.size());
    EXPECT_EQ(st, nullptr) << describe(st);
    const std::vector<float> y = b.out[0]->download();
    return std::count_if(y.begin(), y.end(), [s](float v) { return v != s; });
  };
  // The buffers go when this returns: the update has copied them.
  auto update = [&](float s) {
    std::vector<float> w(64 * 256, 0.f), bv(64, s);
    r.update_constants({{weight.c_str(), aotrun::cxx::tensor_view(w.data(), f32, w_shape.data(), 2)},
                        {bias.c_str(), aotrun::cxx::tensor_view(bv.data(), f32, b_shape.data(), 1)}});
  };
  EXPECT_EQ(run_case(r.get(), c), "");  // the package's own constants
  update(1.5f);
  EXPECT_EQ(run_case(r.get(), c), "") << "an update changed the active set before the swap";
  r.swap_constants();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(off_from(1.5f), 0) << "run " << i << " after the swap";
  r.swap_constants();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run_case(r.get(), c), "") << "run " << i << " after swapping back";
  r.swap_constants();
  EXPECT_EQ(off_from(1.5f), 0);
  update(-2.25f);  // built from the active set (1.5), replacing the package's own
  r.swap_constants();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(off_from(-2.25f), 0) << "run " << i << " of the second update";
  r.swap_constants();
  EXPECT_EQ(off_from(1.5f), 0);
  r.free_inactive_constants();
  EXPECT_EQ(off_from(1.5f), 0);

  // Device memory is not taken as a replacement (the API takes host
  // memory): refused, naming the constant, and the runner goes on.
  DeviceArray dev({64}, f32);
  aotrun_named_tensor on_device{bias.c_str(), *dev.dl()};
  aotrun_status* st = aotrun_runner_update_constants(r.get(), &on_device, 1, 0);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(aotrun_status_code(st), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotrun_status_message(st)).find(bias), std::string::npos) << aotrun_status_message(st);
  aotrun_status_free(st);
  EXPECT_EQ(off_from(1.5f), 0);

  const aotrun_constants_state state = r.constants_state();
  EXPECT_EQ(state.updates, 2u);
  EXPECT_EQ(state.swaps, 5u);
  EXPECT_EQ(state.active_generation, 1u);
  EXPECT_EQ(state.has_inactive, 0);
  const aotrun_runner_stats stats = r.stats();
  EXPECT_EQ(stats.failures, 0u);
  if (GetParam() == AOTRUN_MODE_GRAPH) {
    EXPECT_GE(state.graph_recaptures, 2u);
  }
  std::printf("[ constants] %s: %llu updates, %llu swaps, %llu graph recaptures\n", aotrun_mode_name(GetParam()),
              (unsigned long long)state.updates, (unsigned long long)state.swaps,
              (unsigned long long)state.graph_recaptures);
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaPt2Constants,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

// Llama's sequence is exported as 8*k: 41 tokens would be cut to 40 by the
// model without an error, so the run is refused, naming the step.
TEST(CudaPt2Refusals, ASequenceOffTheExportedStepIsRefused) {
  LOAD_FIXTURE("llama", cases);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions());
  DeviceArray ids({1, 41}, DLDataType{kDLInt, 64, 1}), logits({1, 41, 1000}, DLDataType{kDLFloat, 32, 1});
  AOTRUN_GPU_CHECK_CUDA(cudaMemset(ids.dl()->data, 0, 41 * sizeof(int64_t)));
  aotrun_status* s = aotrun_runner_run(r.get(), ids.dl(), 1, logits.dl(), 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(aotrun_status_code(s), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotrun_status_message(s)).find("must be a multiple of 8"), std::string::npos)
      << aotrun_status_message(s);
  aotrun_status_free(s);
  EXPECT_EQ(run_case(r.get(), cases[1]), "");  // the runner is fine after it
}

// A token id outside Llama's vocabulary would fail the embedding kernel's
// device_assert, which ends the process's CUDA context. aotrun reads the
// ids to the host first and refuses the request, on every path: an eager
// run (the bridge), a graph mode capture and a replay (the runner asks the
// package before them). The runner, and CUDA, go on.
class CudaPt2IndexChecks : public testing::TestWithParam<aotrun_mode> {};

TEST_P(CudaPt2IndexChecks, AnIdOutsideTheVocabularyIsRefusedBeforeTheModel) {
  LOAD_FIXTURE("llama", cases);
  Package pkg(cases_pt2);
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  auto refused = [&](const Pt2Case& good, int64_t bad) {
    Npy ids = good.in[0];
    reinterpret_cast<int64_t*>(ids.data.data())[7] = bad;
    Pt2Case c{{ids}, good.out};
    CaseBuffers b(c);
    std::vector<DLTensor> in = b.inputs(), out = b.outputs();
    aotrun_status* s = aotrun_runner_run(r.get(), in.data(), in.size(), out.data(), out.size());
    ASSERT_NE(s, nullptr) << "id " << bad;
    EXPECT_EQ(aotrun_status_code(s), AOTRUN_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(aotrun_status_message(s))
                  .find("element [0, 7] is " + std::to_string(bad) + ", outside [-1000, 1000)"),
              std::string::npos)
        << aotrun_status_message(s);
    aotrun_status_free(s);
  };
  // Shape 1 runs first (graph mode: warmed up, captured, replayed), then
  // bad ids on it; shape 2 sees bad ids first (graph mode: the warm-up,
  // then the capture).
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run_case(r.get(), cases[1]), "");
  for (int64_t bad : {int64_t{1000}, int64_t{-1001}, int64_t{1} << 40}) refused(cases[1], bad);
  for (int64_t bad : {int64_t{1000}, int64_t{-1001}, int64_t{1} << 40}) refused(cases[2], bad);
  for (const Pt2Case& c : cases) EXPECT_EQ(run_case(r.get(), c), "") << "after the refusals, " << shape_of(c);
  AOTRUN_GPU_CHECK_CUDA(cudaDeviceSynchronize());
  if (GetParam() == AOTRUN_MODE_GRAPH) {
    EXPECT_GE(r.stats().graph_replays, 2u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, CudaPt2IndexChecks,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });

// Not a check: microseconds per synchronous aotrun_runner_run of the
// block's first case in each mode, for docs/PERFORMANCE.md (set beside
// PyTorch's own figures, tests/gpu/pt2/bench_torch.py, from the same job).
TEST(CudaPt2Timing, BlockPerModeMicroseconds) {
  LOAD_FIXTURE("block", cases);
  Package pkg(cases_pt2);
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    Runner r(pkg, RunnerOptions().mode(mode));
    for (size_t k = 0; k < cases.size(); ++k) {
      CaseBuffers b(cases[k]);
      std::vector<DLTensor> in = b.inputs(), out = b.outputs();
      auto once = [&] {
        aotrun_status* s = aotrun_runner_run(r.get(), in.data(), in.size(), out.data(), out.size());
        EXPECT_EQ(s, nullptr) << describe(s);
      };
      for (int i = 0; i < 20; ++i) once();
      const int iters = 300;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) once();
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
      EXPECT_EQ(outputs_differ(b, cases[k]), "");
      std::printf("[ timing   ] runner block case %zu %s %s: %.1f us per run\n", k, shape_of(cases[k]).c_str(),
                  aotrun_mode_name(mode), us);
    }
  }
}
