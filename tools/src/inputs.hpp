// Building a package's input tensors from --input files or random data.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "input_layouts.hpp"
#include "runtime.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

struct InputPlan {
  std::map<std::string, std::string> files;  // input name (or model name) -> .npy path
  std::optional<int64_t> batch;              // --batch, if given: the dynamic dims at dim 0
  bool batch_all_dims = false;               // --batch sets every dynamic dim (compat's "batch")
  std::map<std::string, int64_t> dims;       // --dim NAME=SIZE (dims.hpp)
  uint64_t seed = 0;
  // Dims neither set nor fixed by a file: the first of 1 and 2 the package
  // takes for its dynamic dims (a model exported with a dynamic dim is
  // compiled for 2 and up); none set: 1.
  std::function<bool(int64_t)> accepts;
  // What a .pt2 says of its inputs (add_model_facts): its C++ (the dims'
  // symbols) and, per input, the layout it was compiled for (empty with
  // --layout row-major, or for an archive that states none).
  std::string pt2_sources;
  std::vector<InputLayout> layouts;
};

// The options every command that builds inputs takes: --input, --batch,
// --dim, --seed, --layout.
void add_input_options(std::vector<OptionSpec>& specs);
// Their help rows, text from `column` on.
std::string input_options_help(size_t column);
// The plan those options give (UsageError for malformed values).
InputPlan input_plan(const Args& args);
// Completes `plan` for `package`: the default-size probe, and what a .pt2
// says of its inputs (add_model_facts, the layouts unless --layout row-major).
void plan_for_package(const Args& args, const Package& package, const std::vector<TensorSpec>& specs, InputPlan* plan);

// Fills plan->pt2_sources and, unless `row_major`, plan->layouts from the
// archive of a .pt2 package (nothing for other packages).
void add_model_facts(const Package& package, const std::vector<TensorSpec>& specs, bool row_major, InputPlan* plan);

// Parses "name=file.npy" values of --input. UsageError for a malformed value
// or a name given twice (`command` names the subcommand for the message).
std::map<std::string, std::string> parse_input_options(const std::string& command,
                                                       const std::vector<std::string>& values);

struct BuiltInputs {
  std::vector<HostTensor> tensors;   // in the package's input order, row-major
  std::vector<std::string> sources;  // "file x.npy" or "random (seed S)"
  int64_t batch = 1;                 // the size of the dims at dim 0 (else the default)
  // Each dynamic dim and its size ("s0", 2), and whether it is at dim 0.
  struct Dim {
    std::string name;
    int64_t size;
    bool leading;
    std::string where;  // "input_ids dim 0, attention_mask dim 0"
  };
  std::vector<Dim> dims;
  // Per input: a copy in the layout the model was compiled for (a .pt2
  // compiled for channels_last), passed instead of `tensors` when set.
  std::vector<HostTensor> laid_out;
  std::vector<std::string> layout_names;  // "channels_last", or "" (row-major)
};

// "batch 3", "s0=2, s1=16 (...)", "static shapes": what was set.
std::string dims_text(const BuiltInputs& built);

// Loads or generates every input of `specs`. Files are checked against the
// spec (dtype, rank, static dimensions) so a mismatch names the file.
// Each dynamic dim (dims.hpp) of generated inputs gets its --dim size, else
// --batch for dims at dim 0, else the size a file gives it, else the
// default of `plan.accepts`.
// Throws Failure: INVALID_ARGUMENT (unknown input or dim name, mismatch),
// NOT_FOUND, UNSUPPORTED (dtype that cannot be generated).
BuiltInputs build_inputs(const std::vector<TensorSpec>& specs, const InputPlan& plan);

// DLTensor views of `tensors` (valid while the tensors live).
std::vector<DLTensor> views(std::vector<HostTensor>& tensors);
// The views a run takes: each input in its compiled layout where one was
// made, else as built.
std::vector<DLTensor> input_views(BuiltInputs& built);

}  // namespace aotrun::cli
