// Asynchronous runs with a bounded in-flight window (run under ThreadSanitizer).
#include <dlfcn.h>
#include <stdlib.h>

#include <atomic>
#include <memory>
#include <thread>

#include "../packages/counting_api.h"
#include "test_util.hpp"

using namespace aotrun_test;

namespace {

// The counting package's own counters, read through dlsym on the same
// library libaotrun loaded (same path: same handle, same globals).
struct CountingProbe {
  void* handle = nullptr;
  aotrun_test_counting_max_inflight_fn max_inflight = nullptr;
  aotrun_test_counting_completed_fn completed = nullptr;
  aotrun_test_counting_reset_fn reset = nullptr;
  CountingProbe() {
    handle = dlopen((pkg_path("counting") + "/libcounting.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    max_inflight =
        reinterpret_cast<aotrun_test_counting_max_inflight_fn>(dlsym(handle, AOTRUN_TEST_COUNTING_SYM_MAX_INFLIGHT));
    completed = reinterpret_cast<aotrun_test_counting_completed_fn>(dlsym(handle, AOTRUN_TEST_COUNTING_SYM_COMPLETED));
    reset = reinterpret_cast<aotrun_test_counting_reset_fn>(dlsym(handle, AOTRUN_TEST_COUNTING_SYM_RESET));
  }
  ~CountingProbe() {
    if (handle) dlclose(handle);
  }
};

struct Slot {
  Tensor x{{2, 4}}, y{{2, 4}};
  aotrun_event* ev = nullptr;
};

// Spin time of the counting package, read when its container is created.
struct SpinUs {
  explicit SpinUs(int us) { setenv("AOTRUN_TEST_SPIN_US", std::to_string(us).c_str(), 1); }
  ~SpinUs() { unsetenv("AOTRUN_TEST_SPIN_US"); }
};

}  // namespace

TEST(Async, TenThousandSubmissionsNeverExceedTheWindow) {
  SpinUs spin(20);
  Package pkg(pkg_path("counting"));
  CountingProbe probe;
  ASSERT_NE(probe.handle, nullptr) << dlerror();
  probe.reset();
  Runner r(pkg, RunnerOptions().num_models(4).max_inflight(4));
  std::atomic<int> wrong{0}, failed{0};
  auto submitter = [&](uint32_t base) {
    std::vector<Slot> ring(16);  // more buffers than the window: reuse after completion
    for (int i = 0; i < 5000; ++i) {
      Slot& s = ring[static_cast<size_t>(i) % ring.size()];
      if (s.ev) {
        aotrun_status* st = aotrun_event_wait(s.ev);
        failed += st != nullptr;
        aotrun_status_free(st);
        for (size_t k = 0; k < s.x.data.size(); ++k) wrong += s.y.data[k] != s.x.data[k] + 1.f;
        aotrun_event_free(s.ev);
      }
      s.x.randomize(base + static_cast<uint32_t>(i));
      aotrun_status* st = aotrun_runner_run_async(r.get(), &s.x.dl, 1, &s.y.dl, 1, &s.ev);
      if (st) {
        ++failed;
        s.ev = nullptr;
      }
      aotrun_status_free(st);
    }
    for (Slot& s : ring) {
      if (!s.ev) continue;
      aotrun_status* st = aotrun_event_wait(s.ev);
      failed += st != nullptr;
      aotrun_status_free(st);
      for (size_t k = 0; k < s.x.data.size(); ++k) wrong += s.y.data[k] != s.x.data[k] + 1.f;
      aotrun_event_free(s.ev);
    }
  };
  std::thread a(submitter, 1u), b(submitter, 1000000u);
  a.join();
  b.join();
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(probe.max_inflight(), 4);
  EXPECT_GE(probe.max_inflight(), 1);
  EXPECT_EQ(probe.completed(), 10000);
  auto st = r.stats();
  EXPECT_EQ(st.async_submitted, 10000u);
  EXPECT_EQ(st.async_completed, 10000u);
  EXPECT_EQ(st.async_failed, 0u);
  EXPECT_LE(st.peak_inflight, 4u);
  EXPECT_EQ(st.inflight, 0u);
  EXPECT_EQ(st.max_inflight, 4);
}

TEST(Async, TryRunAsyncWouldBlockExactlyWhenFull) {
  SpinUs spin(100000);  // 100 ms per run: the window stays full while we probe
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions().num_models(1).max_inflight(2));
  Slot s[3];
  AOTRUN_ASSERT_OK(aotrun_runner_try_run_async(r.get(), &s[0].x.dl, 1, &s[0].y.dl, 1, &s[0].ev));
  AOTRUN_ASSERT_OK(aotrun_runner_try_run_async(r.get(), &s[1].x.dl, 1, &s[1].y.dl, 1, &s[1].ev));
  EXPECT_EQ(r.stats().inflight, 2u);
  Outcome o = outcome(aotrun_runner_try_run_async(r.get(), &s[2].x.dl, 1, &s[2].y.dl, 1, &s[2].ev));
  EXPECT_EQ(o.code, AOTRUN_ERR_WOULD_BLOCK);
  EXPECT_NE(o.message.find("in-flight window"), std::string::npos) << o.message;
  EXPECT_EQ(s[2].ev, nullptr);
  o = outcome(aotrun_runner_run_async_timeout(r.get(), &s[2].x.dl, 1, &s[2].y.dl, 1, 1000000, &s[2].ev));
  EXPECT_EQ(o.code, AOTRUN_ERR_TIMEOUT);
  EXPECT_EQ(r.stats().would_block, 1u);
  // Argument errors are reported before a slot is considered.
  Tensor bad({2, 5});
  EXPECT_EQ(outcome(aotrun_runner_try_run_async(r.get(), &bad.dl, 1, &s[2].y.dl, 1, &s[2].ev)).code,
            AOTRUN_ERR_INVALID_ARGUMENT);
  AOTRUN_ASSERT_OK(aotrun_event_wait(s[0].ev));
  // One slot is free again: exactly one try succeeds.
  AOTRUN_ASSERT_OK(aotrun_runner_try_run_async(r.get(), &s[2].x.dl, 1, &s[2].y.dl, 1, &s[2].ev));
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  for (auto& sl : s) {
    EXPECT_EQ(aotrun_event_is_ready(sl.ev), 1);
    aotrun_event_free(sl.ev);
  }
  EXPECT_EQ(r.stats().inflight, 0u);
}

TEST(Async, EveryFailureLandsInItsOwnEventAndNoSlotLeaks) {
  Package pkg(pkg_path("fault_async"));
  Runner r(pkg, RunnerOptions().num_models(1).max_inflight(3));
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < 70; ++i) {
    slots.push_back(std::make_unique<Slot>());
    Slot& s = *slots.back();
    AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &s.x.dl, 1, &s.y.dl, 1, &s.ev));
  }
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  int failed = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    ASSERT_EQ(aotrun_event_is_ready(slots[i]->ev), 1);
    Outcome o = outcome(aotrun_event_wait(slots[i]->ev));
    if ((i + 1) % 7 == 0) {
      EXPECT_EQ(o.code, AOTRUN_ERR_PACKAGE) << i;
      EXPECT_NE(o.message.find("injected failure on run " + std::to_string(i + 1)), std::string::npos) << o.message;
      ++failed;
    } else {
      EXPECT_EQ(o.code, AOTRUN_OK) << i << ": " << o.message;
    }
    aotrun_event_free(slots[i]->ev);
  }
  EXPECT_EQ(failed, 10);
  auto st = r.stats();
  EXPECT_EQ(st.async_completed + st.async_failed, 70u);
  EXPECT_EQ(st.async_failed, 10u);
  EXPECT_EQ(st.inflight, 0u);
  // The whole window is available again.
  Slot more[3];
  for (auto& s : more) AOTRUN_ASSERT_OK(aotrun_runner_try_run_async(r.get(), &s.x.dl, 1, &s.y.dl, 1, &s.ev));
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  for (auto& s : more) aotrun_event_free(s.ev);
}

