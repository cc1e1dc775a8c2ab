// Runners used from several threads at once (run under ThreadSanitizer).
#include <atomic>
#include <thread>

#include "test_util.hpp"

using namespace aotrun_test;

// 4 threads x num_models 2 on the threaded entry point: every result right.
TEST(RunnerThreading, FourThreadsTwoModels) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions().num_models(2));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0}, failed{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Tensor x({4, 4}), y({4, 4});
      for (int i = 0; i < 100; ++i) {
        x.randomize(static_cast<uint32_t>(t * 1000 + i));
        aotrun_status* s = run_vec(r.get(), x, y);
        if (s) ++failed;
        aotrun_status_free(s);
        for (size_t k = 0; k < x.data.size(); ++k) wrong += y.data[k] != x.data[k] + 1.f;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(r.stats().runs, 400u);
}

TEST(RunnerThreading, SingleThreadedCallersAreSerialisedNotRacing) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      Tensor x({2, 4}), y({2, 4});
      for (int i = 0; i < 100; ++i) {
        x.randomize(static_cast<uint32_t>(t * 7919 + i));
        aotrun_status_free(run_vec(r.get(), x, y));
        for (size_t k = 0; k < x.data.size(); ++k) wrong += y.data[k] != x.data[k] + 1.f;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(r.stats().runs, 300u);
}
