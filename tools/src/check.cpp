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

}  // namespace

int check_main(int argc, char** argv, int begin) {
  auto specs = common_options();
  for (const char* name : {"runs", "num-models", "async-mode", "reference", "rtol", "atol"}) {
    specs.push_back({name, true, false});
  }
  add_input_options(specs);
  specs.push_back({"json", false, false});
  add_weights_options(specs);
  const Args args = Args::parse("check", specs, argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp << input_options_help(22) << kHelpMid << open_options_help(22) << kHelpTail;
    return kExitOk;
  }
  apply_log_option(args);
  const std::string path = args.single_positional("package path (PKG)");
  InputPlan plan = input_plan(args);
  const int runs = static_cast<int>(args.get_int("runs", 3, 1, 1000));
  RunnerConfig base;
  base.num_models = static_cast<int32_t>(args.get_int("num-models", 1, 1, 1024));
  base.weights = weights_option(args);
  base.strict = true;  // a mode that would fall back is skipped, never compared with itself
  const aotrun_mode async_mode = mode_option(args, "async-mode");
  const std::optional<std::string> reference_dir =
      args.has("reference") ? std::optional<std::string>(args.get("reference")) : std::nullopt;
  ToleranceOverride tolerance;
  tolerance.has_rtol = args.has("rtol");
  tolerance.has_atol = args.has("atol");
  tolerance.rtol = args.get_double("rtol", 0, 0, 1e300);
  tolerance.atol = args.get_double("atol", 0, 0, 1e300);
  if (tolerance.any() && !reference_dir) {
    throw UsageError("check", "--rtol and --atol need --reference (modes are compared bit for bit)");
  }

  const Package package = open_package(path, args);
  CheckReport report;
  report.info = package.info();
  report.runs = runs;
  report.reference_dir = reference_dir;
  report.reference_tolerance = tolerance;
  const std::vector<TensorSpec> output_specs = package_outputs(package);
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  plan_for_package(args, package, input_specs, &plan);
  BuiltInputs built = build_inputs(input_specs, plan);
  const std::vector<DLTensor> input_views = aotrun::cli::input_views(built);

  report.inputs = &built;
  report.outputs = output_specs;
  std::vector<HostTensor> reference;
  std::vector<std::string>& reference_files = report.reference_files;
  if (reference_dir) {
    std::vector<std::string> names;
    for (const TensorSpec& spec : output_specs) names.push_back(spec.name);
    for (const std::string& file : tensor_file_names(names)) {
      reference_files.push_back((std::filesystem::path(*reference_dir) / file).string());
    }
    for (size_t i = 0; i < output_specs.size(); ++i) {
      // DIR/<placeholder>.npy, else DIR/<model's name>.npy (e.g. logits.npy).
      if (!std::filesystem::exists(reference_files[i]) && !output_specs[i].model_name.empty()) {
        const std::string named =
            (std::filesystem::path(*reference_dir) / tensor_file_names({output_specs[i].model_name})[0]).string();
        if (std::filesystem::exists(named)) reference_files[i] = named;
      }
      try {
        reference.push_back(read_npy(reference_files[i], output_specs[i].name));
      } catch (const Failure& e) {
        throw Failure(e.code_name(), "--reference for output '" + tensor_label(output_specs[i]) + "': " + e.what());
      }
    }
  }

  const std::vector<ModeCase> cases = {{"threaded", AOTRUN_MODE_THREADED, false},
                                       {"single_threaded", AOTRUN_MODE_SINGLE_THREADED, false},
                                       {"graph", AOTRUN_MODE_GRAPH, false},
                                       {"async", async_mode, true}};
  // Outputs whose sizes the model reads from the inputs' values run only
  // through run_alloc (docs/PT2.md, "Data-dependent sizes"), which is
  // synchronous: the asynchronous case is skipped saying so.
  bool sized_by_run = false;
  if (report.info.format != nullptr && std::string(report.info.format) == "pt2" &&
      report.info.device.device_type == kDLCPU) {
    for (const auto& dims : data_dependent_dims(read_pt2_facts(path).sources, output_specs.size())) {
      sized_by_run |= !dims.empty();
    }
  }
  std::vector<std::vector<HostTensor>> threaded_runs;  // run 1 is the baseline
  for (const ModeCase& mode : cases) {
    ModeResult m;
    m.mode = mode;
    if (mode.async && sized_by_run) {
      m.skipped =
          "an output's size depends on the input values: such a model runs only through run_alloc, "
          "which is synchronous";
      report.modes.push_back(std::move(m));
      continue;
    }
    const char* reason = nullptr;
    if (!package.mode_available(mode.runner_mode, &reason)) {
      const std::string why = reason != nullptr && *reason != '\0' ? reason : "not available";
      // Every package has the thread-safe run; without it there is no baseline.
      if (!mode.async && mode.runner_mode == AOTRUN_MODE_THREADED) {
        throw Failure(AOTRUN_ERR_UNSUPPORTED, "threaded mode, the baseline, is unavailable: " + why);
      }
      m.skipped = why;
      report.modes.push_back(std::move(m));
      continue;
    }
    RunnerConfig config = base;
    config.mode = mode.runner_mode;
    ModeRuns done = run_mode(package, config, mode.async, input_views, output_specs, runs, sized_by_run);
    m.effective = done.effective;
    m.stats = done.stats;
    // Threaded runs after the first are compared with the first; the first
    // itself only with the reference.
    const bool is_baseline = !mode.async && mode.runner_mode == AOTRUN_MODE_THREADED;
    if (is_baseline) threaded_runs = std::move(done.outputs);
    const std::vector<std::vector<HostTensor>>& all = is_baseline ? threaded_runs : done.outputs;
    for (size_t o = 0; o < output_specs.size(); ++o) {
      m.vs_threaded.push_back(judge(all, is_baseline ? 1 : 0, o, threaded_runs.front()[o]));
      if (reference_dir) {
        m.vs_reference.push_back(judge(all, 0, o, reference[o], tolerance.for_dtype(reference[o].dtype())));
      }
    }
    report.modes.push_back(std::move(m));
  }

  tally(report);
  if (args.has("json")) {
    print_check_json(report, std::cout);
  } else {
    print_check_text(report, std::cout);
  }
  std::cout.flush();
  if (report.mismatches != 0) {
    std::string more;
    if (report.mismatches > 1) {
      more = " (and " + std::to_string(report.mismatches - 1) + " more differing comparison" +
             (report.mismatches > 2 ? "s)" : ")");
    }
    throw Failure("MISMATCH", report.first_mismatch + more);
  }
  return kExitOk;
}

}  // namespace aotrun::cli
