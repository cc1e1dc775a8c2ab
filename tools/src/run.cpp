// `aotrun run`: one run of a package on given or random inputs.
#include <chrono>
#include <cstdint>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "describe.hpp"
#include "error.hpp"
#include "runtime.hpp"
#include "inputs.hpp"
#include "npy.hpp"
#include "outputs.hpp"
#include "report.hpp"
#include "table.hpp"
#include "tensor_files.hpp"
#include "weights.hpp"

namespace aotrun::cli {

namespace {

const char kHelp[] =
    "Usage: aotrun run [OPTIONS] PKG\n"
    "\n"
    "Run the package PKG once and summarise its outputs (shape, dtype, min, max,\n"
    "mean, first values). Inputs not given with --input are random with a fixed\n"
    "seed: floats uniform in [-1, 1), integers in [0, 10). Dynamic dims get their\n"
    "--dim size, --batch at dim 0, or the size an --input file gives them.\n"
    "\n"
    "Options:\n"
    "  --mode MODE           threaded (default), single_threaded or graph\n"
    "  --strict              fail with UNSUPPORTED instead of falling back when\n"
    "                        the package cannot run MODE natively\n";

// (the input options: input_options_help)
const char kHelpMid[] =
    "  --num-models N        model instances in the runner (default 1)\n"
    "  --weights FILE        run with the constants (weights) of a .safetensors\n"
    "                        file instead of the package's: the runner's constants\n"
    "                        are updated from it and swapped in before the run;\n"
    "                        it must name every constant that can be updated\n"
    "  --partial-weights     --weights FILE may name only some constants\n"
    "  --output-dir DIR      write each output to DIR/<name>.npy\n"
    "  --save-inputs DIR     write the inputs used to DIR/<name>.npy\n"
    "  --values N            first values shown per output (default 6)\n"
    "  --json                print one JSON object instead of text\n"
    "  --no-verify           skip checking the manifest's sha256 hashes\n";

// (the .pt2 open options: open_options_help)
const char kHelpTail[] =
    "  --log LEVEL           library log level: error, warn, info, debug, off\n"
    "  -h, --help            show this help\n"
    "\n"
    "Exit status: 0 success, 1 the package, runtime or a file failed, 2 usage error.\n";

bool integral(DLDataType dtype) { return dtype.code == kDLInt || dtype.code == kDLUInt; }

std::vector<double> first_values(const HostTensor& t, size_t count) {
  std::vector<double> values;
  if (!dtype_supported(t.dtype())) return values;
  for (size_t i = 0; i < t.numel() && i < count; ++i) values.push_back(t.element(i));
  return values;
}

std::string complex_text(std::complex<double> z) {
  return cli::complex_text(number_text(z.real(), false), number_text(z.imag(), false));
}

// A complex output's row: MIN and MAX of the modulus ("|z| 0.5"), the mean
// and the first values as a+bj.
void add_complex_summary(std::vector<std::string>& row, const HostTensor& t, size_t values) {
  const ComplexSummary s = summarize_complex(t);
  row.push_back(s.counted ? "|z| " + number_text(s.abs_min, false) : "-");
  row.push_back(s.counted ? "|z| " + number_text(s.abs_max, false) : "-");
  row.push_back(s.counted ? complex_text(s.mean) : "-");
  std::string first;
  for (size_t k = 0; k < t.numel() && k < values; ++k)
    first += (first.empty() ? "" : " ") + complex_text(t.complex_element(k));
  if (t.numel() > values) first += " ...";
  if (t.numel() == 0) first = "(empty)";
  if (s.nan_count) first += "  (" + std::to_string(s.nan_count) + " NaN)";
  row.push_back(first);
}

struct RunReport {
  aotrun_package_info info{};
  aotrun_runner_stats stats{};
  aotrun_mode effective = AOTRUN_MODE_THREADED;
  double run_ns = 0;
  int64_t batch = 1;
  std::vector<std::string> input_sources;
  std::vector<std::string> input_files;   // written with --save-inputs
  std::vector<std::string> output_files;  // written with --output-dir
  std::string weights;                    // --weights FILE, or empty
  std::vector<BuiltInputs::Dim> dims;     // each dynamic dim and its size
  std::vector<TensorSpec> input_specs;    // the package's, for the model's own names
  std::vector<TensorSpec> output_specs;
};

// The spec's label ("mask (arg5_1)") where the package describes the
// tensor, else the tensor's own name.
std::string label_of(const std::vector<TensorSpec>& specs, size_t i, const HostTensor& t) {
  return i < specs.size() ? tensor_label(specs[i]) : t.name();
}

std::string model_name_of(const std::vector<TensorSpec>& specs, size_t i, const HostTensor& t) {
  return i < specs.size() && !specs[i].model_name.empty() ? specs[i].model_name : t.name();
}

void print_text(const RunReport& r, const std::vector<HostTensor>& inputs, const std::vector<HostTensor>& outputs,
                size_t values, std::ostream& out) {
  Table head;
  head.add({"package", package_line(r.info)});
  std::string mode = aotrun_mode_name(r.effective);
  if (r.stats.requested_mode != r.effective) {
    mode += std::string(" (requested ") + aotrun_mode_name(r.stats.requested_mode) +
            "; fallback: " + (r.stats.fallback_reason != nullptr ? r.stats.fallback_reason : "") + ")";
  }
  head.add({"mode", mode});
  if (!r.weights.empty()) head.add({"weights", r.weights});
  if (!r.dims.empty()) {
    std::string dims;
    for (const BuiltInputs::Dim& d : r.dims) dims += (dims.empty() ? "" : ", ") + d.name + "=" + std::to_string(d.size);
    head.add({"dims", dims});
  }
  head.add({"run", duration_text(r.run_ns)});
  head.print(out);

  out << "\ninputs\n";
  Table in_table(2);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::string> row = {label_of(r.input_specs, i, inputs[i]), dtype_name(inputs[i].dtype()),
                                    shape_text(inputs[i].shape()), r.input_sources[i]};
    if (i < r.input_files.size()) row.push_back("-> " + r.input_files[i]);
    in_table.add(std::move(row));
  }
  in_table.print(out);

