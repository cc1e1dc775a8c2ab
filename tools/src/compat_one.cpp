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

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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
    if (colon != std::string::npos && has_suffix(file.substr(0, colon), ".safetensors")) {
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
    } else if (has_suffix(file, ".safetensors")) {
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
  if (!args.has("entry")) throw UsageError("compat-one", "missing --entry");
  CompatEntry entry;
  try {
    entry = entry_from_json(nlohmann::json::parse(args.get("entry")));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("compat-one", std::string("--entry is not a compat entry: ") + e.what());
  }
  const int runs = static_cast<int>(args.get_int("runs", 3, 1, 1000));
  ToleranceOverride tol;
  tol.has_rtol = entry.rtol.has_value();
  tol.has_atol = entry.atol.has_value();
  tol.rtol = entry.rtol.value_or(0);
  tol.atol = entry.atol.value_or(0);

  emit({{"event", "start"}, {"pid", getpid()}});
  std::optional<Package> opened;
  try {
    aotrun::cxx::PackageOptions options;
    options.verify_hashes(entry.verify_hashes);
    if (!entry.pt2_model.empty()) options.pt2_model(entry.pt2_model);
    opened.emplace(entry.path, options);
  } catch (const std::exception& e) {
    emit({{"event", "refused"}, {"code", error_code(e)}, {"message", e.what()}});
    emit({{"event", "done"}});
    return kExitOk;
  }
  const Package& package = *opened;
  const aotrun_package_info info = package.info();
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  const std::vector<TensorSpec> output_specs = package_outputs(package);
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

  // Reference data.
  std::vector<LoadedSet> sets;
  std::vector<std::string> input_names, output_names;
  for (const TensorSpec& s : input_specs) input_names.push_back(s.name);
  for (const TensorSpec& s : output_specs) output_names.push_back(s.name);
  try {
    for (const ReferenceSet& r : entry.sets) {
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
      // The package's input names, so that messages name them.
      for (size_t i = 0; i < set.inputs.size(); ++i) {
        HostTensor& t = set.inputs[i];
        HostTensor named(input_specs[i].name, t.dtype(), t.shape());
        if (t.nbytes() != 0) std::memcpy(named.data(), t.data(), t.nbytes());
        t = std::move(named);
      }
      sets.push_back(std::move(set));
    }
    if (sets.empty()) {
      InputPlan plan;
      plan.batch = entry.batch;
      plan.batch_all_dims = true;  // a compat entry's "batch" is every dynamic dim
      BuiltInputs built = build_inputs(input_specs, plan);
      LoadedSet set;
      set.name = "random";
      set.source = "random inputs (seed 0, dynamic dims " + std::to_string(built.batch) + ")";
      set.inputs = std::move(built.tensors);
      sets.push_back(std::move(set));
    }
  } catch (const std::exception& e) {
    emit({{"event", "error"}, {"stage", "references"}, {"code", error_code(e)}, {"message", e.what()}});
    emit({{"event", "done"}});
    return kExitOk;
  }

  const std::vector<std::string> wanted = entry.modes.empty() ? compat_mode_names() : entry.modes;
  const bool explicit_modes = !entry.modes.empty();
  // The threaded mode's first run per set: what the other modes must agree with.
  std::vector<std::vector<HostTensor>> baseline(sets.size());
  bool have_baseline = false;
  // Threaded runs first, whatever the order asked, so the others can agree with it.
  std::vector<std::string> order;
  for (const std::string& m : wanted) {
    if (m == "threaded") order.push_back(m);
  }
  for (const std::string& m : wanted) {
    if (m != "threaded") order.push_back(m);
  }
  for (const std::string& name : order) {
    const aotrun_mode mode = *parse_mode(name);
    const char* reason = nullptr;
    if (!package.mode_available(mode, &reason)) {
      emit({{"event", "mode"},
            {"mode", name},
            {"status", explicit_modes ? "unavailable" : "skipped"},
            {"reason", std::string("falls back: ") + (reason != nullptr && *reason ? reason : "not available")}});
      continue;
    }
    emit({{"event", "mode_start"}, {"mode", name}});
    const auto t0 = std::chrono::steady_clock::now();
    nlohmann::json set_results = nlohmann::json::array();
    bool pass = true, ref_identical = true, agree_identical = true, compared_ref = false, compared_threaded = false;
    double ref_max = 0, threaded_max = 0;
    std::string first_failure, first_error, first_error_code;
    aotrun_mode effective = mode;
    size_t sets_passed = 0;
    // Every set runs and is reported, whatever an earlier one did (a size
    // the model refuses fails that set only).
    for (size_t s = 0; s < sets.size(); ++s) {
      LoadedSet& set = sets[s];
      bool set_ok = true;
      try {
        std::vector<std::vector<HostTensor>> outs = run_runs(package, mode, set, output_specs, runs, &effective);
        nlohmann::json per_output = nlohmann::json::array();
        for (size_t o = 0; o < outs.front().size(); ++o) {
          nlohmann::json entry_json = {{"name", o < output_specs.size() ? output_specs[o].name : ""},
                                       {"dtype", dtype_name(outs.front()[o].dtype())},
                                       {"shape", outs.front()[o].shape()}};
          if (!set.outputs.empty()) {
            Judged j = judge_runs(outs, o, set.outputs[o], tol);
            set_ok = set_ok && j.within;
            compared_ref = true;
            ref_identical = ref_identical && j.all_identical;
            ref_max = std::max(ref_max, j.max_abs_diff);
            if (!j.within && pass) {
              pass = false;
              first_failure = "set " + set.name + ", output " + std::to_string(o) + " vs reference '" +
                              set.output_files[std::min(o, set.output_files.size() - 1)] + "', " + j.first_failure;
            }
            entry_json["vs_reference"] = j.json;
          }
          if (name != "threaded" && have_baseline && o < baseline[s].size()) {
            Judged j = judge_runs(outs, o, baseline[s][o], tol);
            set_ok = set_ok && j.within;
            compared_threaded = true;
            agree_identical = agree_identical && j.all_identical;
            threaded_max = std::max(threaded_max, j.max_abs_diff);
            if (!j.within && pass) {
              pass = false;
              first_failure = "set " + set.name + ", output " + std::to_string(o) + " vs threaded, " + j.first_failure;
            }
            entry_json["vs_threaded"] = j.json;
          }
          per_output.push_back(entry_json);
        }
        if (name == "threaded") baseline[s] = std::move(outs.front());
        sets_passed += set_ok ? 1 : 0;
        set_results.push_back({{"set", set.name},
                               {"source", set.source},
                               {"status", set_ok ? "pass" : "mismatch"},
                               {"outputs", per_output}});
      } catch (const std::exception& e) {
        if (first_error_code.empty()) {
          first_error_code = error_code(e);
          first_error = "set " + set.name + ": " + e.what();
        }
        pass = false;
        set_results.push_back({{"set", set.name},
                               {"source", set.source},
                               {"status", "error"},
                               {"code", error_code(e)},
                               {"message", e.what()}});
      }
    }
    if (name == "threaded") have_baseline = true;
    nlohmann::json result = {{"event", "mode"},
                             {"mode", name},
                             {"status", !first_error_code.empty() ? "error"
                                        : pass                    ? "pass"
                                                                  : "mismatch"},
                             {"sets_passed", sets_passed},
                             {"effective_mode", aotrun_mode_name(effective)},
                             {"runs", runs},
                             {"sets", set_results},
                             {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
    auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
    result["vs_reference"] = compared_ref
                                 ? nlohmann::json({{"identical", ref_identical}, {"max_abs_diff", finite(ref_max)}})
                                 : nlohmann::json();
    result["vs_threaded"] =
        compared_threaded ? nlohmann::json({{"identical", agree_identical}, {"max_abs_diff", finite(threaded_max)}})
                          : nlohmann::json();
    if (!pass) result["message"] = first_error.empty() ? first_failure : first_error;
    if (!first_error_code.empty()) result["code"] = first_error_code;
    emit(result);
  }
  emit({{"event", "done"}});
  return kExitOk;
}

}  // namespace aotrun::cli
