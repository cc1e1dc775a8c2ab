// Loops split over the calling thread's OpenMP team only when it pays. A
// `#pragma omp parallel ... if (false)` still goes through libgomp: a team
// of one is set up and torn down, about 0.35-0.4 us on a Zen 4 core, with
// futex calls when the pool's other threads are docked -- as much as a
// small op's whole work. for_range runs a plain loop instead.
//
// For files compiled with -fopenmp (cpp/shim/CMakeLists.txt lists them);
// elsewhere the pragmas are ignored and every loop runs on one thread.
#pragma once

#include <omp.h>

#include <cstdint>

namespace aotrun::shim::kernels {

enum class Schedule {
  kStatic,   // equal runs of indices, one per thread
  kDynamic,  // one index at a time, to whichever thread is free
};

// body(i) for every i in [0, n): in order on the calling thread unless
// `split` is true and the team has more than one thread, else shared over
// the team by `S`. body must not throw out of a split loop (catch inside
// and report after, as the callers do).
template <Schedule S = Schedule::kStatic, typename F>
void for_range(bool split, int64_t n, F&& body) {
  if (!split || n < 2 || omp_get_max_threads() < 2) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  if constexpr (S == Schedule::kStatic) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) body(i);
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; ++i) body(i);
  }
}

}  // namespace aotrun::shim::kernels
