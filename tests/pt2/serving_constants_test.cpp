// A .pt2 served while its weights change, through the public API (aotrun.hpp
// over the C API 1.2): the package lists the model's constants by the
// model's own names; an update that zeroes the last layer's weight and sets
// its bias to s makes every output element s, so an output names the weight
// set it came from. Four threads (sync and async) run while another swaps
// 1,000 times, in every mode; a release that cannot take replacements
// (torch 2.6) refuses with UNSUPPORTED and keeps serving. A frozen export's
// first calls on four threads at once agree. Skipped without libtorch.
#include <aotrun/aotrun.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "require_libtorch.hpp"

namespace ax = aotrun::cxx;

namespace {

const std::string kFixtures = AOTRUN_PT2_FIXTURES;

constexpr DLDataType kF32{kDLFloat, 32, 1};

// The update names of the mlp's last layer (net.2), from the package's list.
struct LastLayer {
  std::string weight, bias;
};

LastLayer last_layer(const ax::Package& pkg) {
  LastLayer l;
  for (const aotrun_constant_info& c : pkg.constants()) {
    if (std::string(c.original_name) == "net.2.weight") l.weight = c.name;
    if (std::string(c.original_name) == "net.2.bias") l.bias = c.name;
  }
  return l;
}

// W2 = 0, b2 = s: every output element is s.
struct SetOf {
  std::vector<float> w = std::vector<float>(16 * 128, 0.f), b;
  std::vector<int64_t> w_shape{16, 128}, b_shape{16};
  explicit SetOf(float s) : b(16, s) {}
  std::vector<aotrun_named_tensor> named(const LastLayer& l) {
    return {{l.weight.c_str(), ax::tensor_view(w.data(), kF32, w_shape.data(), 2)},
            {l.bias.c_str(), ax::tensor_view(b.data(), kF32, b_shape.data(), 1)}};
  }
};

// The set an output came from; -1 for a mix (elements disagree).
double set_of(const std::vector<float>& y) {
  for (float v : y) {
    if (v != y[0]) return -1;
  }
  return y[0];
}

struct Io {
  std::vector<float> x = std::vector<float>(4 * 64, 0.5f), y = std::vector<float>(4 * 16);
  std::vector<int64_t> xs{4, 64}, ys{4, 16};
  DLTensor in = ax::tensor_view(x.data(), kF32, xs.data(), 2);
  DLTensor out = ax::tensor_view(y.data(), kF32, ys.data(), 2);
};

ax::Package open_mlp(const std::string& release) { return ax::Package(kFixtures + "/torch-" + release + "/mlp.pt2"); }

TEST(Pt2Serving, ListsTheModelsConstantsByItsOwnNames) {
  REQUIRE_LIBTORCH();
  ax::Package pkg = open_mlp("2.15.0");
  const aotrun_package_info info = pkg.info();
  EXPECT_EQ(info.num_constants, 4u);
  EXPECT_EQ(info.constant_bytes, 32768u + 512u + 8192u + 64u);
  const LastLayer l = last_layer(pkg);
  EXPECT_FALSE(l.weight.empty());
  EXPECT_FALSE(l.bias.empty());
}

TEST(Pt2Serving, UpdateAndSwapChangeTheOutputsAndRollBack) {
  REQUIRE_LIBTORCH();
  ax::Package pkg = open_mlp("2.15.0");
  ax::RunnerOptions o;
  o.mode(AOTRUN_MODE_SINGLE_THREADED);
  ax::Runner r(pkg, o);
  Io io;
  r.run(io.in, io.out);
  const std::vector<float> exported = io.y;
  ASSERT_LT(set_of(exported), 0) << "the exported weights give varied outputs";
  SetOf three(3.f);
  r.update_constants(three.named(last_layer(pkg)));
  r.run(io.in, io.out);
  EXPECT_EQ(io.y, exported) << "an update must not change the active set";
  r.swap_constants();
  r.run(io.in, io.out);
  EXPECT_EQ(set_of(io.y), 3.0);
  r.swap_constants();
  r.run(io.in, io.out);
  EXPECT_EQ(io.y, exported) << "a second swap rolls back to the exported weights";
}

TEST(Pt2Serving, AReleaseThatCannotReplaceConstantsSaysSoAndKeepsServing) {
  REQUIRE_LIBTORCH();
  ax::Package pkg = open_mlp("2.6.0");
  ax::Runner r(pkg);
  SetOf one(1.f);
  try {
    r.update_constants(one.named(last_layer(pkg)));
    FAIL() << "torch 2.6 packages cannot take replacement constants";
  } catch (const ax::Error& e) {
    EXPECT_EQ(e.code(), AOTRUN_ERR_UNSUPPORTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("constant update"), std::string::npos) << e.what();
  }
  Io io;
  r.run(io.in, io.out);  // still serving the exported weights
  EXPECT_LT(set_of(io.y), 0);
  EXPECT_EQ(r.constants_state().updates, 0u);
}

void storm(aotrun_mode mode, int32_t num_models) {
  ax::Package pkg = open_mlp("2.15.0");
  const LastLayer l = last_layer(pkg);
  ax::RunnerOptions o;
  o.mode(mode).num_models(num_models).strict(true);
  ax::Runner r(pkg, o);
  // Each update makes a container of the model: under a sanitizer a thousand
  // of them took a minute, and a few hundred interleave with runs as well.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr int kSwaps = 300;
#else
  constexpr int kSwaps = 1000;
#endif
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, runs{0}, on_exported{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Io io;
      while (!done.load()) {
        if (t < 2) {
          r.run(io.in, io.out);
        } else {
          ax::Event ev = r.run_async(io.in, io.out);
          ev.wait();
        }
        const double s = set_of(io.y);
        if (s < 0) {
          ++on_exported;  // the exported set (before the first swap) varies by element
        } else if (s < 1 || s > kSwaps || s != std::floor(s)) {
          ++bad;
        }
        ++runs;
      }
    });
  }
  for (int s = 1; s <= kSwaps; ++s) {
    SetOf set(static_cast<float>(s));
    r.update_constants(set.named(l), 0);
    r.swap_constants();
    if (s % 100 == 0) r.free_inactive_constants();
  }
  done = true;
  for (auto& t : threads) t.join();
  r.wait_all();
  EXPECT_EQ(bad.load(), 0) << "outputs mixing weight sets, out of " << runs.load();
  EXPECT_GT(runs.load(), on_exported.load()) << "no run saw an updated set";
  std::printf("%s: %d runs during %d swaps (%d on the exported set), %d mixed\n", aotrun_mode_name(mode), runs.load(),
              kSwaps, on_exported.load(), bad.load());
  Io io;
  r.run(io.in, io.out);
  EXPECT_EQ(set_of(io.y), kSwaps);
  EXPECT_EQ(r.constants_state().swaps, static_cast<uint64_t>(kSwaps));
  EXPECT_EQ(r.stats().failures, 0u);
}

