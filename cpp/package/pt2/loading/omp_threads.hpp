// How many OpenMP threads a CPU .pt2 run uses. The model's own kernels
// (Inductor's `#pragma omp parallel` loops) and aotrun's shim (oneDNN) form
// one OpenMP team per calling thread, of omp_get_max_threads() threads: the
// machine's cores unless OMP_NUM_THREADS says otherwise. A runner with N
// model instances runs up to N calls at once, so N teams of all cores would
// put N times more threads than cores to work. Each run therefore sets its
// calling thread's team size to cores / N (at least 1) first, unless the
// process has OMP_NUM_THREADS set (then the user's number stands).
#pragma once

#include <cstddef>

namespace aotrun::pt2 {

// Threads per run for a container of `instances` model instances: the CPUs
// this process may run on (its affinity mask) divided by `instances`, at
// least 1; 0 when OMP_NUM_THREADS is set (leave the threads alone).
int omp_threads_per_run(size_t instances);

// For a scope (one run): the calling thread's OpenMP team size for its
// parallel regions is `threads` (omp_set_num_threads of the libgomp the
// model and the shim loaded), and what it was before afterwards, so a
// caller's own OpenMP code keeps its setting. Nothing when `threads` is 0 or
// no libgomp is loaded in the process.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads);
  ~OmpThreadsScope();
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int previous_ = 0;  // 0: nothing to restore
};

}  // namespace aotrun::pt2
