// What batches a package serves, asked of the package itself before
// auto-complete switches dynamic batching on (issue #30 item 5): Triton may
// form any batch from 1 to max_batch_size, and a .pt2 compiled for batch 2
// and up (torch's 0/1 specialisation) refuses a lone request unless it is
// opened with pad_batch. The answer comes from output-shape queries, which
// apply every check a run does (aotrun_runner_get_output_shapes).
#pragma once

#include <aotrun/aotrun.hpp>

#include <cstdint>
#include <string>

#include "specs.hpp"

namespace aotrun_triton {

struct ServedBatches {
  int32_t max = 0;     // the largest batch in 1..want served together with batch 1; 0: batch 1 refused
  std::string reason;  // why batching is off or smaller than asked, for the log ("" when max == want)
};

// Queries batch 1 and the sizes up to `want` (other dynamic dims at 2, the
// smallest size torch compiles any dynamic dim for). Needs the package's
// specs known and batchable.
ServedBatches served_batches(const aotrun::cxx::Package& package, const PackageSpecs& specs, int32_t want);

}  // namespace aotrun_triton