  out << "\noutputs\n";
  Table out_table(2);
  out_table.add({"NAME", "DTYPE", "SHAPE", "MIN", "MAX", "MEAN", "FIRST VALUES"});
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor& t = outputs[i];
    std::vector<std::string> row = {label_of(r.output_specs, i, t), dtype_name(t.dtype()), shape_text(t.shape())};
    if (is_complex_dtype(t.dtype())) {
      add_complex_summary(row, t, values);
    } else if (!dtype_supported(t.dtype())) {
      row.push_back("(no summary for " + dtype_name(t.dtype()) + ")");
    } else {
      const Summary s = summarize(t);
      const bool ints = integral(t.dtype());
      row.push_back(s.counted ? number_text(s.min, ints) : "-");
      row.push_back(s.counted ? number_text(s.max, ints) : "-");
      row.push_back(s.counted ? number_text(s.mean, false) : "-");
      std::string first;
      for (double v : first_values(t, values)) first += (first.empty() ? "" : " ") + number_text(v, ints);
      if (t.numel() > values) first += " ...";
      if (t.numel() == 0) first = "(empty)";
      if (s.nan_count) first += "  (" + std::to_string(s.nan_count) + " NaN)";
      row.push_back(first);
    }
    out_table.add(std::move(row));
  }
  out_table.print(out);
  for (const std::string& path : r.output_files) out << "wrote " << path << '\n';
}