TEST(Async, DestroyWithRunsInFlightWaitsForThem) {
  SpinUs spin(2000);
  Package pkg(pkg_path("counting"));
  Slot s[6];
  {
    aotrun_runner* r = nullptr;
    RunnerOptions o;
    o.num_models(2).max_inflight(6);
    AOTRUN_ASSERT_OK(aotrun_runner_create(pkg.get(), o.get(), &r));
    for (auto& sl : s) {
      sl.x.randomize(3);
      AOTRUN_ASSERT_OK(aotrun_runner_run_async(r, &sl.x.dl, 1, &sl.y.dl, 1, &sl.ev));
    }
    aotrun_runner_destroy(r);
  }
  for (auto& sl : s) {
    EXPECT_EQ(aotrun_event_is_ready(sl.ev), 1);
    AOTRUN_EXPECT_OK(aotrun_event_wait(sl.ev));
    EXPECT_EQ(sl.y.data[0], sl.x.data[0] + 1.f);
    aotrun_event_free(sl.ev);
  }
}

TEST(Async, WaitAllOnIdleRunnerAndOtherRunnersUnaffected) {
  SpinUs spin(50000);
  Package pkg(pkg_path("counting"));
  Runner idle(pkg, RunnerOptions());
  Runner busy(pkg, RunnerOptions().max_inflight(2));
  Slot s;
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(busy.get(), &s.x.dl, 1, &s.y.dl, 1, &s.ev));
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(idle.get()));  // returns although busy has a run in flight
  EXPECT_EQ(aotrun_event_is_ready(s.ev), 0);
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(busy.get()));
  EXPECT_EQ(aotrun_event_is_ready(s.ev), 1);
  aotrun_event_free(s.ev);
}

