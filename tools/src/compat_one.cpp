// `aotrun compat-one`: the child half of `aotrun compat` (not listed in the
// help). Opens one package, runs every mode on the reference inputs, compares
// with the reference outputs and with the threaded mode, and reports each
// step as it goes as one line on stdout:
//   @@aotrun-compat {"event": ...}
// so that when the process dies (a signal, the time limit) the parent knows
// how far it got. Events: "refused" (open failed), "opened", "error"
// (references unusable), "mode_start", "mode", "done".
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/strings.hpp"
#include "commands.hpp"
#include "compare.hpp"
#include "compat_plan.hpp"
#include "describe.hpp"
#include "error.hpp"
#include "inputs.hpp"
#include "npy.hpp"
#include "outputs.hpp"
#include "report.hpp"
#include "runtime.hpp"
#include "safetensors.hpp"

namespace aotrun::cli {

namespace {

void emit(const nlohmann::json& event) {
  std::cout << "@@aotrun-compat " << event.dump() << '\n';
  std::cout.flush();
}

// Loads a list of reference files into tensors in order: .npy files one
// tensor each; a .safetensors file all of its tensors (keys in<i>/out<i> in
// index order, else `names` where every one is present, else file order);
// "FILE.safetensors:KEY" one tensor.
std::vector<HostTensor> load_tensors(const std::vector<std::string>& files, const std::vector<std::string>& names,
                                     const char* prefix) {
  std::vector<HostTensor> out;
  for (const std::string& file : files) {
    const size_t colon = file.rfind(':');
    if (colon != std::string::npos && ends_with(file.substr(0, colon), ".safetensors")) {
      const std::string key = file.substr(colon + 1);
      bool found = false;
      for (HostTensor& t : read_safetensors(file.substr(0, colon))) {
        if (t.name() == key) {
          out.push_back(std::move(t));
          found = true;
          break;
        }
      }
      if (!found) throw Failure(AOTRUN_ERR_NOT_FOUND, "'" + file.substr(0, colon) + "' has no tensor '" + key + "'");
    } else if (ends_with(file, ".safetensors")) {
      std::vector<HostTensor> all = read_safetensors(file);
      std::map<std::string, size_t> by_name;
      for (size_t i = 0; i < all.size(); ++i) by_name[all[i].name()] = i;
      std::vector<size_t> order;
      bool indexed = true;
      for (size_t i = 0; i < all.size() && indexed; ++i) {
        indexed = by_name.count(prefix + std::to_string(i)) != 0;
        if (indexed) order.push_back(by_name[prefix + std::to_string(i)]);
      }
      if (!indexed) {
        order.clear();
        bool named = !names.empty() && names.size() == all.size();
        for (size_t i = 0; i < names.size() && named; ++i) {
          named = by_name.count(names[i]) != 0;
          if (named) order.push_back(by_name[names[i]]);
        }
        if (!named) {
          order.clear();
          for (size_t i = 0; i < all.size(); ++i) order.push_back(i);
        }
      }
      for (size_t i : order) out.push_back(std::move(all[i]));
    } else {
      out.push_back(read_npy(file, std::filesystem::path(file).filename().string()));
    }
  }
  return out;
}

struct LoadedSet {
  std::string name;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;  // empty: no reference outputs
  std::vector<std::string> output_files;
  std::string source;
};

// Runs `inputs` `runs` times on a fresh runner; outputs allocated from the
// runner's output shapes, or, where the package states no output specs,
// like the reference outputs.
std::vector<std::vector<HostTensor>> run_runs(const Package& package, aotrun_mode mode, LoadedSet& set,
                                              const std::vector<TensorSpec>& output_specs, int runs,
                                              aotrun_mode* effective) {
  RunnerConfig config;
  config.mode = mode;
  config.strict = true;
  Runner runner = create_runner(package, config);
  std::vector<DLTensor> in = views(set.inputs);
  bool known = true;
  for (const TensorSpec& s : output_specs) known = known && s.known;
  std::vector<std::vector<HostTensor>> all;
  for (int r = 0; r < runs; ++r) {
    std::vector<HostTensor> outs;
    if (known) {
      outs = allocate_outputs(runner.get(), in, output_specs);
    } else {
      if (set.outputs.size() != output_specs.size()) {
        throw Failure(AOTRUN_ERR_UNSUPPORTED,
                      "the package states no output shapes and there are no reference outputs to take them from");
      }
      for (const HostTensor& ref : set.outputs) outs.emplace_back(ref.name(), ref.dtype(), ref.shape());
    }
    for (HostTensor& t : outs) std::memset(t.data(), 0xFF, t.nbytes());
    std::vector<DLTensor> out_views = views(outs);
    check(aotrun_runner_run(runner.get(), in.data(), in.size(), out_views.data(), out_views.size()),
          "run " + std::to_string(r + 1));
    all.push_back(std::move(outs));
  }
  *effective = runner.mode();
  return all;
}

// One output of one mode against one baseline over every run.
struct Judged {
  bool all_identical = true;
  bool within = true;
  double max_abs_diff = 0;
  std::string first_failure;  // the first run outside the tolerance
  nlohmann::json json;
};

Judged judge_runs(const std::vector<std::vector<HostTensor>>& runs, size_t o, const HostTensor& baseline,
                  const ToleranceOverride& tol) {
  Judged j;
  const Tolerance t = tol.for_dtype(baseline.dtype());
  for (size_t r = 0; r < runs.size(); ++r) {
    const Comparison c = compare_tensors(runs[r][o], baseline, t);
    if (c.identical) continue;
    j.all_identical = false;
    j.max_abs_diff = std::max(j.max_abs_diff, c.max_abs_diff);
    if (!c.layout.empty()) j.max_abs_diff = INFINITY;
    if (!c.within_tolerance && j.within) {
      j.within = false;
      j.first_failure = "run " + std::to_string(r + 1) + ": " + tolerance_verdict_text(c);
    }
  }
  j.json = {{"identical", j.all_identical},
            {"within_tolerance", j.within},
            {"max_abs_diff", std::isfinite(j.max_abs_diff) ? nlohmann::json(j.max_abs_diff) : nlohmann::json()},
            {"rtol", t.rtol},
            {"atol", t.atol}};
  if (!j.within) j.json["first_failure"] = j.first_failure;
  return j;
}

std::string error_code(const std::exception& e) {
  if (const auto* f = dynamic_cast<const Failure*>(&e)) return f->code_name();
  if (const auto* x = dynamic_cast<const aotrun::cxx::Error*>(&e)) return x->code_name();
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return aotrun_code_name(AOTRUN_ERR_OUT_OF_MEMORY);
  return aotrun_code_name(AOTRUN_ERR_INTERNAL);
}

// --entry: the compat entry the parent passed, as JSON.
CompatEntry entry_option(const Args& args) {
  if (!args.has("entry")) throw UsageError("compat-one", "missing --entry");
  try {
    return entry_from_json(nlohmann::json::parse(args.get("entry")));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("compat-one", std::string("--entry is not a compat entry: ") + e.what());
  }
}

ToleranceOverride tolerance_of(const CompatEntry& entry) {
  ToleranceOverride tol;
  tol.has_rtol = entry.rtol.has_value();
  tol.has_atol = entry.atol.has_value();
  tol.rtol = entry.rtol.value_or(0);
  tol.atol = entry.atol.value_or(0);
  return tol;
}

// The last event, whatever came before it.
int finish() {
  emit({{"event", "done"}});
  return kExitOk;
}

// The entry's package, or nothing after a "refused" event.
std::optional<Package> open_entry(const CompatEntry& entry) {
  std::optional<Package> opened;
  try {
    aotrun::cxx::PackageOptions options;
    options.verify_hashes(entry.verify_hashes);
    if (!entry.pt2_model.empty()) options.pt2_model(entry.pt2_model);
    opened.emplace(entry.path, options);
  } catch (const std::exception& e) {
    emit({{"event", "refused"}, {"code", error_code(e)}, {"message", e.what()}});
  }
  return opened;
}

// The "opened" event: what the package is, its modes and its tensors.
void emit_opened(const Package& package, const aotrun_package_info& info, const std::vector<TensorSpec>& input_specs,
                 const std::vector<TensorSpec>& output_specs) {
  nlohmann::json modes = nlohmann::json::object();
  for (const std::string& name : compat_mode_names()) {
    const char* reason = nullptr;
    const bool available = package.mode_available(*parse_mode(name), &reason);
    modes[name] = {{"available", available}, {"reason", reason != nullptr ? reason : ""}};
  }
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array(), outputs = nlohmann::ordered_json::array();
  for (const TensorSpec& s : input_specs) inputs.push_back(tensor_spec_json(s));
  for (const TensorSpec& s : output_specs) outputs.push_back(tensor_spec_json(s));
  emit({{"event", "opened"},
        {"name", info.name != nullptr ? info.name : ""},
        {"format", info.format != nullptr ? info.format : ""},
        {"abi_version", abi_version_string(info.abi_version)},
        {"device", device_name(info.device)},
        {"modes", modes},
        {"inputs", nlohmann::json::parse(inputs.dump())},
        {"outputs", nlohmann::json::parse(outputs.dump())}});
}

// The package's input names on `inputs`, so that messages name them.
void name_inputs(std::vector<HostTensor>& inputs, const std::vector<TensorSpec>& input_specs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    HostTensor& t = inputs[i];
    HostTensor named(input_specs[i].name, t.dtype(), t.shape());
    if (t.nbytes() != 0) std::memcpy(named.data(), t.data(), t.nbytes());
    t = std::move(named);
  }
}

// One reference set, its counts checked against the package's.
LoadedSet load_set(const ReferenceSet& r, const std::vector<TensorSpec>& input_specs,
                   const std::vector<TensorSpec>& output_specs, const std::vector<std::string>& input_names,
                   const std::vector<std::string>& output_names) {
  LoadedSet set;
  set.name = r.name;
  set.source = "references";
  set.inputs = load_tensors(r.inputs, input_names, "in");
  set.outputs = load_tensors(r.outputs, output_names, "out");
  set.output_files = r.outputs;
  if (set.inputs.size() != input_specs.size()) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "set '" + r.name + "': " + std::to_string(set.inputs.size()) +
                                                   " reference inputs for the package's " +
                                                   std::to_string(input_specs.size()));
  }
  if (!set.outputs.empty() && set.outputs.size() != output_specs.size()) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "set '" + r.name + "': " + std::to_string(set.outputs.size()) +
                                                   " reference outputs for the package's " +
                                                   std::to_string(output_specs.size()));
  }
  name_inputs(set.inputs, input_specs);
  return set;
}

