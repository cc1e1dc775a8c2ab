// `aotrun bench`: latency and throughput of a package under a runner mode.
#include <unistd.h>

#include <cstdint>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench_async.hpp"
#include "bench_loop.hpp"
#include "commands.hpp"
#include "describe.hpp"
#include "error.hpp"
#include "runtime.hpp"
#include "inputs.hpp"
#include "report.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

const char kHelp[] =
    "Usage: aotrun bench [OPTIONS] PKG\n"
    "\n"
    "Measure per-call latency (min, p50, p90, p99, max) and throughput of PKG.\n"
    "THREADS caller threads run one runner; each warms up, then all start\n"
    "together and call aotrun_runner_run in a loop on fixed random inputs.\n"
    "With --mode async each thread instead submits with aotrun_runner_run_async,\n"
    "keeping up to DEPTH runs of its own in flight (a ring of events, the oldest\n"
    "waited when the ring is full); latency is from submission to completion.\n"
    "Also reports the package's load timings and the runner's counters. A\n"
    "progress line is drawn on stderr when it is a terminal and the run lasts\n"
    "longer than a second.\n"
    "\n"
    "Options:\n"
    "  --mode MODE         threaded (default), single_threaded, graph or async\n"
    "  --async-mode MODE   runner mode under --mode async (default threaded)\n"
    "  --inflight K        --mode async: the runner's in-flight window\n"
    "                      (max_inflight; default 2 x models)\n"
    "  --depth D           --mode async: runs each thread keeps in flight\n"
    "                      (default: the window size)\n"
    "  --strict            fail with UNSUPPORTED instead of falling back\n"
    "  --threads N         caller threads (default 1)\n"
    "  --num-models N      model instances in the runner (default: THREADS)\n";

// (the input options: input_options_help)
const char kHelpMid[] =
    "  --warmup W          unmeasured calls per thread first (default 10)\n"
    "  --iters I           measured calls per thread\n"
    "  --duration S        measure for S seconds instead (default 2)\n"
    "  --weights FILE      run with the constants (weights) of this .safetensors\n"
    "                      file (see 'aotrun run --help')\n"
    "  --partial-weights   --weights FILE may name only some constants\n"
    "  --json              print one JSON object instead of text\n"
    "  --no-verify         skip checking the manifest's sha256 hashes\n";

// (the .pt2 open options: open_options_help)
const char kHelpTail[] =
    "  --log LEVEL         library log level: error, warn, info, debug, off\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 success, 1 the package or a call failed, 2 usage error.\n";

struct BenchConfig {
  RunnerConfig runner;
  LoopConfig loop;
  int64_t batch = 1;
  bool async = false;
  int depth = 0;  // async ring per thread; 0 = the window size
};

std::string latency_line(const Percentiles& p) {
  auto d = [](double ns) { return duration_text(ns); };
  return "min " + d(static_cast<double>(p.min)) + "  p50 " + d(static_cast<double>(p.p50)) + "  p90 " +
         d(static_cast<double>(p.p90)) + "  p99 " + d(static_cast<double>(p.p99)) + "  max " +
         d(static_cast<double>(p.max)) + "  mean " + d(p.mean);
}

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

std::vector<OptionSpec> bench_options() {
  auto specs = common_options();
  for (const char* name :
       {"mode", "threads", "num-models", "warmup", "iters", "duration", "async-mode", "inflight", "depth"}) {
    specs.push_back({name, true, false});
  }
  add_input_options(specs);
  specs.push_back({"strict", false, false});
  specs.push_back({"json", false, false});
  add_weights_options(specs);
  return specs;
}

