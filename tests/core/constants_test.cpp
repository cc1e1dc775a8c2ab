// Constants (weights) while serving, through the C++ host API over the C API
// 1.2: listing, update (named tensors, .safetensors), swap, rollback, free,
// every refusal naming the constant, and the rules under load: with four
// threads of sync and async runs and another thread swapping 1,000 times,
// every output belongs entirely to one weight set, in every mode.
#include <aotrun/aotrun.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/safetensors_writer.hpp"
#include "test_util.hpp"

namespace ax = aotrun::cxx;
using aotrun_test::pkg_path;
using aotrun_test::Tensor;

namespace {

constexpr int64_t kW = 4096;

// The weight set of an output of package weight_id: y - x = 1001 s in every
// element; -1 when the elements disagree (a mix) or s is not an integer.
double set_of(const Tensor& x, const Tensor& y) {
  double s = -1;
  for (size_t i = 0; i < y.data.size(); ++i) {
    const double v = (static_cast<double>(y.data[i]) - x.data[i]) / 1001.0;
    if (std::fabs(v - std::round(v)) > 1e-3) return -1;
    if (i == 0) s = std::round(v);
    if (std::round(v) != s) return -1;
  }
  return s;
}

struct WeightSet {
  std::vector<float> w, b;
  std::vector<int64_t> w_shape{kW}, b_shape{4};
  explicit WeightSet(float s) : w(kW, s), b(4, 1000 * s) {}
  std::vector<aotrun_named_tensor> named() {
    return {{"w", ax::tensor_view(w.data(), DLDataType{kDLFloat, 32, 1}, w_shape.data(), 1)},
            {"b", ax::tensor_view(b.data(), DLDataType{kDLFloat, 32, 1}, b_shape.data(), 1)}};
  }
};

ax::Runner make_runner(const ax::Package& pkg, aotrun_mode mode, int32_t num_models = 1) {
  ax::RunnerOptions o;
  o.mode(mode).num_models(num_models).strict(true);
  return ax::Runner(pkg, o);
}

double run_set(ax::Runner& r, int64_t batch = 8) {
  Tensor x({batch, 4}), y({batch, 4});
  x.randomize(7);
  r.run(x.dl, y.dl);
  return set_of(x, y);
}

aotrun_code code_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const ax::Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return AOTRUN_OK;
}

std::string temp_path(const std::string& leaf) {
  return std::string(::testing::TempDir()) + "/aotrun_constants_" + std::to_string(::getpid()) + "_" + leaf;
}

TEST(Constants, PackageListsItsConstants) {
  ax::Package pkg(pkg_path("weight_id"));
  const aotrun_package_info info = pkg.info();
  ASSERT_EQ(info.num_constants, 2u);
  EXPECT_EQ(info.constant_bytes, (kW + 4) * 4u);
  const auto list = pkg.constants();
  std::set<std::string> names;
  for (const aotrun_constant_info& c : list) {
    names.insert(c.name);
    EXPECT_STREQ(c.name, c.original_name);
    EXPECT_EQ(c.dtype.code, kDLFloat);
    EXPECT_EQ(c.dtype.bits, 32);
    ASSERT_EQ(c.ndim, 1);
    EXPECT_EQ(c.nbytes, static_cast<uint64_t>(c.shape[0]) * 4);
    EXPECT_EQ(c.folded, 0);
  }
  EXPECT_EQ(names, (std::set<std::string>{"w", "b"}));
  std::string msg;
  EXPECT_EQ(code_of([&] { pkg.constant(2); }, &msg), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  aotrun_constant_info c{};
  aotrun_status* st = aotrun_package_get_constant(pkg.get(), 0, &c);  // struct_size 0
  EXPECT_EQ(aotrun_test::outcome(st).code, AOTRUN_ERR_INVALID_ARGUMENT);
}

TEST(Constants, UpdateIsInactiveUntilSwappedAndASecondSwapRollsBack) {
  ax::Package pkg(pkg_path("weight_id"));
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(aotrun_mode_name(mode));
    ax::Runner r = make_runner(pkg, mode);
    EXPECT_EQ(run_set(r), 0);
    WeightSet one(1);
    r.update_constants(one.named(), AOTRUN_CONSTANTS_FULL_UPDATE);
    // Copied: what the caller does with its buffers afterwards does not matter.
    std::fill(one.w.begin(), one.w.end(), 99.f);
    EXPECT_EQ(run_set(r), 0) << "an update must not touch the active set";
    r.swap_constants();
    EXPECT_EQ(run_set(r), 1);
    EXPECT_EQ(run_set(r, 3), 1);
    r.swap_constants();  // rollback: the replaced set was kept as the inactive one
    EXPECT_EQ(run_set(r), 0);
    r.swap_constants();
    EXPECT_EQ(run_set(r), 1);
    aotrun_constants_state s = r.constants_state();
    EXPECT_EQ(s.updates, 1u);
    EXPECT_EQ(s.swaps, 3u);
    EXPECT_EQ(s.active_generation, 1u);
    EXPECT_EQ(s.has_inactive, 1);
    EXPECT_EQ(s.inactive_generation, 0u);
    r.free_inactive_constants();
    s = r.constants_state();
    EXPECT_EQ(s.has_inactive, 0);
    r.free_inactive_constants();  // none left: still OK
    std::string msg;
    EXPECT_EQ(code_of([&] { r.swap_constants(); }, &msg), AOTRUN_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("no inactive constants"), std::string::npos) << msg;
    EXPECT_EQ(run_set(r), 1);
  }
}