TEST(Async, EventFreedBeforeCompletionAndCallbacksFireOnce) {
  SpinUs spin(5000);
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions().max_inflight(4));
  std::atomic<int> calls{0};
  std::atomic<int> last_code{-1};
  auto cb = [](void* user, aotrun_code code, const char*) {
    auto* pair = static_cast<std::pair<std::atomic<int>*, std::atomic<int>*>*>(user);
    pair->first->fetch_add(1);
    pair->second->store(code);
  };
  std::pair<std::atomic<int>*, std::atomic<int>*> user{&calls, &last_code};
  Slot a, b;
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &a.x.dl, 1, &a.y.dl, 1, &a.ev));
  AOTRUN_ASSERT_OK(aotrun_event_set_callback(a.ev, cb, &user));
  EXPECT_EQ(outcome(aotrun_event_set_callback(a.ev, cb, &user)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_event_free(a.ev);  // before completion
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &b.x.dl, 1, &b.y.dl, 1, &b.ev));
  EXPECT_EQ(outcome(aotrun_event_wait_timeout(b.ev, 1000)).code, AOTRUN_ERR_TIMEOUT);
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(last_code.load(), AOTRUN_OK);
  // Registered after completion: called at once, on this thread.
  AOTRUN_ASSERT_OK(aotrun_event_set_callback(b.ev, cb, &user));
  EXPECT_EQ(calls.load(), 2);
  aotrun_event_free(b.ev);
  EXPECT_EQ(b.y.data[0], 1.f);
}

TEST(Async, AllModesRunAsync) {
  Package pkg(pkg_path("mlp"));
  Runner ref(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  Tensor x({3, 256}), expect({3, 64});
  x.randomize(77);
  AOTRUN_ASSERT_OK(run_vec(ref.get(), x, expect));
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    Runner r(pkg, RunnerOptions().mode(m).num_models(2));
    std::vector<std::unique_ptr<Tensor>> outs;
    std::vector<aotrun_event*> evs;
    for (int i = 0; i < 6; ++i) {
      outs.push_back(std::make_unique<Tensor>(std::vector<int64_t>{3, 64}));
      aotrun_event* ev = nullptr;
      AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &x.dl, 1, &outs.back()->dl, 1, &ev));
      evs.push_back(ev);
    }
    for (size_t i = 0; i < evs.size(); ++i) {
      AOTRUN_ASSERT_OK(aotrun_event_wait(evs[i]));
      EXPECT_EQ(outs[i]->data, expect.data) << aotrun_mode_name(m) << " run " << i;
      aotrun_event_free(evs[i]);
    }
    if (m == AOTRUN_MODE_GRAPH) {
      EXPECT_GE(r.stats().graph_replays, 4u);
    }
  }
}