nlohmann::ordered_json to_json(const RunReport& r, const std::vector<HostTensor>& inputs,
                               const std::vector<HostTensor>& outputs, size_t values) {
  nlohmann::ordered_json j;
  j["package"] = {{"name", r.info.name != nullptr ? r.info.name : ""},
                  {"format", r.info.format != nullptr ? r.info.format : ""},
                  {"abi_version", abi_version_string(r.info.abi_version)},
                  {"device", device_type_name(r.info.device.device_type)}};
  j["load_ns"] = load_ns_json(r.info);
  j["mode"] = aotrun_mode_name(r.effective);
  j["weights"] = r.weights.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.weights);
  j["stats"] = stats_json(r.stats);
  j["run_ns"] = r.run_ns;
  j["batch"] = r.batch;
  nlohmann::ordered_json dims = nlohmann::ordered_json::array();
  for (const BuiltInputs::Dim& d : r.dims) {
    dims.push_back({{"name", d.name}, {"size", d.size}, {"at_dim_0", d.leading}, {"where", d.where}});
  }
  j["dims"] = dims;
  nlohmann::ordered_json in = nlohmann::ordered_json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    nlohmann::ordered_json e = {{"name", inputs[i].name()},
                                {"model_name", model_name_of(r.input_specs, i, inputs[i])},
                                {"dtype", dtype_name(inputs[i].dtype())},
                                {"shape", inputs[i].shape()},
                                {"source", r.input_sources[i]}};
    if (i < r.input_files.size()) e["file"] = r.input_files[i];
    in.push_back(e);
  }
  j["inputs"] = in;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor& t = outputs[i];
    nlohmann::ordered_json e = {{"name", t.name()},
                                {"model_name", model_name_of(r.output_specs, i, t)},
                                {"dtype", dtype_name(t.dtype())},
                                {"shape", t.shape()}};
    if (is_complex_dtype(t.dtype())) {  // complex numbers as [real, imaginary]
      const ComplexSummary s = summarize_complex(t);
      e["abs_min"] = s.abs_min;
      e["abs_max"] = s.abs_max;
      e["mean"] = {s.mean.real(), s.mean.imag()};
      e["nan_count"] = s.nan_count;
      nlohmann::ordered_json first = nlohmann::ordered_json::array();
      for (size_t k = 0; k < t.numel() && k < values; ++k) {
        const std::complex<double> z = t.complex_element(k);
        first.push_back({z.real(), z.imag()});
      }
      e["first_values"] = first;
    } else if (dtype_supported(t.dtype())) {
      const Summary s = summarize(t);
      e["min"] = s.min;
      e["max"] = s.max;
      e["mean"] = s.mean;
      e["nan_count"] = s.nan_count;
      e["first_values"] = first_values(t, values);
    }
    if (i < r.output_files.size()) e["file"] = r.output_files[i];
    out.push_back(e);
  }
  j["outputs"] = out;
  return j;
}

}  // namespace

int run_main(int argc, char** argv, int begin) {
  auto specs = common_options();
  for (const char* name : {"mode", "num-models", "output-dir", "save-inputs", "values"}) {
    specs.push_back({name, true, false});
  }
  add_input_options(specs);
  specs.push_back({"strict", false, false});
  specs.push_back({"json", false, false});
  add_weights_options(specs);
  const Args args = Args::parse("run", specs, argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp << input_options_help(24) << kHelpMid << open_options_help(24) << kHelpTail;
    return kExitOk;
  }
  apply_log_option(args);
  const std::string path = args.single_positional("package path (PKG)");
  RunnerConfig config;
  config.mode = mode_option(args);
  config.strict = args.has("strict");
  config.num_models = static_cast<int32_t>(args.get_int("num-models", 1, 1, 1024));
  config.weights = weights_option(args);
  InputPlan plan = input_plan(args);
  const size_t values = static_cast<size_t>(args.get_int("values", 6, 0, 1000000));

  const Package package = open_package(path, args);
  RunReport report;
  report.info = package.info();
  report.weights = config.weights.path;
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  const std::vector<TensorSpec> output_specs = package_outputs(package);
  report.input_specs = input_specs;
  report.output_specs = output_specs;
  plan_for_package(args, package, input_specs, &plan);
  BuiltInputs built = build_inputs(input_specs, plan);
  report.batch = built.batch;
  report.dims = built.dims;
  report.input_sources = built.sources;
  std::vector<DLTensor> input_views = aotrun::cli::input_views(built);

  Runner runner = create_runner(package, config);
  const std::string what = "running '" + std::string(report.info.name != nullptr ? report.info.name : path) + "'";
  std::vector<HostTensor> outputs;
  auto start = std::chrono::steady_clock::now();
  if (report.info.device.device_type == kDLCPU) {
    // aotrun allocates the outputs: a model whose output sizes depend on the
    // input values runs too (no shape query can size those beforehand).
    outputs = run_allocating(runner.get(), input_views, output_specs, what);
  } else {
    outputs = allocate_outputs(runner.get(), input_views, output_specs);
    std::vector<DLTensor> output_views = views(outputs);
    start = std::chrono::steady_clock::now();
    check(aotrun_runner_run(runner.get(), input_views.data(), input_views.size(), output_views.data(),
                            output_views.size()),
          what);
  }
  report.run_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  report.effective = runner.mode();
  report.stats = runner.stats();

  if (args.has("save-inputs")) report.input_files = write_tensors(args.get("save-inputs"), built.tensors);
  if (args.has("output-dir")) report.output_files = write_tensors(args.get("output-dir"), outputs);

  if (args.has("json")) {
    std::cout << to_json(report, built.tensors, outputs, values).dump(2) << '\n';
  } else {
    print_text(report, built.tensors, outputs, values, std::cout);
  }
  return kExitOk;
}

}  // namespace aotrun::cli