TEST(Constants, PartialUpdateKeepsTheConstantsItDoesNotName) {
  ax::Package pkg(pkg_path("weight_id"));
  ax::Runner r = make_runner(pkg, AOTRUN_MODE_THREADED);
  WeightSet two(2);
  r.update_constants(two.named());
  r.swap_constants();
  std::vector<float> w(kW, 3.f);
  std::vector<int64_t> shape{kW};
  r.update_constants({{"w", ax::tensor_view(w.data(), DLDataType{kDLFloat, 32, 1}, shape.data(), 1)}});
  r.swap_constants();
  Tensor x({2, 4}), y({2, 4});
  r.run(x.dl, y.dl);
  for (float v : y.data) EXPECT_EQ(v, 3.f + 2000.f);  // new w, b of set 2
}

TEST(Constants, GraphModeCapturesPerSetAndNeverReplaysStaleWeights) {
  ax::Package pkg(pkg_path("weight_id"));
  ax::Runner r = make_runner(pkg, AOTRUN_MODE_GRAPH);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(run_set(r), 0);  // warm-up, capture, replays
  const uint64_t captures = r.stats().graph_captures;
  ASSERT_GE(captures, 1u);
  WeightSet five(5);
  r.update_constants(five.named(), AOTRUN_CONSTANTS_FULL_UPDATE);
  r.swap_constants();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(run_set(r), 5) << "run " << i << " after the swap";
  EXPECT_EQ(r.stats().graph_captures, captures + 1) << "the new set captures its own graph";
  EXPECT_EQ(r.constants_state().graph_recaptures, 1u);
  r.swap_constants();  // back: the old set's graph is still valid and replays
  for (int i = 0; i < 2; ++i) EXPECT_EQ(run_set(r), 0);
  EXPECT_EQ(r.stats().graph_captures, captures + 1);
  r.free_inactive_constants();
  EXPECT_EQ(r.stats().graphs_cached, 1u) << "the freed set's graph is no longer counted";
}

