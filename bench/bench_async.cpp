// bench_async: throughput of aotrun_runner_run_async with the in-flight
// window at 1, 2, 4, 32 and "unbounded" (65536), for num_models 1 and 2, on
// the counting test package (each run busy-waits AOTRUN_TEST_SPIN_US = 50 us,
// y = x + 1). One thread submits; each benchmark iteration submits
// kRunsPerIteration runs, each with its own input/output kept alive until its
// event completes, then waits for all of them, so the time counts every run
// to completion (an unbounded window cannot look fast by just queueing).
//
// async/window_ratio alternates a window-4 runner and an unbounded one in the
// same benchmark and reports window-4 throughput / unbounded throughput
// (target >= 0.95): a small window costs no throughput.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "support/aotrun_util.hpp"
#include "support/bench_main.hpp"

namespace aotrun_bench {
namespace {

constexpr int kRunsPerIteration = 1000;
constexpr int32_t kUnbounded = 65536;

// Inputs and outputs of one iteration's runs: slot i is used by run i and
// stays untouched until its event completed.
class Slots {
 public:
  explicit Slots(int n) {
    for (int i = 0; i < n; ++i) {
      x_.emplace_back(1, 4, static_cast<float>(i % 97));
      y_.emplace_back(1, 4);
    }
    events_.resize(n);
  }
  DLTensor* x(int i) { return x_[i].dl(); }
  DLTensor* y(int i) { return y_[i].dl(); }
  aotrun_event*& event(int i) { return events_[i]; }
  // y = x + 1 for run i (checked outside the timed region, on a sample).
  bool correct(int i) const { return y_[i].data()[3] == x_[i].data()[3] + 1.0f; }

 private:
  std::deque<Tensor2D> x_, y_;  // deque: elements never move
  std::vector<aotrun_event*> events_;
};

// Submits `slots` runs, then waits for and frees every event in submission
// order. Returns false with *error set on the first failure (after draining).
bool submit_and_drain(aotrun_runner* r, Slots& slots, int n, std::string* error) {
  bool good = true;
  int submitted = 0;
  for (; submitted < n; ++submitted) {
    if (!ok(aotrun_runner_run_async(r, slots.x(submitted), 1, slots.y(submitted), 1, &slots.event(submitted)),
            "aotrun_runner_run_async", error)) {
      good = false;
      break;
    }
  }
  for (int i = 0; i < submitted; ++i) {
    aotrun_status* st = aotrun_event_wait(slots.event(i));
    if (st != nullptr && good)
      good = ok(st, "run (event)", error);
    else
      aotrun_status_free(st);
    aotrun_event_free(slots.event(i));
  }
  return good;
}

struct AsyncRunner {
  AsyncRunner(int32_t num_models, int32_t max_inflight) : package(open_package("counting")) {
    RunnerConfig c;
    c.num_models = num_models;
    c.max_inflight = max_inflight;
    runner = make_runner(package, c);
  }
  Package package;
  Runner runner;
};

double spin_us() {
  const char* v = std::getenv("AOTRUN_TEST_SPIN_US");
  return v != nullptr ? std::atof(v) : 50.0;
}

void BM_AsyncThroughput(benchmark::State& state) {
  const auto num_models = static_cast<int32_t>(state.range(0));
  const auto max_inflight = static_cast<int32_t>(state.range(1));
  guarded(state, [&] {
    AsyncRunner a(num_models, max_inflight);
    Slots slots(kRunsPerIteration);
    std::string error;
    if (!submit_and_drain(a.runner.get(), slots, 8, &error)) return fail(state, error);  // start workers
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
      if (!submit_and_drain(a.runner.get(), slots, kRunsPerIteration, &error)) return fail(state, error);
    }
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int i = 0; i < kRunsPerIteration; i += 97) {
      if (!slots.correct(i)) return fail(state, "run " + std::to_string(i) + " produced a wrong y");
    }
    const aotrun_runner_stats s = a.runner.stats();
    state.counters["runs_per_s"] = benchmark::Counter(kRunsPerIteration, benchmark::Counter::kIsIterationInvariantRate);
    // Share of the instances' time spent inside the model: 1.0 means the
    // spin of each run alone limits throughput.
    const double rate = kRunsPerIteration * static_cast<double>(state.iterations()) / elapsed_s;
    state.counters["model_busy"] = rate * spin_us() * 1e-6 / num_models;
    state.counters["peak_inflight"] = static_cast<double>(s.peak_inflight);
    // Mean time a submission waited for a free slot in the window.
    const double submitted = static_cast<double>(std::max<uint64_t>(s.async_submitted, 1));
    state.counters["blocked_us"] = static_cast<double>(s.submit_blocked_ns) * 1e-3 / submitted;
  });
}

// Window 4 and unbounded, alternating per iteration under the same load.
void BM_WindowRatio(benchmark::State& state) {
  const auto num_models = static_cast<int32_t>(state.range(0));
  guarded(state, [&] {
    AsyncRunner bounded(num_models, 4);
    AsyncRunner unbounded(num_models, kUnbounded);
    Slots slots(kRunsPerIteration);
    std::string error;
    using Clock = std::chrono::steady_clock;
    double bounded_s = 0, unbounded_s = 0;
    for (AsyncRunner* a : {&bounded, &unbounded}) {
      if (!submit_and_drain(a->runner.get(), slots, 8, &error)) return fail(state, error);
    }
    for (auto _ : state) {
      // Alternate which goes first so neither always follows the other.
      const bool bounded_first = state.iterations() % 2 == 0;
      for (int k = 0; k < 2; ++k) {
        const bool use_bounded = (k == 0) == bounded_first;
        AsyncRunner& a = use_bounded ? bounded : unbounded;
        const auto t0 = Clock::now();
        if (!submit_and_drain(a.runner.get(), slots, kRunsPerIteration, &error)) return fail(state, error);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        (use_bounded ? bounded_s : unbounded_s) += s;
      }
    }
    const double n = kRunsPerIteration * static_cast<double>(state.iterations());
    state.counters["w4_runs_per_s"] = n / bounded_s;
    state.counters["unbounded_runs_per_s"] = n / unbounded_s;
    state.counters["ratio"] = unbounded_s / bounded_s;  // = w4 rate / unbounded rate
    state.counters["w4_peak_inflight"] = static_cast<double>(bounded.runner.stats().peak_inflight);
  });
}

void windows(benchmark::internal::Benchmark* b) {
  b->ArgNames({"models", "inflight"});
  for (int64_t models : {1, 2}) {
    for (int64_t inflight : {1, 2, 4, 32, static_cast<int>(kUnbounded)}) b->Args({models, inflight});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_AsyncThroughput)->Name("async/throughput")->Apply(windows);
BENCHMARK(BM_WindowRatio)
    ->Name("async/window_ratio")
    ->ArgName("models")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

void setup() {
  // The counting package reads this at container creation; keep a value the
  // caller chose.
  ::setenv("AOTRUN_TEST_SPIN_US", "50", 0);
  benchmark::AddCustomContext("spin_us", std::getenv("AOTRUN_TEST_SPIN_US"));
  benchmark::AddCustomContext("runs_per_iteration", std::to_string(kRunsPerIteration));
}

}  // namespace aotrun_bench