// The set of an entry without references: random inputs, no outputs.
LoadedSet random_set(const CompatEntry& entry, const std::vector<TensorSpec>& input_specs) {
  InputPlan plan;
  plan.batch = entry.batch;
  plan.batch_all_dims = true;  // a compat entry's "batch" is every dynamic dim
  BuiltInputs built = build_inputs(input_specs, plan);
  LoadedSet set;
  set.name = "random";
  set.source = "random inputs (seed 0, dynamic dims " + std::to_string(built.batch) + ")";
  set.inputs = std::move(built.tensors);
  return set;
}

// The sets every mode runs: the entry's references, or random inputs. False
// after an "error" event when the references are unusable.
bool load_sets(const CompatEntry& entry, const std::vector<TensorSpec>& input_specs,
               const std::vector<TensorSpec>& output_specs, std::vector<LoadedSet>* sets) {
  std::vector<std::string> input_names, output_names;
  for (const TensorSpec& s : input_specs) input_names.push_back(s.name);
  for (const TensorSpec& s : output_specs) output_names.push_back(s.name);
  try {
    for (const ReferenceSet& r : entry.sets) {
      sets->push_back(load_set(r, input_specs, output_specs, input_names, output_names));
    }
    if (sets->empty()) sets->push_back(random_set(entry, input_specs));
  } catch (const std::exception& e) {
    emit({{"event", "error"}, {"stage", "references"}, {"code", error_code(e)}, {"message", e.what()}});
    return false;
  }
  return true;
}

