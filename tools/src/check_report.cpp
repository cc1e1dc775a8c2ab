#include "check_report.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "describe.hpp"
#include "report.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

std::string verdict_text(const Verdict& v) {
  const std::string runs = std::to_string(v.runs) + (v.runs == 1 ? " run" : " runs");
  if (v.mismatched_runs == 0 && v.all_identical) return "identical (" + runs + ")";
  if (v.mismatched_runs == 0) {
    return "within " + tolerance_text(v.tolerance) + ", max abs diff " + number_text(v.max_abs_diff, false) + " (" +
           runs + ")";
  }
  return "MISMATCH in " + std::to_string(v.mismatched_runs) + " of " + std::to_string(v.runs) + " runs; run " +
         std::to_string(v.first_run + 1) + ": " + tolerance_verdict_text(v.first);
}

nlohmann::ordered_json verdict_json(const Verdict& v) {
  nlohmann::ordered_json j = {{"identical", v.all_identical}, {"runs", v.runs}, {"mismatched_runs", v.mismatched_runs}};
  if (!v.tolerance.exact()) {
    j["within_tolerance"] = v.mismatched_runs == 0;
    j["rtol"] = v.tolerance.rtol;
    j["atol"] = v.tolerance.atol;
    j["max_abs_diff"] = v.max_abs_diff;
  }
  if (v.mismatched_runs == 0) return j;
  j["first_run"] = v.first_run + 1;
  const nlohmann::ordered_json details = comparison_json(v.first);
  for (auto it = details.begin(); it != details.end(); ++it) {
    if (it.key() != "identical") j[it.key()] = it.value();
  }
  return j;
}

// What the mode's counters say about how its runs went.
std::string mode_note(const ModeResult& m) {
  const aotrun_runner_stats& s = m.stats;
  std::string note;
  if (m.effective == AOTRUN_MODE_GRAPH) {
    note = std::to_string(s.graph_captures) + (s.graph_captures == 1 ? " capture, " : " captures, ") +
           std::to_string(s.graph_replays) + (s.graph_replays == 1 ? " replay" : " replays");
    if (s.eager_capture_failed != 0) note += ", capture failed: eager";
  }
  if (m.mode.async) {
    note += std::string(note.empty() ? "" : ", ") + "over " + aotrun_mode_name(m.effective) + ", peak in-flight " +
            std::to_string(s.peak_inflight) + " of " + std::to_string(s.max_inflight);
  }
  return note;
}

}  // namespace

Verdict judge(const std::vector<std::vector<HostTensor>>& runs, size_t from, size_t output, const HostTensor& baseline,
              const Tolerance& tolerance) {
  Verdict v;
  v.tolerance = tolerance;
  for (size_t r = from; r < runs.size(); ++r) {
    const Comparison c = compare_tensors(runs[r][output], baseline, tolerance);
    ++v.runs;
    if (c.identical) continue;
    v.all_identical = false;
    v.max_abs_diff = std::max(v.max_abs_diff, c.max_abs_diff);
    if (c.within_tolerance) continue;
    if (v.mismatched_runs++ == 0) {
      v.first_run = r;
      v.first = c;
    }
  }
  return v;
}

void tally(CheckReport& r) {
  for (const ModeResult& m : r.modes) {
    if (m.skipped) continue;
    ++r.compared;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      for (const auto* verdicts : {&m.vs_threaded, &m.vs_reference}) {
        if (verdicts->empty()) continue;
        if ((*verdicts)[o].mismatched_runs == 0) {
          if (!(*verdicts)[o].all_identical) ++r.inexact;
          continue;
        }
        const Verdict& v = (*verdicts)[o];
        if (r.mismatches++ == 0) {
          r.first_mismatch = "mode " + m.mode.label + ", output '" + tensor_label(r.outputs[o]) + "', run " +
                             std::to_string(v.first_run + 1) + " vs " +
                             (verdicts == &m.vs_threaded ? std::string("threaded run 1")
                                                         : "reference '" + r.reference_files[o] + "'") +
                             ": " + tolerance_verdict_text(v.first);
        }
      }
    }
  }
}