// The runner's and the loop's settings, from the command line.
BenchConfig bench_config(const Args& args) {
  if (args.has("iters") && args.has("duration")) {
    throw UsageError("bench", "--iters and --duration exclude each other");
  }
  BenchConfig config;
  config.loop.threads = static_cast<int>(args.get_int("threads", 1, 1, 1024));
  config.async = args.get("mode") == "async";
  for (const char* name : {"async-mode", "inflight", "depth"}) {
    if (!config.async && args.has(name)) {
      throw UsageError("bench", "--" + std::string(name) + " needs --mode async");
    }
  }
  config.runner.mode = config.async ? mode_option(args, "async-mode") : mode_option(args, "mode", ", async");
  config.runner.max_inflight = static_cast<int32_t>(args.get_int("inflight", 0, 1, 65536));
  config.depth = static_cast<int>(args.get_int("depth", 0, 1, 65536));
  config.runner.strict = args.has("strict");
  config.runner.weights = weights_option(args);
  config.runner.num_models = static_cast<int32_t>(args.get_int("num-models", config.loop.threads, 1, 1024));
  config.loop.warmup = static_cast<int>(args.get_int("warmup", 10, 0, INT32_MAX));
  if (args.has("iters")) config.loop.iters = static_cast<uint64_t>(args.get_int("iters", 0, 1, INT64_MAX));
  config.loop.duration_s = args.get_double("duration", 2.0, 0.001, 1e6);
  config.loop.progress = isatty(STDERR_FILENO) != 0;
  return config;
}

// The inputs every call runs on, and how many samples a call counts for.
struct BenchInputs {
  BuiltInputs built;
  bool unknown = false;  // an input shape the package does not state
  bool batched = false;  // samples per call: the batch, when the only dynamic dim is one
};

BenchInputs bench_inputs(const std::vector<TensorSpec>& input_specs, const InputPlan& plan) {
  BenchInputs in;
  in.built = build_inputs(input_specs, plan);
  for (const TensorSpec& s : input_specs) in.unknown = in.unknown || !s.known;
  in.batched = !in.unknown && in.built.dims.size() == 1 && in.built.dims[0].leading;
  return in;
}

// What the loop measured, and the rates derived from it.
struct Measured {
  LoopResult result;
  aotrun_runner_stats stats{};  // the runner's counters after the loop
  Percentiles p;
  double wall_s = 0, calls_per_s = 0, samples_per_s = 0;
};

Measured measure(const Runner& runner, const BenchConfig& config, const std::vector<DLTensor>& input_views,
                 const std::vector<TensorSpec>& output_specs, bool batched) {
  WorkFactory make_work = [&](int) {
    return config.async ? make_async_work(runner.get(), input_views, output_specs, config.depth)
                        : make_sync_work(runner.get(), input_views, output_specs);
  };
  Measured m;
  m.result = run_loop(make_work, config.loop);
  m.stats = runner.stats();
  m.p = percentiles(m.result.latencies_ns);
  const double calls = static_cast<double>(m.result.latencies_ns.size());
  m.wall_s = m.result.wall_ns / 1e9;
  m.calls_per_s = m.wall_s > 0 ? calls / m.wall_s : 0;
  m.samples_per_s = m.calls_per_s * static_cast<double>(batched ? config.batch : 1);
  return m;
}

void print_json(const aotrun_package_info& info, const BenchConfig& config, const BenchInputs& in, const Runner& runner,
                const Measured& m) {
  nlohmann::ordered_json j;
  j["package"] = {{"name", info.name != nullptr ? info.name : ""},
                  {"format", info.format != nullptr ? info.format : ""},
                  {"abi_version", abi_version_string(info.abi_version)},
                  {"device", device_type_name(info.device.device_type)}};
  j["load_ns"] = load_ns_json(info);
  j["config"] = {
      {"mode", config.async ? "async" : aotrun_mode_name(config.runner.mode)},
      {"strict", config.runner.strict},
      {"threads", config.loop.threads},
      {"num_models", config.runner.num_models},
      {"batch", config.batch},
      {"dynamic_dims", dims_text(in.built)},
      {"batched", in.batched},
      {"warmup", config.loop.warmup},
      {"iters", config.loop.iters ? nlohmann::ordered_json(*config.loop.iters) : nlohmann::ordered_json()},
      {"duration_s", config.loop.iters ? nlohmann::ordered_json() : nlohmann::ordered_json(config.loop.duration_s)}};
  if (config.async) {
    j["config"]["async_mode"] = aotrun_mode_name(config.runner.mode);
    j["config"]["max_inflight"] = m.stats.max_inflight;
    j["config"]["depth"] = config.depth;
  }
  j["effective_mode"] = aotrun_mode_name(aotrun_runner_mode(runner.get()));
  j["calls"] = m.result.latencies_ns.size();
  j["wall_s"] = m.wall_s;
  j["throughput"] = {{"calls_per_s", m.calls_per_s}, {"samples_per_s", m.samples_per_s}};
  j["latency_ns"] = {{"min", m.p.min}, {"p50", m.p.p50}, {"p90", m.p.p90},
                     {"p99", m.p.p99}, {"max", m.p.max}, {"mean", m.p.mean}};
  j["stats"] = stats_json(m.stats);
  std::cout << j.dump(2) << '\n';
}

