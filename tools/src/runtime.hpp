// The library as the subcommands use it, through the C++ host API
// (aotrun.hpp): opening a package with or without hash checks, a runner from
// command-line settings, and input/output specs copied out of the package.
// aotrun::cxx::Error thrown from here (or from any aotrun::cxx call) is
// reported by main() exactly like a Failure with the library's code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <aotrun/aotrun.hpp>

#include "args.hpp"
#include "weights.hpp"

namespace aotrun::cli {

using Package = aotrun::cxx::Package;
using Runner = aotrun::cxx::Runner;
using ProviderInfo = aotrun::cxx::ProviderInfo;

// Opens `path`; throws aotrun::cxx::Error with the library's code
// (NOT_FOUND, MISSING_SYMBOL, ...) on error.
Package open_package(const std::string& path, bool verify_hashes);
// The same with the command line's package options: --no-verify, and for a
// .pt2 --pad-batch and --above-compiled-max (docs/PT2.md).
Package open_package(const std::string& path, const Args& args);
// The help rows of those .pt2 options, text from `column` on.
std::string open_options_help(size_t column);

struct RunnerConfig {
  aotrun_mode mode = AOTRUN_MODE_THREADED;
  int32_t num_models = 1;
  bool strict = false;
  int32_t max_inflight = 0;  // asynchronous window; 0 = the library's default
  WeightsOption weights;     // --weights: swapped in before the runner is returned
};
Runner create_runner(const Package& package, const RunnerConfig& config);

// Input/output descriptions copied out of the package (the library's strings
// live as long as the package; copies keep the code free of that coupling).
struct TensorSpec {
  std::string name;
  std::string model_name;  // the model's own name where it has one besides `name` (a .pt2's keyword
                           // argument or output key); empty when none
  DLDataType dtype{};
  std::vector<int64_t> shape;  // -1 = dynamic
  bool known = true;           // false: dtype and rank unknown (a .pt2 without input checks)
};
std::vector<TensorSpec> package_inputs(const Package& package);
// "mask (arg5_1)" where the model names the tensor, else "arg5_1".
std::string tensor_label(const TensorSpec& spec);
// The index of the spec called `name` (its name or its model name), or -1.
int find_spec(const std::vector<TensorSpec>& specs, const std::string& name);
std::vector<TensorSpec> package_outputs(const Package& package);

// Whether the package takes its inputs with every dynamic dim at `size`:
// an output-shape query on a runner of its own (made on first use), which
// applies every shape check a run does. A package that cannot answer ahead
// of a run (no output specs) counts as taking it.
std::function<bool(int64_t size)> dynamic_size_probe(const Package& package, const std::vector<TensorSpec>& inputs);

}  // namespace aotrun::cli