void print_check_json(const CheckReport& r, std::ostream& out) {
  nlohmann::ordered_json j;
  j["package"] = {{"name", r.info.name != nullptr ? r.info.name : ""},
                  {"format", r.info.format != nullptr ? r.info.format : ""},
                  {"abi_version", abi_version_string(r.info.abi_version)},
                  {"device", device_type_name(r.info.device.device_type)}};
  j["batch"] = r.inputs->batch;
  j["runs"] = r.runs;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.inputs->tensors.size(); ++i) {
    const HostTensor& t = r.inputs->tensors[i];
    inputs.push_back(
        {{"name", t.name()}, {"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}, {"source", r.inputs->sources[i]}});
  }
  j["inputs"] = inputs;
  j["reference_dir"] = r.reference_dir ? nlohmann::ordered_json(*r.reference_dir) : nlohmann::ordered_json();
  j["reference_tolerance"] = {
      {"rtol",
       r.reference_tolerance.has_rtol ? nlohmann::ordered_json(r.reference_tolerance.rtol) : nlohmann::ordered_json()},
      {"atol",
       r.reference_tolerance.has_atol ? nlohmann::ordered_json(r.reference_tolerance.atol) : nlohmann::ordered_json()},
      {"defaults", "torch.testing.assert_close per dtype"}};
  nlohmann::ordered_json modes = nlohmann::ordered_json::object();
  for (const ModeResult& m : r.modes) {
    if (m.skipped) {
      modes[m.mode.label] = {{"status", "skipped"}, {"reason", *m.skipped}};
      continue;
    }
    nlohmann::ordered_json e = {
        {"status", "compared"}, {"runner_mode", aotrun_mode_name(m.effective)}, {"async", m.mode.async}};
    e["stats"] = stats_json(m.stats);
    e["stats"].erase("fallback_reason");  // a compared mode never falls back
    nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      nlohmann::ordered_json entry = {{"name", r.outputs[o].name}, {"vs_threaded", verdict_json(m.vs_threaded[o])}};
      if (r.reference_dir) {
        entry["vs_reference"] = verdict_json(m.vs_reference[o]);
        entry["vs_reference"]["file"] = r.reference_files[o];
      }
      outputs.push_back(entry);
    }
    e["outputs"] = outputs;
    modes[m.mode.label] = e;
  }
  j["modes"] = modes;
  j["compared_modes"] = r.compared;
  j["mismatches"] = r.mismatches;
  j["within_tolerance"] = r.inexact;
  j["identical"] = r.mismatches == 0 && r.inexact == 0;
  j["passed"] = r.mismatches == 0;
  out << j.dump(2) << '\n';
}

void print_check_text(const CheckReport& r, std::ostream& out) {
  Table head;
  head.add({"package", package_line(r.info)});
  for (size_t i = 0; i < r.inputs->tensors.size(); ++i) {
    const HostTensor& t = r.inputs->tensors[i];
    head.add({i == 0 ? "inputs" : "",
              t.name() + "  " + dtype_name(t.dtype()) + "  " + shape_text(t.shape()) + "  " + r.inputs->sources[i]});
  }
  head.add({"runs", std::to_string(r.runs) + " per mode, compared bit for bit with threaded run 1"});
  if (r.reference_dir) {
    std::string tol = "PyTorch's defaults per dtype";
    if (r.reference_tolerance.any()) {
      tol = "";
      if (r.reference_tolerance.has_rtol) tol += "rtol " + number_text(r.reference_tolerance.rtol, false);
      if (r.reference_tolerance.has_atol) {
        tol += std::string(tol.empty() ? "" : ", ") + "atol " + number_text(r.reference_tolerance.atol, false);
      }
      if (!r.reference_tolerance.has_rtol || !r.reference_tolerance.has_atol) tol += " (else PyTorch's default)";
    }
    head.add({"reference", *r.reference_dir + ", within " + tol});
  }
  head.print(out);
  out << '\n';

  Table rows;
  rows.add({"MODE", "OUTPUT", "AGAINST", "RESULT"});
  for (const ModeResult& m : r.modes) {
    if (m.skipped) {
      rows.add({m.mode.label, "-", "-", "skipped: " + *m.skipped});
      continue;
    }
    const std::string note = mode_note(m);
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      std::string result = verdict_text(m.vs_threaded[o]);
      if (!note.empty()) result += "; " + note;
      rows.add({m.mode.label, tensor_label(r.outputs[o]), "threaded", result});
      if (r.reference_dir) {
        rows.add({m.mode.label, tensor_label(r.outputs[o]), "reference", verdict_text(m.vs_reference[o])});
      }
    }
  }
  rows.print(out);
  out << '\n';

  Table tail;
  if (r.mismatches == 0 && r.inexact != 0) {
    tail.add({"result", "passed: " + std::to_string(r.inexact) +
                            (r.inexact == 1 ? " comparison within tolerance" : " comparisons within tolerance") +
                            ", the rest identical, in " + std::to_string(r.compared) + " compared modes (" +
                            std::to_string(r.modes.size() - r.compared) + " skipped)"});
  } else if (r.mismatches == 0) {
    tail.add({"result", "identical in all " + std::to_string(r.compared) + " compared modes (" +
                            std::to_string(r.modes.size() - r.compared) + " skipped)"});
  } else {
    tail.add({"result", "MISMATCH: " + std::to_string(r.mismatches) +
                            (r.mismatches == 1 ? " comparison differs" : " comparisons differ")});
  }
  tail.print(out);
}

}  // namespace aotrun::cli
