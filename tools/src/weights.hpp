// `--weights FILE.safetensors` (run, check, bench): new values for a
// package's constants, applied to each runner before it runs, through the
// host API's constant updates (aotrun.h, "Constants (weights)").
#pragma once

#include <string>
#include <vector>

#include <aotrun/aotrun.hpp>

#include "args.hpp"

namespace aotrun::cli {

struct WeightsOption {
  std::string path;      // empty: the package's own weights
  bool partial = false;  // --partial-weights: the file may name only some constants
};

// Adds --weights FILE and --partial-weights to a subcommand's options.
void add_weights_options(std::vector<OptionSpec>& specs);

// Reads them; UsageError for --partial-weights without --weights.
WeightsOption weights_option(const Args& args);

// Updates the runner's constants from the file and swaps them in, then frees
// the package's own set (this runner never goes back to it). Throws Failure
// with the library's code and message (which names the file and constant).
void apply_weights(aotrun::cxx::Runner& runner, const WeightsOption& weights);

}  // namespace aotrun::cli