// "threaded", with the fallback when it is not the mode asked for; under
// --mode async, the window and depth too.
std::string mode_text(const BenchConfig& config, const Runner& runner, const aotrun_runner_stats& stats) {
  std::string mode = aotrun_mode_name(aotrun_runner_mode(runner.get()));
  if (stats.requested_mode != stats.effective_mode) {
    mode += std::string(" (requested ") + aotrun_mode_name(stats.requested_mode) +
            "; fallback: " + (stats.fallback_reason != nullptr ? stats.fallback_reason : "") + ")";
  }
  if (config.async) {
    mode = "async over " + mode + " (window " + std::to_string(stats.max_inflight) + ", " +
           std::to_string(config.depth) + " in flight per thread)";
  }
  return mode;
}

void print_table(const aotrun_package_info& info, const BenchConfig& config, const BenchInputs& in,
                 const Runner& runner, const Measured& m) {
  const aotrun_runner_stats& stats = m.stats;
  const std::string mode = mode_text(config, runner, stats);
  Table t;
  t.add({"package", package_line(info)});
  t.add({"load", load_text(info)});
  t.add({"mode", mode});
  auto count = [](int64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  t.add({"config", count(config.loop.threads, "thread") + ", " + count(config.runner.num_models, "model") + ", " +
                       (in.unknown ? "input shapes not stated by the package" : dims_text(in.built)) + ", warmup " +
                       std::to_string(config.loop.warmup) + " per thread"});
  t.add({"calls", std::to_string(m.result.latencies_ns.size()) + " in " + fixed(m.wall_s, 3) + " s"});
  t.add({"throughput", fixed(m.calls_per_s, 1) + " calls/s" +
                           (in.batched ? ", " + fixed(m.samples_per_s, 1) + " samples/s" : std::string())});
  t.add({"latency", latency_line(m.p) + (config.async ? "  (submit to completion)" : "")});
  t.add({"stats", "runs " + std::to_string(stats.runs) + ", failures " + std::to_string(stats.failures) +
                      ", fallback runs " + std::to_string(stats.fallback_runs)});
  if (stats.requested_mode == AOTRUN_MODE_GRAPH || stats.effective_mode == AOTRUN_MODE_GRAPH) {
    t.add({"graph", graph_stats_text(stats)});
  }
  if (config.async) t.add({"async", async_stats_text(stats)});
  t.print(std::cout);
}

}  // namespace

int bench_main(int argc, char** argv, int begin) {
  const Args args = Args::parse("bench", bench_options(), argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp << input_options_help(22) << kHelpMid << open_options_help(22) << kHelpTail;
    return kExitOk;
  }
  apply_log_option(args);
  const std::string path = args.single_positional("package path (PKG)");
  BenchConfig config = bench_config(args);
  InputPlan plan = input_plan(args);

  const Package package = open_package(path, args);
  const aotrun_package_info info = package.info();
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  plan_for_package(args, package, input_specs, &plan);
  BenchInputs in = bench_inputs(input_specs, plan);
  config.batch = in.built.batch;
  const std::vector<DLTensor> input_views = aotrun::cli::input_views(in.built);
  Runner runner = create_runner(package, config.runner);

  const std::vector<TensorSpec> output_specs = package_outputs(package);
  if (config.async && config.depth == 0) config.depth = runner.stats().max_inflight;
  const Measured m = measure(runner, config, input_views, output_specs, in.batched);
  if (args.has("json")) {
    print_json(info, config, in, runner, m);
  } else {
    print_table(info, config, in, runner, m);
  }
  return kExitOk;
}

}  // namespace aotrun::cli