// Threaded first, whatever the order asked, so the others can agree with it.
std::vector<std::string> threaded_first(const std::vector<std::string>& wanted) {
  std::vector<std::string> order;
  for (const std::string& m : wanted) {
    if (m == "threaded") order.push_back(m);
  }
  for (const std::string& m : wanted) {
    if (m != "threaded") order.push_back(m);
  }
  return order;
}

// What every mode of the package runs and is judged against.
struct Sweep {
  const Package& package;
  const std::vector<TensorSpec>& output_specs;
  const ToleranceOverride& tol;
  int runs;
  bool explicit_modes;  // a mode the package lacks is "unavailable" (a failure), not "skipped"
  std::vector<LoadedSet>& sets;
  // The threaded mode's first run per set: what the other modes must agree with.
  std::vector<std::vector<HostTensor>> baseline;
  bool have_baseline = false;
};

// One mode's verdict, gathered set by set.
struct ModeTally {
  bool pass = true, ref_identical = true, agree_identical = true, compared_ref = false, compared_threaded = false;
  double ref_max = 0, threaded_max = 0;
  std::string first_failure, first_error, first_error_code;
  aotrun_mode effective = AOTRUN_MODE_THREADED;
  size_t sets_passed = 0;
  nlohmann::json set_results = nlohmann::json::array();
};

