#include "weights.hpp"

#include "error.hpp"

namespace aotrun::cli {

void add_weights_options(std::vector<OptionSpec>& specs) {
  specs.push_back({"weights", true, false});
  specs.push_back({"partial-weights", false, false});
}

WeightsOption weights_option(const Args& args) {
  WeightsOption w;
  w.path = args.get("weights");
  w.partial = args.has("partial-weights");
  if (args.has("weights") && w.path.empty()) throw UsageError(args.command(), "--weights needs a file name");
  if (w.partial && w.path.empty()) throw UsageError(args.command(), "--partial-weights needs --weights FILE");
  return w;
}

void apply_weights(aotrun::cxx::Runner& runner, const WeightsOption& weights) {
  if (weights.path.empty()) return;
  const uint32_t flags = weights.partial ? 0u : AOTRUN_CONSTANTS_FULL_UPDATE;
  check(aotrun_runner_update_constants_from_file(runner.get(), weights.path.c_str(), flags), "--weights");
  check(aotrun_runner_swap_constants(runner.get()), "--weights");
  check(aotrun_runner_free_inactive_constants(runner.get()), "--weights");
}

}  // namespace aotrun::cli
