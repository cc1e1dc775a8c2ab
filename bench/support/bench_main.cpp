#include "bench_main.hpp"

#include <atomic>
#include <cstdio>

#include <aotrun/aotrun.h>

#include "aotrun_util.hpp"

namespace aotrun_bench {
namespace {
std::atomic<int> g_failures{0};
}  // namespace

void fail(benchmark::State& state, const std::string& message) {
  ++g_failures;
  std::fprintf(stderr, "benchmark error: %s\n", message.c_str());
  state.SkipWithError(message.c_str());
}

}  // namespace aotrun_bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("aotrun_version", aotrun_version_string());
  benchmark::AddCustomContext("aotrun_packages", aotrun_bench::packages_dir());
  aotrun_bench::setup();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const int failures = aotrun_bench::g_failures.load();
  if (failures != 0) std::fprintf(stderr, "%d benchmark(s) failed\n", failures);
  return failures == 0 ? 0 : 1;
}