TEST(Constants, UpdateFromSafetensorsFileIsMappedAndChecked) {
  ax::Package pkg(pkg_path("weight_id"));
  ax::Runner r = make_runner(pkg, AOTRUN_MODE_SINGLE_THREADED);
  const std::string good = temp_path("seven.safetensors");
  ASSERT_TRUE(aotrun_test::write_safetensors(
      good, {{"w", {kW}, std::vector<float>(kW, 7.f)}, {"b", {4}, std::vector<float>(4, 7000.f)}}));
  r.update_constants_from_file(good, AOTRUN_CONSTANTS_FULL_UPDATE);
  ::unlink(good.c_str());  // mapped: the set keeps the pages
  r.swap_constants();
  EXPECT_EQ(run_set(r), 7);

  std::string msg;
  EXPECT_EQ(code_of([&] { r.update_constants_from_file(temp_path("absent.safetensors")); }, &msg),
            AOTRUN_ERR_NOT_FOUND);
  const std::string stranger = temp_path("stranger.safetensors");
  ASSERT_TRUE(aotrun_test::write_safetensors(stranger, {{"v", {4}, std::vector<float>(4, 1.f)}}));
  EXPECT_EQ(code_of([&] { r.update_constants_from_file(stranger); }, &msg), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("no constant 'v'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(stranger), std::string::npos) << msg;
  ::unlink(stranger.c_str());
  const std::string junk = temp_path("junk.safetensors");
  FILE* f = std::fopen(junk.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("not a safetensors file", f);
  std::fclose(f);
  EXPECT_EQ(code_of([&] { r.update_constants_from_file(junk); }, &msg), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(msg.find(junk), std::string::npos) << msg;
  ::unlink(junk.c_str());
  EXPECT_EQ(run_set(r), 7);
}

TEST(Constants, EveryBadUpdateIsRefusedNamingTheConstantAndChangesNothing) {
  ax::Package pkg(pkg_path("weight_id"));
  ax::Runner r = make_runner(pkg, AOTRUN_MODE_THREADED);
  WeightSet one(1);
  r.update_constants(one.named());  // an inactive set that failures must not lose
  struct Case {
    const char* what;
    std::function<void(std::vector<aotrun_named_tensor>&)> spoil;
    uint32_t flags;
    const char* expect;
  };
  std::vector<int64_t> short_shape{kW - 1}, two_d{64, 64}, strides{2};
  const std::vector<Case> cases = {
      {"unknown name", [](auto& t) { t[0].name = "fc9.weight"; }, 0, "no constant 'fc9.weight'"},
      {"NULL name", [](auto& t) { t[0].name = nullptr; }, 0, "name is NULL"},
      {"twice", [](auto& t) { t[1].name = "w"; }, 0, "given twice"},
      {"dtype",
       [](auto& t) {
         t[0].tensor.dtype = DLDataType{kDLFloat, 16, 1};
       },
       0, "float16"},
      {"shape", [&](auto& t) { t[0].tensor.shape = short_shape.data(); }, 0, "has shape [4095]"},
      {"rank", [&](auto& t) { t[0].tensor.shape = two_d.data(), t[0].tensor.ndim = 2; }, 0, "constant 'w'"},
      {"device",
       [](auto& t) {
         t[0].tensor.device = DLDevice{kDLCUDA, 0};
       },
       0, "host memory"},
      {"strides", [&](auto& t) { t[1].tensor.strides = strides.data(); }, 0, "not contiguous"},
      {"NULL data", [](auto& t) { t[1].tensor.data = nullptr; }, 0, "NULL data"},
      {"flags", [](auto&) {}, 0x80, "flags"},
      {"full update", [](auto& t) { t.pop_back(); }, AOTRUN_CONSTANTS_FULL_UPDATE, "leaves out 1 constant(s): 'b'"},
  };
  WeightSet nine(9);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<aotrun_named_tensor> t = nine.named();
    c.spoil(t);
    std::string msg;
    EXPECT_EQ(code_of([&] { r.update_constants(t, c.flags); }, &msg), AOTRUN_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
  }
  EXPECT_EQ(aotrun_test::outcome(aotrun_runner_update_constants(r.get(), nullptr, 1, 0)).code,
            AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(aotrun_test::outcome(aotrun_runner_update_constants(nullptr, nullptr, 0, 0)).code,
            AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(aotrun_test::outcome(aotrun_runner_swap_constants(nullptr)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(aotrun_test::outcome(aotrun_runner_update_constants_from_file(r.get(), nullptr, 0)).code,
            AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run_set(r), 0);
  r.swap_constants();  // the inactive set from before the failures
  EXPECT_EQ(run_set(r), 1);
  EXPECT_EQ(r.constants_state().updates, 1u);
}

TEST(Constants, SwapFromAnEventCallbackIsAllowed) {
  ::setenv("AOTRUN_TEST_SPIN_US", "20000", 1);  // the callback is set before the run ends
  ax::Package pkg(pkg_path("weight_id"));
  ax::Runner r = make_runner(pkg, AOTRUN_MODE_THREADED);
  ::unsetenv("AOTRUN_TEST_SPIN_US");
  WeightSet four(4);
  r.update_constants(four.named());
  Tensor x({4, 4}), y({4, 4});
  ax::Event ev = r.run_async(x.dl, y.dl);
  std::atomic<int> code{-1};
  ev.on_complete(
      [&](aotrun_code, const char*) { code = aotrun_test::outcome(aotrun_runner_swap_constants(r.get())).code; });
  r.wait_all();
  for (int i = 0; i < 1000 && code.load() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(code.load(), AOTRUN_OK);
  EXPECT_EQ(set_of(x, y), 0);
  EXPECT_EQ(run_set(r), 4);
}

// Four threads (two sync, two async) run while another updates and swaps
// 1,000 times: every output names exactly one set that existed.
void storm(aotrun_mode mode, int32_t num_models) {
  // Each run spans some swaps. Read by every container the swapper creates;
  // nothing else touches the environment until it is unset after the join.
  ::setenv("AOTRUN_TEST_SPIN_US", "40", 1);
  ax::Package pkg(pkg_path("weight_id"));
  ax::Runner r = make_runner(pkg, mode, num_models);
  constexpr int kSwaps = 1000;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, runs{0};
  auto check = [&](const Tensor& x, const Tensor& y) {
    const double s = set_of(x, y);
    if (s < 0 || s > kSwaps) {
      ++bad;
    }
    ++runs;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Tensor x({4, 4}), y({4, 4});
      x.randomize(static_cast<uint32_t>(t + 1));
      while (!done.load()) {
        if (t < 2) {
          r.run(x.dl, y.dl);
        } else {
          ax::Event ev = r.run_async(x.dl, y.dl);
          ev.wait();
        }
        check(x, y);
      }
    });
  }
  for (int s = 1; s <= kSwaps; ++s) {
    WeightSet ws(static_cast<float>(s));
    r.update_constants(ws.named(), AOTRUN_CONSTANTS_FULL_UPDATE);
    r.swap_constants();
    if (s % 100 == 0) r.free_inactive_constants();
  }
  done = true;
  for (auto& t : threads) t.join();
  r.wait_all();
  ::unsetenv("AOTRUN_TEST_SPIN_US");
  EXPECT_EQ(bad.load(), 0) << "outputs mixing weight sets, out of " << runs.load();
  EXPECT_GT(runs.load(), 0);
  ::testing::Test::RecordProperty("runs_during_storm", runs.load());
  std::printf("%s: %d runs during %d swaps, %d mixed\n", aotrun_mode_name(mode), runs.load(), kSwaps, bad.load());
  EXPECT_EQ(run_set(r), kSwaps);
  const aotrun_constants_state cs = r.constants_state();
  EXPECT_EQ(cs.swaps, static_cast<uint64_t>(kSwaps));
  EXPECT_EQ(cs.active_generation, static_cast<uint64_t>(kSwaps));
  EXPECT_EQ(r.stats().failures, 0u);
  // Serial modes count runs without a read-modify-write, under their lock:
  // none is lost (the one more is run_set's).
  EXPECT_EQ(r.stats().runs, static_cast<uint64_t>(runs.load()) + 1);
}

TEST(ConstantsStorm, Threaded) { storm(AOTRUN_MODE_THREADED, 2); }
TEST(ConstantsStorm, SingleThreaded) { storm(AOTRUN_MODE_SINGLE_THREADED, 1); }
TEST(ConstantsStorm, Graph) { storm(AOTRUN_MODE_GRAPH, 1); }

}  // namespace
