// The OpenMP threads a CPU .pt2 run uses (package/pt2/loading/omp_threads):
// the process's CPUs shared among a container's model instances, unless
// OMP_NUM_THREADS is set; the caller's own setting is back after the run.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <cstdlib>
#include <string>

#include "package/pt2/loading/omp_threads.hpp"

namespace {

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

// OMP_NUM_THREADS unset (or set to `value`) for a scope.
class OmpEnv {
 public:
  explicit OmpEnv(const char* value) {
    if (const char* v = std::getenv("OMP_NUM_THREADS")) saved_ = v, had_ = true;
    if (value != nullptr) {
      setenv("OMP_NUM_THREADS", value, 1);
    } else {
      unsetenv("OMP_NUM_THREADS");
    }
  }
  ~OmpEnv() {
    if (had_) {
      setenv("OMP_NUM_THREADS", saved_.c_str(), 1);
    } else {
      unsetenv("OMP_NUM_THREADS");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(OmpThreads, TheCpusAreSharedAmongTheInstances) {
  OmpEnv env(nullptr);
  const int cpus = affinity_cpus();
  EXPECT_EQ(aotrun::pt2::omp_threads_per_run(1), cpus);
  EXPECT_EQ(aotrun::pt2::omp_threads_per_run(2), std::max(1, cpus / 2));
  EXPECT_EQ(aotrun::pt2::omp_threads_per_run(0), cpus);   // no instances given: one
  EXPECT_EQ(aotrun::pt2::omp_threads_per_run(10000), 1);  // never below one thread
}

TEST(OmpThreads, OmpNumThreadsSetLeavesThemAlone) {
  OmpEnv env("3");
  EXPECT_EQ(aotrun::pt2::omp_threads_per_run(1), 0);
  EXPECT_EQ(aotrun::pt2::omp_threads_per_run(4), 0);
}

TEST(OmpThreads, ARunUsesItsShareAndTheCallersSettingComesBack) {
  omp_set_num_threads(5);  // the caller's own choice for its OpenMP code
  {
    aotrun::pt2::OmpThreadsScope run(2);
    EXPECT_EQ(omp_get_max_threads(), 2);
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
      team = omp_get_num_threads();
    }
    EXPECT_LE(team, 2);
  }
  EXPECT_EQ(omp_get_max_threads(), 5);
  {
    aotrun::pt2::OmpThreadsScope untouched(0);  // OMP_NUM_THREADS was set, or a CUDA model
    EXPECT_EQ(omp_get_max_threads(), 5);
  }
  EXPECT_EQ(omp_get_max_threads(), 5);
}

}  // namespace
