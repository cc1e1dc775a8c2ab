// The cheapest host services a CPU package can be given: every launch runs at
// once on the calling thread, events are always complete, nothing is counted
// or locked. Containers created with it are the benchmarks' "direct call"
// floor: whatever the runner adds on top of this is aotrun's overhead.
#pragma once

#include <aotrun/package_abi.h>

namespace aotrun_bench {

// The table is static and stateless: it is valid for the whole process and
// any thread may use it. Messages at WARN or above go to stderr.
const aotrun_pkg_host* inline_host();

}  // namespace aotrun_bench
