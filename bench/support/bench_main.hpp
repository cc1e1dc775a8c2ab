// Shared main() of the Google Benchmark suites. Unlike BENCHMARK_MAIN(), it
// exits non-zero when any benchmark reported an error, so bench_smoke (ctest)
// notices a suite that runs but fails.
#pragma once

#include <exception>
#include <string>

#include <benchmark/benchmark.h>

namespace aotrun_bench {

// Defined by each suite: environment and context it needs, called before the
// benchmarks run (after Google Benchmark parsed its flags).
void setup();

// SkipWithError + remembered for the exit status. Not in timed code paths.
void fail(benchmark::State& state, const std::string& message);

// Runs a benchmark body, turning setup failures (a package not built, a
// runner refused) into a reported error instead of terminating the suite.
template <class Body>
void guarded(benchmark::State& state, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    fail(state, e.what());
  }
}

}  // namespace aotrun_bench
