// Paired measurement: the path under test ("subject") runs once per benchmark
// iteration, and after every block of subject calls the timer is paused and a
// "reference" (usually the direct call into the package, the floor) runs as
// many times. Both are timed with the same clock, interleaved at ~100 us
// granularity, so load from other processes on this shared machine hits both
// alike and their ratio stays meaningful when the absolute times wander.
//
// Counters (per call, in `unit`, thread CPU time): call_<u> (subject),
// floor_<u> (reference), overhead_<u> (difference), ratio (subject /
// reference); wall_ratio is the same ratio on the wall clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include <time.h>

#include <benchmark/benchmark.h>

#include "bench_main.hpp"

namespace aotrun_bench {

enum class Unit { kNs, kUs };

struct PairedOptions {
  Unit unit = Unit::kNs;
  double block_ns = 100e3;  // target duration of one block of subject calls
};

// `subject()` and `reference()` return true on success; on failure they
// return false after storing a message in *error (cold path).
// Time spent on this thread's CPU, ns. Synchronous runs on an inline stream
// execute entirely on the calling thread, so this is their cost; unlike the
// wall clock it does not count the time other tenants of this machine hold
// the core. One read per block, never per call.
inline double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Both clocks of one stretch of calls.
struct Stamp {
  std::chrono::steady_clock::time_point wall;
  double cpu;
  static Stamp now() { return {std::chrono::steady_clock::now(), thread_cpu_ns()}; }
};

struct Totals {
  double wall_ns = 0, cpu_ns = 0;
  int64_t calls = 0;
  void add(const Stamp& from, int64_t n) {
    const Stamp to = Stamp::now();
    wall_ns += static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(to.wall - from.wall).count());
    cpu_ns += to.cpu - from.cpu;
    calls += n;
  }
};

// `subject()` and `reference()` return true on success; on failure they
// return false after storing a message in *error (cold path).
template <class Subject, class Reference>
void run_paired(benchmark::State& state, Subject&& subject, Reference&& reference, std::string* error,
                const PairedOptions& opt = {}) {
  auto time_reference = [&](int64_t n, Totals* totals) {
    const Stamp t0 = Stamp::now();
    for (int64_t i = 0; i < n; ++i) {
      if (!reference()) return false;
    }
    totals->add(t0, n);
    return true;
  };

  // Warm up both (first calls capture graphs, fault in pages) and size the
  // block from a short calibration, so the loop never reads a clock per call.
  for (int i = 0; i < 3; ++i) {
    if (!subject() || !reference()) return fail(state, *error);
  }
  Totals calibration;
  const Stamp c0 = Stamp::now();
  for (int i = 0; i < 8; ++i) {
    if (!subject()) return fail(state, *error);
  }
  calibration.add(c0, 8);
  const double est = std::max(1.0, calibration.wall_ns / 8);
  const int64_t block = std::clamp<int64_t>(static_cast<int64_t>(opt.block_ns / est), 1, 16384);

  Totals subj, ref;
  int64_t in_block = 0;
  Stamp t0 = Stamp::now();
  for (auto _ : state) {
    if (!subject()) return fail(state, *error);
    if (++in_block == block) {
      subj.add(t0, in_block);
      in_block = 0;
      state.PauseTiming();
      if (!time_reference(block, &ref)) return fail(state, *error);
      state.ResumeTiming();
      t0 = Stamp::now();
    }
  }
  if (in_block > 0) {  // the last, partial block
    subj.add(t0, in_block);
    if (!time_reference(in_block, &ref)) return fail(state, *error);
  }

  const double scale = opt.unit == Unit::kNs ? 1.0 : 1e-3;
  const std::string u = opt.unit == Unit::kNs ? "ns" : "us";
  const double call = subj.cpu_ns / static_cast<double>(subj.calls) * scale;
  const double floor = ref.cpu_ns / static_cast<double>(ref.calls) * scale;
  state.counters["call_" + u] = call;
  state.counters["floor_" + u] = floor;
  state.counters["overhead_" + u] = call - floor;
  state.counters["ratio"] = floor > 0 ? call / floor : 0.0;
  const double wall_call = subj.wall_ns / static_cast<double>(subj.calls);
  const double wall_floor = ref.wall_ns / static_cast<double>(ref.calls);
  state.counters["wall_ratio"] = wall_floor > 0 ? wall_call / wall_floor : 0.0;
}

}  // namespace aotrun_bench
