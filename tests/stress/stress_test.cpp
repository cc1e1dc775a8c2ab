// Stress: 4 threads mix synchronous, asynchronous (blocking and try) and
// graph-mode runs over three packages (mlp, counting, fault_async; the last
// fails every 7th execution of a container), with varying batch sizes, while
// runners are created and destroyed concurrently (some with runs still in
// flight) and one shared runner per package is used by all threads at once.
//
// Checked: every submitted run is accounted for exactly once (successes +
// failures == submissions, per runner, against both the caller's counts and
// the runner's stats; fault_async fails exactly every 7th execution); every
// event callback fires exactly once; outputs of successful runs are right;
// resident memory returns to its level after a warm-up round once everything
// is torn down. Bounded in count and in time (a few seconds normally, longer
// under ThreadSanitizer).
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

using namespace aotrun_test;

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kSeconds = 25.0;
constexpr int kRunnersPerThread = 24;
#else
constexpr double kSeconds = 6.0;
constexpr int kRunnersPerThread = 60;
#endif
constexpr int kThreads = 4;
constexpr int kRunsPerRunner = 30;

enum Pkg { kMlp = 0, kCounting = 1, kFault = 2, kNumPkgs = 3 };
const char* const kPkgNames[kNumPkgs] = {"mlp", "counting", "fault_async"};
int64_t in_width(int p) { return p == kMlp ? 256 : 4; }
int64_t out_width(int p) { return p == kMlp ? 64 : 4; }
int max_batch(int p) { return p == kMlp ? 3 : 6; }

