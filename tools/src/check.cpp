// `aotrun check`: the same inputs through every mode the package can run,
// outputs compared bit for bit with the threaded mode (and optionally with
// .npy files saved earlier, within a tolerance).
#include <filesystem>
#include <iostream>
#include <optional>

#include "check_report.hpp"
#include "check_runs.hpp"
#include "pt2_facts.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "runtime.hpp"
#include "inputs.hpp"
#include "npy.hpp"
#include "tensor_files.hpp"

namespace aotrun::cli {

namespace {

const char kHelp[] =
    "Usage: aotrun check [OPTIONS] PKG\n"
    "\n"
    "Run the same inputs through every mode PKG can run natively (threaded,\n"
    "single_threaded, graph, async) and compare every run's outputs bit for bit\n"
    "with the first threaded run. Each mode runs RUNS times on its own runner,\n"
    "so graph mode compares replays, not only its eager warm-up; async submits\n"
    "all its runs before waiting for any. Modes the package would only reach\n"
    "through a fallback are skipped with the library's reason.\n"
    "\n"
    "Options:\n";

// (the input options: input_options_help)
const char kHelpMid[] =
    "  --runs R            runs per mode (default 3: graph warm-up, capture, replay)\n"
    "  --num-models N      model instances per runner (default 1)\n"
    "  --async-mode MODE   runner mode under async (default threaded)\n"
    "  --reference DIR     also compare every run with DIR/<output>.npy (the\n"
    "                      output's name, or the model's own name for it such\n"
    "                      as logits.npy), e.g. files written by 'aotrun run\n"
    "                      --output-dir DIR', or eager PyTorch outputs, within a\n"
    "                      tolerance (below)\n"
    "  --rtol R, --atol A  tolerance against --reference: |got - expected| <=\n"
    "                      A + R * |expected| per element. Default: PyTorch's\n"
    "                      torch.testing.assert_close per dtype (float32 rtol\n"
    "                      1.3e-6 atol 1e-5, float64 1e-7/1e-7, float16 1e-3/1e-5,\n"
    "                      bfloat16 1.6e-2/1e-5, integers and bool exact).\n"
    "                      --rtol 0 --atol 0 compares bit for bit\n"
    "  --weights FILE      every runner uses the constants (weights) of this\n"
    "                      .safetensors file (see 'aotrun run --help')\n"
    "  --partial-weights   --weights FILE may name only some constants\n"
    "  --json              print one JSON object instead of text\n"
    "  --no-verify         skip checking the manifest's sha256 hashes\n";

// (the .pt2 open options: open_options_help)
const char kHelpTail[] =
    "  --log LEVEL         library log level: error, warn, info, debug, off\n"
    "  -h, --help          show this help\n"
    "\n"
    "Modes are always compared with each other bit for bit.\n"
    "\n"
    "Exit status: 0 every compared mode is identical (and every reference\n"
    "comparison within its tolerance), 1 an output differs\n"
    "(\"aotrun: MISMATCH: ...\", after the report) or the package, runtime or a\n"
    "file failed, 2 usage error.\n";

std::vector<OptionSpec> check_options() {
  auto specs = common_options();
  for (const char* name : {"runs", "num-models", "async-mode", "reference", "rtol", "atol"}) {
    specs.push_back({name, true, false});
  }
  add_input_options(specs);
  specs.push_back({"json", false, false});
  add_weights_options(specs);
  return specs;
}

// How every mode runs and what it is compared with, from the command line.
struct CheckSettings {
  int runs = 3;
  RunnerConfig base;  // every mode's runner, but for the mode
  aotrun_mode async_mode = AOTRUN_MODE_THREADED;
  std::optional<std::string> reference_dir;
  ToleranceOverride tolerance;  // against the references
};

CheckSettings check_settings(const Args& args) {
  CheckSettings c;
  c.runs = static_cast<int>(args.get_int("runs", 3, 1, 1000));
  c.base.num_models = static_cast<int32_t>(args.get_int("num-models", 1, 1, 1024));
  c.base.weights = weights_option(args);
  c.base.strict = true;  // a mode that would fall back is skipped, never compared with itself
  c.async_mode = mode_option(args, "async-mode");
  c.reference_dir = args.has("reference") ? std::optional<std::string>(args.get("reference")) : std::nullopt;
  c.tolerance.has_rtol = args.has("rtol");
  c.tolerance.has_atol = args.has("atol");
  c.tolerance.rtol = args.get_double("rtol", 0, 0, 1e300);
  c.tolerance.atol = args.get_double("atol", 0, 0, 1e300);
  if (c.tolerance.any() && !c.reference_dir) {
    throw UsageError("check", "--rtol and --atol need --reference (modes are compared bit for bit)");
  }
  return c;
}

// The reference outputs in `dir`, one per output; *files: where each was
// read from.
std::vector<HostTensor> read_references(const std::string& dir, const std::vector<TensorSpec>& output_specs,
                                        std::vector<std::string>* files) {
  std::vector<HostTensor> reference;
  std::vector<std::string>& reference_files = *files;
  std::vector<std::string> names;
  for (const TensorSpec& spec : output_specs) names.push_back(spec.name);
  for (const std::string& file : tensor_file_names(names)) {
    reference_files.push_back((std::filesystem::path(dir) / file).string());
  }
  for (size_t i = 0; i < output_specs.size(); ++i) {
    // DIR/<placeholder>.npy, else DIR/<model's name>.npy (e.g. logits.npy).
    if (!std::filesystem::exists(reference_files[i]) && !output_specs[i].model_name.empty()) {
      const std::string named =
          (std::filesystem::path(dir) / tensor_file_names({output_specs[i].model_name})[0]).string();
      if (std::filesystem::exists(named)) reference_files[i] = named;
    }
    try {
      reference.push_back(read_npy(reference_files[i], output_specs[i].name));
    } catch (const Failure& e) {
      throw Failure(e.code_name(), "--reference for output '" + tensor_label(output_specs[i]) + "': " + e.what());
    }
  }
  return reference;
}

// Outputs whose sizes the model reads from the inputs' values run only
// through run_alloc (docs/PT2.md, "Data-dependent sizes"), which is
// synchronous: the asynchronous case is skipped saying so.
bool outputs_sized_by_run(const aotrun_package_info& info, const std::string& path, size_t num_outputs) {
  bool sized = false;
  if (info.format != nullptr && std::string(info.format) == "pt2" && info.device.device_type == kDLCPU) {
    for (const auto& dims : data_dependent_dims(read_pt2_facts(path).sources, num_outputs)) {
      sized |= !dims.empty();
    }
  }
  return sized;
}

// What one mode's runs are compared with.
struct Baselines {
  std::vector<std::vector<HostTensor>> threaded_runs;  // run 1 is the baseline
  const std::vector<HostTensor>& reference;            // empty without --reference
};

// One mode: skipped (with the reason), or run and each output judged.
// Throws when the threaded mode, the baseline, is unavailable.
ModeResult check_mode(const Package& package, const ModeCase& mode, const CheckSettings& settings,
                      const std::vector<DLTensor>& input_views, const std::vector<TensorSpec>& output_specs,
                      bool sized_by_run, Baselines& baselines) {
  ModeResult m;
  m.mode = mode;
  if (mode.async && sized_by_run) {
    m.skipped =
        "an output's size depends on the input values: such a model runs only through run_alloc, "
        "which is synchronous";
    return m;
  }
  const char* reason = nullptr;
  if (!package.mode_available(mode.runner_mode, &reason)) {
    const std::string why = reason != nullptr && *reason != '\0' ? reason : "not available";
    // Every package has the thread-safe run; without it there is no baseline.
    if (!mode.async && mode.runner_mode == AOTRUN_MODE_THREADED) {
      throw Failure(AOTRUN_ERR_UNSUPPORTED, "threaded mode, the baseline, is unavailable: " + why);
    }
    m.skipped = why;
    return m;
  }
  RunnerConfig config = settings.base;
  config.mode = mode.runner_mode;
  ModeRuns done = run_mode(package, config, mode.async, input_views, output_specs, settings.runs, sized_by_run);
  m.effective = done.effective;
  m.stats = done.stats;
  // Threaded runs after the first are compared with the first; the first
  // itself only with the reference.
  std::vector<std::vector<HostTensor>>& threaded_runs = baselines.threaded_runs;
  const bool is_baseline = !mode.async && mode.runner_mode == AOTRUN_MODE_THREADED;
  if (is_baseline) threaded_runs = std::move(done.outputs);
  const std::vector<std::vector<HostTensor>>& all = is_baseline ? threaded_runs : done.outputs;
  for (size_t o = 0; o < output_specs.size(); ++o) {
    m.vs_threaded.push_back(judge(all, is_baseline ? 1 : 0, o, threaded_runs.front()[o]));
    if (settings.reference_dir) {
      const HostTensor& reference = baselines.reference[o];
      m.vs_reference.push_back(judge(all, 0, o, reference, settings.tolerance.for_dtype(reference.dtype())));
    }
  }
  return m;
}

// MISMATCH, naming the first differing comparison, when any differs.
void check_mismatches(const CheckReport& report) {
  if (report.mismatches != 0) {
    std::string more;
    if (report.mismatches > 1) {
      more = " (and " + std::to_string(report.mismatches - 1) + " more differing comparison" +
             (report.mismatches > 2 ? "s)" : ")");
    }
    throw Failure("MISMATCH", report.first_mismatch + more);
  }
}

}  // namespace

int check_main(int argc, char** argv, int begin) {
  const Args args = Args::parse("check", check_options(), argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp << input_options_help(22) << kHelpMid << open_options_help(22) << kHelpTail;
    return kExitOk;
  }
  apply_log_option(args);
  const std::string path = args.single_positional("package path (PKG)");
  InputPlan plan = input_plan(args);
  const CheckSettings settings = check_settings(args);

  const Package package = open_package(path, args);
  CheckReport report;
  report.info = package.info();
  report.runs = settings.runs;
  report.reference_dir = settings.reference_dir;
  report.reference_tolerance = settings.tolerance;
  const std::vector<TensorSpec> output_specs = package_outputs(package);
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  plan_for_package(args, package, input_specs, &plan);
  BuiltInputs built = build_inputs(input_specs, plan);
  const std::vector<DLTensor> input_views = aotrun::cli::input_views(built);

  report.inputs = &built;
  report.outputs = output_specs;
  const std::vector<HostTensor> reference =
      settings.reference_dir ? read_references(*settings.reference_dir, output_specs, &report.reference_files)
                             : std::vector<HostTensor>();

  const std::vector<ModeCase> cases = {{"threaded", AOTRUN_MODE_THREADED, false},
                                       {"single_threaded", AOTRUN_MODE_SINGLE_THREADED, false},
                                       {"graph", AOTRUN_MODE_GRAPH, false},
                                       {"async", settings.async_mode, true}};
  const bool sized = outputs_sized_by_run(report.info, path, output_specs.size());
  Baselines baselines{{}, reference};
  for (const ModeCase& mode : cases) {
    report.modes.push_back(check_mode(package, mode, settings, input_views, output_specs, sized, baselines));
  }

  tally(report);
  if (args.has("json")) {
    print_check_json(report, std::cout);
  } else {
    print_check_text(report, std::cout);
  }
  std::cout.flush();
  check_mismatches(report);
  return kExitOk;
}

}  // namespace aotrun::cli