// Output `o` of one set's runs in mode `name`, against the set's reference
// outputs and the threaded mode's; the mode's first failure is kept.
nlohmann::json judge_output(const Sweep& sweep, const std::string& name, size_t s,
                            const std::vector<std::vector<HostTensor>>& outs, size_t o, ModeTally& tally,
                            bool* set_ok) {
  const LoadedSet& set = sweep.sets[s];
  nlohmann::json entry_json = {{"name", o < sweep.output_specs.size() ? sweep.output_specs[o].name : ""},
                               {"dtype", dtype_name(outs.front()[o].dtype())},
                               {"shape", outs.front()[o].shape()}};
  if (!set.outputs.empty()) {
    Judged j = judge_runs(outs, o, set.outputs[o], sweep.tol);
    *set_ok = *set_ok && j.within;
    tally.compared_ref = true;
    tally.ref_identical = tally.ref_identical && j.all_identical;
    tally.ref_max = std::max(tally.ref_max, j.max_abs_diff);
    if (!j.within && tally.pass) {
      tally.pass = false;
      tally.first_failure = "set " + set.name + ", output " + std::to_string(o) + " vs reference '" +
                            set.output_files[std::min(o, set.output_files.size() - 1)] + "', " + j.first_failure;
    }
    entry_json["vs_reference"] = j.json;
  }
  if (name != "threaded" && sweep.have_baseline && o < sweep.baseline[s].size()) {
    Judged j = judge_runs(outs, o, sweep.baseline[s][o], sweep.tol);
    *set_ok = *set_ok && j.within;
    tally.compared_threaded = true;
    tally.agree_identical = tally.agree_identical && j.all_identical;
    tally.threaded_max = std::max(tally.threaded_max, j.max_abs_diff);
    if (!j.within && tally.pass) {
      tally.pass = false;
      tally.first_failure = "set " + set.name + ", output " + std::to_string(o) + " vs threaded, " + j.first_failure;
    }
    entry_json["vs_threaded"] = j.json;
  }
  return entry_json;
}

// Set `s` in one mode: its runs, each output judged, and its entry in the
// mode's "sets". An error fails this set only.
void run_set(Sweep& sweep, const std::string& name, aotrun_mode mode, size_t s, ModeTally& tally) {
  LoadedSet& set = sweep.sets[s];
  bool set_ok = true;
  try {
    std::vector<std::vector<HostTensor>> outs =
        run_runs(sweep.package, mode, set, sweep.output_specs, sweep.runs, &tally.effective);
    nlohmann::json per_output = nlohmann::json::array();
    for (size_t o = 0; o < outs.front().size(); ++o) {
      per_output.push_back(judge_output(sweep, name, s, outs, o, tally, &set_ok));
    }
    if (name == "threaded") sweep.baseline[s] = std::move(outs.front());
    tally.sets_passed += set_ok ? 1 : 0;
    tally.set_results.push_back(
        {{"set", set.name}, {"source", set.source}, {"status", set_ok ? "pass" : "mismatch"}, {"outputs", per_output}});
  } catch (const std::exception& e) {
    if (tally.first_error_code.empty()) {
      tally.first_error_code = error_code(e);
      tally.first_error = "set " + set.name + ": " + e.what();
    }
    tally.pass = false;
    tally.set_results.push_back({{"set", set.name},
                                 {"source", set.source},
                                 {"status", "error"},
                                 {"code", error_code(e)},
                                 {"message", e.what()}});
  }
}

