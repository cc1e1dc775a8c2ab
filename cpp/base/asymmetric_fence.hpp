// Asymmetric fences: the two halves of a store-then-load handshake between a
// side that runs often (a run announcing which constant set it reads) and a
// side that runs rarely (a writer about to free a set).
//
// Each side stores, fences, then loads what the other side stored. With a
// full fence on both sides (a locked instruction on x86) at least one side
// sees the other's store. Here the frequent side's fence is a compiler
// barrier only, and the rare side's makes every running thread of the process
// execute a full barrier (Linux membarrier, private expedited; 4.14 and
// later): the pair still guarantees that one side sees the other's store, as
// in folly's asymmetric fences and liburcu's membarrier flavour.
//
// Thread safety: all three functions may be called from any thread.
#pragma once

#include <atomic>

namespace aotrun {

// Whether asymmetric_heavy_fence() works in this process. The first call
// registers the process for expedited membarriers (once; later calls return
// the remembered answer). False where the kernel (before Linux 4.14) or a
// seccomp filter refuses the system call: callers then use full fences on
// both sides.
bool asymmetric_fences_available() noexcept;

// The frequent side: orders the caller's own accesses for the compiler only.
// Correct only against a peer that issues asymmetric_heavy_fence().
inline void asymmetric_light_fence() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

// The rare side: returns once every thread of the process has executed a full
// memory barrier. Only after asymmetric_fences_available() returned true;
// false if the system call failed (errno says why), which the kernel does not
// do for a registered process.
bool asymmetric_heavy_fence() noexcept;

}  // namespace aotrun