uint64_t rss_kb() {
  ::malloc_trim(0);
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// Inputs are a deterministic function of (batch, seed); expected outputs of
// mlp are computed once per (batch, seed) by a reference runner.
constexpr int kSeeds = 4;
struct Expected {
  std::vector<float> mlp[4][kSeeds];  // [batch][seed]
};

struct Shared {
  Package pkgs[kNumPkgs];
  aotrun_runner* shared_runner[kNumPkgs] = {};
  Expected expected;
  // Totals over the whole test.
  std::atomic<uint64_t> submitted{0}, succeeded{0}, failed{0}, would_block{0}, callbacks_set{0};
  std::atomic<uint64_t> callbacks_fired{0}, runners_made{0}, wrong_outputs{0};
  // Per shared runner: runs submitted by the caller side.
  std::atomic<uint64_t> shared_submitted[kNumPkgs] = {}, shared_ok[kNumPkgs] = {}, shared_failed[kNumPkgs] = {};
  std::mutex failure_mu;
  std::vector<std::string> failures;  // unexpected outcomes, reported at the end
  void note(const std::string& what) {
    std::lock_guard<std::mutex> lock(failure_mu);
    if (failures.size() < 20) failures.push_back(what);
  }
};

struct Job {
  int pkg = 0;
  int batch = 1;
  int seed = 0;
  Tensor x, y;
  aotrun_event* ev = nullptr;
  Job(int p, int b, int s) : pkg(p), batch(b), seed(s), x({b, in_width(p)}), y({b, out_width(p)}, -99.f) {
    x.randomize(static_cast<uint32_t>(1000 * s + b));
  }
};

// True if y is what package p computes for x.
bool output_ok(const Shared& sh, const Job& j) {
  switch (j.pkg) {
    case kCounting:
      for (size_t i = 0; i < j.x.data.size(); ++i)
        if (j.y.data[i] != j.x.data[i] + 1.f) return false;
      return true;
    case kFault:
      for (size_t i = 0; i < j.x.data.size(); ++i)
        if (j.y.data[i] != j.x.data[i]) return false;
      return true;
    default: {
      const auto& e = sh.expected.mlp[j.batch][j.seed];
      for (size_t i = 0; i < e.size(); ++i) {
        if (std::fabs(j.y.data[i] - e[i]) > 1e-4f * (1.f + std::fabs(e[i]))) return false;
      }
      return true;
    }
  }
}

struct Tally {
  uint64_t submitted = 0, ok = 0, failed = 0;
};

// Records one finished run's outcome. Failures are only legitimate from
// fault_async, with its injected message.
void record(Shared& sh, const Job& j, const Outcome& o, Tally& t) {
  if (o.code == AOTRUN_OK) {
    ++t.ok;
    if (!output_ok(sh, j)) {
      sh.wrong_outputs++;
      sh.note(std::string("wrong output from ") + kPkgNames[j.pkg] + " batch " + std::to_string(j.batch));
    }
  } else {
    ++t.failed;
    if (j.pkg != kFault || o.code != AOTRUN_ERR_PACKAGE || o.message.find("injected failure") == std::string::npos) {
      sh.note(std::string("unexpected failure from ") + kPkgNames[j.pkg] + ": " + aotrun_code_name(o.code) + ": " +
              o.message);
    }
  }
}

void on_event(void* user, aotrun_code, const char*) { static_cast<Shared*>(user)->callbacks_fired++; }

// One runner's life on one thread: create with random options, submit a mix
// of runs, maybe destroy with runs in flight, then settle the accounts.
void runner_life(Shared& sh, std::mt19937& rng, bool warmup) {
  const int p = static_cast<int>(rng() % kNumPkgs);
  const aotrun_mode mode = static_cast<aotrun_mode>(rng() % 3);
  RunnerOptions opts;
  opts.mode(mode).num_models(1 + static_cast<int>(rng() % 3)).max_inflight(1 + static_cast<int>(rng() % 4));
  aotrun_runner* r = nullptr;
  aotrun_status* s = aotrun_runner_create(sh.pkgs[p].get(), opts.get(), &r);
  if (s != nullptr) {
    sh.note("runner_create: " + describe(s));
    return;
  }
  sh.runners_made++;
  Tally t;
  std::deque<std::unique_ptr<Job>> pending;
  auto finish = [&](std::unique_ptr<Job>& j) {
    record(sh, *j, outcome(aotrun_event_wait(j->ev)), t);
    aotrun_event_free(j->ev);
  };
  const int runs = warmup ? 6 : kRunsPerRunner;
  for (int i = 0; i < runs; ++i) {
    // Sometimes go through the runner shared by all threads instead.
    const bool use_shared = !warmup && rng() % 5 == 0;
    const int pp = use_shared ? static_cast<int>(rng() % kNumPkgs) : p;
    aotrun_runner* target = use_shared ? sh.shared_runner[pp] : r;
    auto j = std::make_unique<Job>(pp, 1 + static_cast<int>(rng() % max_batch(pp)), static_cast<int>(rng() % kSeeds));
    if (pp == kMlp && j->batch > 3) j->batch = 3;
    const unsigned kind = warmup ? static_cast<unsigned>(i % 3) : rng() % 3;
    if (use_shared) {
      // Shared runners: synchronous only (their accounting is global).
      sh.shared_submitted[pp]++;
      Outcome o = outcome(aotrun_runner_run(target, &j->x.dl, 1, &j->y.dl, 1));
      Tally dummy;
      record(sh, *j, o, dummy);
      (o.code == AOTRUN_OK ? sh.shared_ok[pp] : sh.shared_failed[pp])++;
      continue;
    }
    if (kind == 0) {
      ++t.submitted;
      record(sh, *j, outcome(aotrun_runner_run(r, &j->x.dl, 1, &j->y.dl, 1)), t);
    } else {
      aotrun_status* st = kind == 1 ? aotrun_runner_run_async(r, &j->x.dl, 1, &j->y.dl, 1, &j->ev)
                                    : aotrun_runner_try_run_async(r, &j->x.dl, 1, &j->y.dl, 1, &j->ev);
      if (st != nullptr) {
        Outcome o = outcome(st);
        if (kind == 2 && o.code == AOTRUN_ERR_WOULD_BLOCK) {
          sh.would_block++;
        } else {
          sh.note("submit: " + std::string(aotrun_code_name(o.code)) + ": " + o.message);
        }
        continue;
      }
      ++t.submitted;
      if (rng() % 3 == 0) {
        AOTRUN_EXPECT_OK(aotrun_event_set_callback(j->ev, &on_event, &sh));
        sh.callbacks_set++;
      }
      pending.push_back(std::move(j));
      // Keep a few in flight; retire the oldest beyond that.
      while (pending.size() > 3) {
        finish(pending.front());
        pending.pop_front();
      }
    }
  }
  // Half the time the runner goes with runs still in flight: destroy waits
  // for them, and their events stay valid.
  const bool destroy_first = rng() % 2 == 0;
  aotrun_runner_stats stats{};
  stats.struct_size = sizeof(stats);
  if (destroy_first) {
    AOTRUN_EXPECT_OK(aotrun_runner_wait_all(r));
  }
  for (auto& j : pending) {
    if (destroy_first) {
      // After wait_all every event must already be complete.
      if (!aotrun_event_is_ready(j->ev)) sh.note("event not ready after wait_all");
    }
  }
  if (destroy_first) {
    AOTRUN_EXPECT_OK(aotrun_runner_get_stats(r, &stats));
    aotrun_runner_destroy(r);
    for (auto& j : pending) finish(j);
  } else {
    for (auto& j : pending) finish(j);
    AOTRUN_EXPECT_OK(aotrun_runner_get_stats(r, &stats));
    aotrun_runner_destroy(r);
  }
  // Accounts of this runner: the caller's view against the runner's.
  if (t.ok + t.failed != t.submitted) {
    sh.note("runner " + std::string(kPkgNames[p]) + ": " + std::to_string(t.ok) + " ok + " + std::to_string(t.failed) +
            " failed != " + std::to_string(t.submitted) + " submitted");
  }
  if (stats.runs != t.ok || stats.failures != t.failed) {
    sh.note(std::string("runner ") + kPkgNames[p] + " (" + aotrun_mode_name(mode) + ") stats say " +
            std::to_string(stats.runs) + " runs / " + std::to_string(stats.failures) + " failures, caller saw " +
            std::to_string(t.ok) + " / " + std::to_string(t.failed));
  }
  if (stats.async_submitted != stats.async_completed + stats.async_failed || stats.inflight != 0) {
    sh.note("runner async accounts: submitted " + std::to_string(stats.async_submitted) + " completed " +
            std::to_string(stats.async_completed) + " failed " + std::to_string(stats.async_failed) + " inflight " +
            std::to_string(stats.inflight));
  }
  if (p == kFault && t.failed != t.submitted / 7) {
    sh.note(std::string("fault_async (") + aotrun_mode_name(mode) + "): " + std::to_string(t.failed) + " failures in " +
            std::to_string(t.submitted) + " executions, expected every 7th");
  }
  sh.submitted += t.submitted;
  sh.succeeded += t.ok;
  sh.failed += t.failed;
}

void round(Shared& sh, bool warmup, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&sh, i, warmup, deadline] {
      std::mt19937 rng(0xA07 + 7919 * i + (warmup ? 0 : 1));
      const int n = warmup ? 6 : kRunnersPerThread;
      for (int k = 0; k < n && std::chrono::steady_clock::now() < deadline; ++k) runner_life(sh, rng, warmup);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace

TEST(Stress, MixedRunsOverThreePackagesAreAllAccountedFor) {
  ::setenv("AOTRUN_TEST_SPIN_US", "20", 1);  // counting: short busy-wait per execution
  ::unsetenv("AOTRUN_TEST_FAULT_EVERY");     // fault_async: every 7th
  Shared sh;
  for (int p = 0; p < kNumPkgs; ++p) {
    sh.pkgs[p] = Package(pkg_path(kPkgNames[p]));
  }
  // Expected mlp outputs, from a single-threaded reference runner.
  {
    Runner ref(sh.pkgs[kMlp], RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    for (int b = 1; b <= 3; ++b) {
      for (int s = 0; s < kSeeds; ++s) {
        Job j(kMlp, b, s);
        AOTRUN_ASSERT_OK(aotrun_runner_run(ref.get(), &j.x.dl, 1, &j.y.dl, 1));
        sh.expected.mlp[b][s] = j.y.data;
      }
    }
  }

  // Warm-up round (allocator arenas, lazily created state), then the baseline.
  for (int p = 0; p < kNumPkgs; ++p)
    AOTRUN_ASSERT_OK(aotrun_runner_create(sh.pkgs[p].get(), RunnerOptions().num_models(2).get(), &sh.shared_runner[p]));
  round(sh, true, 30.0);
  for (int p = 0; p < kNumPkgs; ++p) {
    aotrun_runner_destroy(sh.shared_runner[p]);
    sh.shared_runner[p] = nullptr;
  }
  const uint64_t rss_before = rss_kb();
  const uint64_t warm_submitted = sh.submitted.load();

  for (int p = 0; p < kNumPkgs; ++p)
    AOTRUN_ASSERT_OK(aotrun_runner_create(sh.pkgs[p].get(), RunnerOptions().num_models(2).get(), &sh.shared_runner[p]));
  const auto t0 = std::chrono::steady_clock::now();
  round(sh, false, kSeconds);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int p = 0; p < kNumPkgs; ++p) {
    aotrun_runner_stats st{};
    st.struct_size = sizeof(st);
    AOTRUN_EXPECT_OK(aotrun_runner_get_stats(sh.shared_runner[p], &st));
    EXPECT_EQ(st.runs, sh.shared_ok[p].load()) << kPkgNames[p];
    EXPECT_EQ(st.failures, sh.shared_failed[p].load()) << kPkgNames[p];
    EXPECT_EQ(sh.shared_ok[p] + sh.shared_failed[p], sh.shared_submitted[p].load()) << kPkgNames[p];
    if (p == kFault) {
      EXPECT_EQ(st.failures, sh.shared_submitted[p] / 7) << "shared fault_async runner";
    }
    aotrun_runner_destroy(sh.shared_runner[p]);
  }
  const uint64_t rss_after = rss_kb();

  for (const auto& f : sh.failures) ADD_FAILURE() << f;
  EXPECT_EQ(sh.succeeded + sh.failed, sh.submitted.load());
  EXPECT_EQ(sh.callbacks_fired.load(), sh.callbacks_set.load()) << "every callback fires exactly once";
  EXPECT_EQ(sh.wrong_outputs.load(), 0u);
  EXPECT_GT(sh.failed.load(), 0u) << "fault_async should have failed some runs";

  uint64_t shared_total = 0;
  for (int p = 0; p < kNumPkgs; ++p) shared_total += sh.shared_submitted[p];
  std::printf(
      "stress: %.1f s, %llu runners, %llu runs on own runners after warm-up (+%llu on shared runners), "
      "%llu failed (injected), %llu try-submissions refused, %llu callbacks; RSS %llu -> %llu kB\n",
      elapsed, static_cast<unsigned long long>(sh.runners_made.load()),
      static_cast<unsigned long long>(sh.submitted - warm_submitted), static_cast<unsigned long long>(shared_total),
      static_cast<unsigned long long>(sh.failed.load()), static_cast<unsigned long long>(sh.would_block.load()),
      static_cast<unsigned long long>(sh.callbacks_fired.load()), static_cast<unsigned long long>(rss_before),
      static_cast<unsigned long long>(rss_after));
  RecordProperty("runs", static_cast<int>(sh.submitted - warm_submitted + shared_total));
  // Runner, event and graph memory is returned: allow allocator slack only.
  // (Sanitizer runtimes keep freed memory in quarantine / shadow: there the
  // leak check is LeakSanitizer's, not this one.)
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  std::printf("stress: RSS check skipped under a sanitizer\n");
#else
  EXPECT_LT(rss_after, rss_before + 16 * 1024) << "resident memory grew by " << (rss_after - rss_before) << " kB";
#endif
}