// The "mode" event of a mode that ran.
nlohmann::json mode_event(const std::string& name, const ModeTally& tally, int runs,
                          std::chrono::steady_clock::time_point t0) {
  nlohmann::json result = {{"event", "mode"},
                           {"mode", name},
                           {"status", !tally.first_error_code.empty() ? "error"
                                      : tally.pass                    ? "pass"
                                                                      : "mismatch"},
                           {"sets_passed", tally.sets_passed},
                           {"effective_mode", aotrun_mode_name(tally.effective)},
                           {"runs", runs},
                           {"sets", tally.set_results},
                           {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  result["vs_reference"] =
      tally.compared_ref ? nlohmann::json({{"identical", tally.ref_identical}, {"max_abs_diff", finite(tally.ref_max)}})
                         : nlohmann::json();
  result["vs_threaded"] =
      tally.compared_threaded
          ? nlohmann::json({{"identical", tally.agree_identical}, {"max_abs_diff", finite(tally.threaded_max)}})
          : nlohmann::json();
  if (!tally.pass) result["message"] = tally.first_error.empty() ? tally.first_failure : tally.first_error;
  if (!tally.first_error_code.empty()) result["code"] = tally.first_error_code;
  return result;
}

// One mode over every set: "mode_start", then its "mode" event; only the
// "mode" event (skipped, or unavailable when listed) if the package lacks it.
void run_mode(Sweep& sweep, const std::string& name) {
  const aotrun_mode mode = *parse_mode(name);
  const char* reason = nullptr;
  if (!sweep.package.mode_available(mode, &reason)) {
    emit({{"event", "mode"},
          {"mode", name},
          {"status", sweep.explicit_modes ? "unavailable" : "skipped"},
          {"reason", std::string("falls back: ") + (reason != nullptr && *reason ? reason : "not available")}});
    return;
  }
  emit({{"event", "mode_start"}, {"mode", name}});
  const auto t0 = std::chrono::steady_clock::now();
  ModeTally tally;
  tally.effective = mode;
  // Every set runs and is reported, whatever an earlier one did (a size
  // the model refuses fails that set only).
  for (size_t s = 0; s < sweep.sets.size(); ++s) run_set(sweep, name, mode, s, tally);
  if (name == "threaded") sweep.have_baseline = true;
  emit(mode_event(name, tally, sweep.runs, t0));
}

}  // namespace

int compat_one_main(int argc, char** argv, int begin) {
  auto specs = common_options();
  specs.push_back({"entry", true, false});
  specs.push_back({"runs", true, false});
  const Args args = Args::parse("compat-one", specs, argc, argv, begin);
  if (args.has("help")) {
    std::cout << "Usage: aotrun compat-one --entry JSON [--runs N]\n"
                 "\nThe child process of 'aotrun compat' (one package); see 'aotrun compat --help'.\n";
    return kExitOk;
  }
  apply_log_option(args);
  const CompatEntry entry = entry_option(args);
  const int runs = static_cast<int>(args.get_int("runs", 3, 1, 1000));
  const ToleranceOverride tol = tolerance_of(entry);

  emit({{"event", "start"}, {"pid", getpid()}});
  const std::optional<Package> opened = open_entry(entry);
  if (!opened) return finish();
  const Package& package = *opened;
  const aotrun_package_info info = package.info();
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  const std::vector<TensorSpec> output_specs = package_outputs(package);
  emit_opened(package, info, input_specs, output_specs);

  std::vector<LoadedSet> sets;
  if (!load_sets(entry, input_specs, output_specs, &sets)) return finish();
  Sweep sweep{
      package, output_specs, tol, runs, !entry.modes.empty(), sets, std::vector<std::vector<HostTensor>>(sets.size())};
  for (const std::string& name : threaded_first(entry.modes.empty() ? compat_mode_names() : entry.modes)) {
    run_mode(sweep, name);
  }
  return finish();
}

}  // namespace aotrun::cli