// A frozen export's packed weights (the mkldnn layout) are read when first
// used, and what the kernels derive from them (the convolution primitive's
// layout, packed GEMM weights) is made once and shared. Four model instances
// make their first calls on four threads at once; every output equals the
// one a sequential first call on another package gives.
TEST(Pt2Serving, FrozenWeightsFirstUsedOnFourThreadsAtOnce) {
  REQUIRE_LIBTORCH();
  const std::string path = kFixtures + "/torch-2.15.0/frozen_cnn.pt2";
  std::vector<float> x(2 * 3 * 16 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0f;
  std::vector<int64_t> xs{2, 3, 16, 16}, ys{2, 10};
  auto run_once = [&](ax::Runner& r, std::vector<float>* y) {
    y->assign(2 * 10, 0.0f);
    DLTensor in = ax::tensor_view(x.data(), kF32, xs.data(), 4);
    DLTensor out = ax::tensor_view(y->data(), kF32, ys.data(), 2);
    r.run(in, out);
  };
  std::vector<float> want;
  {
    ax::Package ref(path);
    ax::Runner r(ref, ax::RunnerOptions().mode(AOTRUN_MODE_THREADED));
    run_once(r, &want);
  }
  ax::Package pkg(path);
  ax::Runner r(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_THREADED).num_models(4));
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      try {
        run_once(r, &got[t]);
      } catch (const ax::Error& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ASSERT_EQ(got[t].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[t][i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << "thread " << t << " element " << i;
    }
  }
  EXPECT_EQ(r.stats().failures, 0u);
}

// A frozen export's plain constant replaced through every release's update
// form (torch 2.7's copy into the model's blob, 2.8 and 2.9's map, 2.10+'s
// pairs), beside the package's own packed weights. fc2's bias is [10] floats
// and the model keeps 64 bytes for it (AOTInductor rounds each constant up to
// 64): a replacement of its shape is taken. Set to 0 and then to 1, it moves
// every output by exactly the bias (the exported output minus the first is
// the same vector on both batch rows, the second minus the first is 1), so a
// weight overwritten or read from the wrong place shows. (This model's
// weights are too small to slide into alignment at load; a slid weight and
// a copying update are constant_memory_test.cpp's.)
class Pt2FrozenUpdate : public ::testing::TestWithParam<const char*> {};

TEST_P(Pt2FrozenUpdate, PlainBiasUpdatesBesideThePackedWeights) {
  REQUIRE_LIBTORCH();
  ax::Package pkg(kFixtures + "/torch-" + GetParam() + "/frozen_cnn.pt2");
  std::string bias_name;
  for (const aotrun_constant_info& c : pkg.constants()) {
    if (std::string(c.original_name) == "fc2.bias") bias_name = c.name;
  }
  ASSERT_FALSE(bias_name.empty()) << "frozen_cnn lists no fc2.bias";
  ax::Runner r(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  std::vector<float> x(2 * 3 * 16 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 23) - 11) / 8.0f;
  std::vector<int64_t> xs{2, 3, 16, 16}, ys{2, 10}, bs{10};
  auto run = [&] {
    std::vector<float> y(2 * 10, 0.0f);
    DLTensor in = ax::tensor_view(x.data(), kF32, xs.data(), 4);
    DLTensor out = ax::tensor_view(y.data(), kF32, ys.data(), 2);
    r.run(in, out);
    return y;
  };
  auto with_bias = [&](float v) {
    std::vector<float> b(10, v);
    const std::vector<aotrun_named_tensor> named{{bias_name.c_str(), ax::tensor_view(b.data(), kF32, bs.data(), 1)}};
    r.update_constants(named);
    r.swap_constants();
    return run();
  };
  const std::vector<float> exported = run(), zero = with_bias(0.0f), one = with_bias(1.0f);
  for (int j = 0; j < 10; ++j) {
    EXPECT_NE(exported[j], exported[10 + j]) << "the two rows' inputs differ: so must their outputs";
    const float b0 = exported[j] - zero[j], b1 = exported[10 + j] - zero[10 + j];
    EXPECT_NEAR(b0, b1, 1e-5f) << "output " << j << ": the exported minus the zero-bias output is not one bias";
    for (int row = 0; row < 2; ++row) {
      const int i = row * 10 + j;
      EXPECT_NEAR(one[i] - zero[i], 1.0f, 1e-5f) << "row " << row << " output " << j;
    }
  }
  r.swap_constants();  // back to the package's own set
  EXPECT_EQ(run(), zero);
}

INSTANTIATE_TEST_SUITE_P(Releases, Pt2FrozenUpdate,
                         ::testing::Values("2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1",
                                           "2.15.0"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string s = std::string("torch_") + i.param;
                           for (char& c : s) {
                             if (c == '.') c = '_';
                           }
                           return s;
                         });

TEST(Pt2ServingStorm, Threaded) {
  REQUIRE_LIBTORCH();
  storm(AOTRUN_MODE_THREADED, 2);
}
TEST(Pt2ServingStorm, SingleThreaded) {
  REQUIRE_LIBTORCH();
  storm(AOTRUN_MODE_SINGLE_THREADED, 1);
}
TEST(Pt2ServingStorm, Graph) {
  REQUIRE_LIBTORCH();
  storm(AOTRUN_MODE_GRAPH, 1);
}

}  // namespace
