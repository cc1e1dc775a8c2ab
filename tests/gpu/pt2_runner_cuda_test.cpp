// CUDA .pt2 packages through aotrun's public C API (issue #27): opened with
// nothing configured they run on aotrun's shim and its CUDA layer, and every
// mode (threaded, single_threaded, graph: per-shape capture of the shim's
// allocations) gives what the model's own container gives when called
// directly on the shim (pt2_shim_cuda_tests checks that against eager
// PyTorch), for several inputs and shapes.
//
//   AOTRUN_CUDA_PT2_DIR  NAME.pt2 and NAME/ (its model library and .cubin
//                        files, extracted: tests/gpu/pt2/run.sh does both)
// Skips without a CUDA device or without the fixtures.
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <random>

#include "aotrun_shim/shim.h"
#include "gpu_util.hpp"

using namespace aotrun_gpu;

namespace {

struct Fixture {
  const char* name;
  std::vector<std::vector<int64_t>> shapes;  // one input [.., 64] float32 per case; the output has its shape
};

std::string dir() {
  const char* d = std::getenv("AOTRUN_CUDA_PT2_DIR");
  return d != nullptr ? d : "";
}

std::string library_in(const std::string& d) {
  std::string found;
  if (DIR* h = opendir(d.c_str())) {
    while (dirent* e = readdir(h)) {
      const std::string n = e->d_name;
      if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0) found = d + "/" + n;
    }
    closedir(h);
  }
  return found;
}

// The model's own container on the shim, called directly.
struct Direct {
  using Create = int (*)(void**, size_t, const char*, const char*);
  using Run = int (*)(void*, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);
  void* h = nullptr;
  Run run = nullptr;
  explicit Direct(const std::string& model_dir) {
    void* lib = dlopen(library_in(model_dir).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      ADD_FAILURE() << dlerror();
      return;
    }
    auto create = reinterpret_cast<Create>(dlsym(lib, "AOTInductorModelContainerCreateWithDevice"));
    run = reinterpret_cast<Run>(dlsym(lib, "AOTInductorModelContainerRunSingleThreaded"));
    EXPECT_EQ(create(&h, 1, "cuda", model_dir.c_str()), 0) << aotrun_shim_last_error();
  }
  std::vector<float> operator()(DeviceTensor& x) {
    const std::vector<int64_t> shape(x.dl()->shape, x.dl()->shape + x.dl()->ndim);
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size() - 1; d > 0; --d) strides[d - 1] = strides[d] * shape[d];
    AtenTensorHandle in = nullptr, out = nullptr;
    EXPECT_EQ(aoti_torch_create_tensor_from_blob(x.dl()->data, static_cast<int64_t>(shape.size()), shape.data(),
                                                 strides.data(), 0, 6, 1, 0, &in),
              0);
    EXPECT_EQ(run(h, &in, 1, &out, 1, nullptr, nullptr), 0) << aotrun_shim_last_error();
    cudaDeviceSynchronize();
    DeviceTensor y(shape);
    AtenTensorHandle view = nullptr;
    aoti_torch_create_tensor_from_blob(y.dl()->data, static_cast<int64_t>(shape.size()), shape.data(), strides.data(),
                                       0, 6, 1, 0, &view);
    EXPECT_EQ(aoti_torch_copy_(view, out, 0), 0) << aotrun_shim_last_error();
    aoti_torch_delete_tensor_object(view);
    aoti_torch_delete_tensor_object(out);
    cudaDeviceSynchronize();
    return y.download();
  }
};

std::vector<float> random_input(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

double worst(const std::vector<float>& a, const std::vector<float>& b) {
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i) w = std::max(w, std::isnan(a[i]) ? INFINITY : std::fabs(double(a[i]) - b[i]));
  return w;
}

class CudaPt2Runner : public testing::TestWithParam<std::tuple<Fixture, aotrun_mode>> {};

TEST_P(CudaPt2Runner, EveryModeMatchesTheModelsOwnContainer) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  const Fixture& f = std::get<0>(GetParam());
  const aotrun_mode mode = std::get<1>(GetParam());
  const std::string pt2 = dir() + "/" + f.name + ".pt2", extracted = dir() + "/" + f.name;
  if (dir().empty() || access(pt2.c_str(), R_OK) != 0 || library_in(extracted).empty()) {
    GTEST_SKIP() << "no CUDA .pt2 fixture " << f.name << " (AOTRUN_CUDA_PT2_DIR; tests/gpu/pt2/run.sh)";
  }
  Package pkg(pt2);
  const char* provider = nullptr;
  AOTRUN_GPU_ASSERT_OK(aotrun_package_get_provider(pkg.get(), &provider, nullptr));
  EXPECT_STREQ(provider, "shim");
  Runner r(pkg, RunnerOptions().mode(mode));
  ASSERT_EQ(aotrun_runner_mode(r.get()), mode);
  Direct direct(extracted);
  ASSERT_NE(direct.h, nullptr);
  uint32_t seed = 1;
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<int64_t>& shape : f.shapes) {
      DeviceTensor x(shape), y(shape);
      const std::vector<float> in = random_input(x.numel(), seed++);
      x.upload(in);
      y.poison();
      aotrun_status* s = aotrun_runner_run(r.get(), x.dl(), 1, y.dl(), 1);
      ASSERT_EQ(s, nullptr) << describe(s);
      const std::vector<float> want = direct(x);
      EXPECT_LE(worst(y.download(), want), 1e-4)
          << f.name << " " << aotrun_mode_name(mode) << " shape[1] " << shape[1] << " round " << round;
    }
  }
  const aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.failures, 0u);
  if (mode == AOTRUN_MODE_GRAPH) {
    EXPECT_EQ(st.graph_captures, f.shapes.size());
    EXPECT_GT(st.graph_replays, 0u);
    std::printf("[ runner   ] %s graph: %llu captures, %llu replays, graph pool %llu bytes\n", f.name,
                (unsigned long long)st.graph_captures, (unsigned long long)st.graph_replays,
                (unsigned long long)st.graph_pool_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, CudaPt2Runner,
    testing::Combine(testing::Values(Fixture{"mlp", {{8, 64}}}, Fixture{"block", {{1, 16, 64}, {1, 37, 64}}},
                                     Fixture{"block_math", {{1, 16, 64}, {1, 37, 64}}}),
                     testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH)),
    [](const testing::TestParamInfo<std::tuple<Fixture, aotrun_mode>>& i) {
      return std::string(std::get<0>(i.param).name) + "_" + aotrun_mode_name(std::get<1>(i.param));
    });

}  // namespace
