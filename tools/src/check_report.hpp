// The results of `aotrun check` and how they are reported (text or JSON).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <aotrun/aotrun.h>

#include "compare.hpp"
#include "runtime.hpp"
#include "inputs.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

// One mode of the check: which runner mode, and whether runs are asynchronous.
struct ModeCase {
  std::string label;  // "threaded", "single_threaded", "graph", "async"
  aotrun_mode runner_mode;
  bool async;
};

// One output of one mode compared with one baseline over every run. A run
// mismatches when it is outside the tolerance (bit for bit when exact).
struct Verdict {
  size_t runs = 0;
  size_t mismatched_runs = 0;
  size_t first_run = 0;       // 0-based; valid when mismatched_runs > 0
  Comparison first;           // the first mismatching run's comparison
  Tolerance tolerance;        // what the runs were held to
  bool all_identical = true;  // every run bit for bit equal to the baseline
  double max_abs_diff = 0;    // over every run's numeric elements
};

struct ModeResult {
  ModeCase mode;
  std::optional<std::string> skipped;  // the reason, when skipped
  aotrun_mode effective = AOTRUN_MODE_THREADED;
  aotrun_runner_stats stats{};
  std::vector<Verdict> vs_threaded;   // per output
  std::vector<Verdict> vs_reference;  // per output; empty without --reference
};

// Compares runs[from..] of output `output` with `baseline`, bit for bit
// unless a tolerance is given.
Verdict judge(const std::vector<std::vector<HostTensor>>& runs, size_t from, size_t output, const HostTensor& baseline,
              const Tolerance& tolerance = Tolerance{});

struct CheckReport {
  aotrun_package_info info{};
  const BuiltInputs* inputs = nullptr;
  int runs = 0;
  std::optional<std::string> reference_dir;
  std::vector<std::string> reference_files;  // per output, with --reference
  ToleranceOverride reference_tolerance;     // --rtol / --atol
  std::vector<TensorSpec> outputs;
  std::vector<ModeResult> modes;
  size_t compared = 0;         // modes not skipped
  size_t mismatches = 0;       // differing (mode, output, baseline) comparisons
  size_t inexact = 0;          // comparisons within tolerance but not bit for bit
  std::string first_mismatch;  // one line naming the first of them
};

// Fills compared, mismatches and first_mismatch from the modes.
void tally(CheckReport& report);

void print_check_text(const CheckReport& report, std::ostream& out);
void print_check_json(const CheckReport& report, std::ostream& out);

}  // namespace aotrun::cli
