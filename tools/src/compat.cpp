// `aotrun compat`: a compatibility sweep. Every package (found in
// directories, or listed in a manifest) is opened and run in a child process
// of its own (`aotrun compat-one`, fork + exec of this program) under a
// wall-clock limit, so one that crashes, hangs or aborts becomes a failed row
// and the sweep goes on. Reports: a table (progress on a terminal), JSON,
// JUnit XML.
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "compat_plan.hpp"
#include "error.hpp"
#include "subprocess.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

const char kHelp[] =
    "Usage: aotrun compat [OPTIONS] [PATH...] [--manifest FILE]\n"
    "\n"
    "Sweep packages for compatibility: open each one and run every mode it has\n"
    "(threaded, single_threaded, graph) on its reference inputs, compare the\n"
    "outputs with its reference outputs within a tolerance, and the modes with\n"
    "the threaded mode. Each package runs in a child process of its own with a\n"
    "time limit: one that crashes, hangs or aborts is a failed row (with its\n"
    "signal and the end of its stderr), not the end of the sweep.\n"
    "\n"
    "PATH is a package (.pt2 archive, .so, package directory) or a directory\n"
    "searched for them (recursively, in name order). References beside a\n"
    "package: <stem>.in<i>.npy and <stem>.out<i>.npy (mlp.pt2: mlp.in0.npy,\n"
    "mlp.out0.npy), more sets as <stem>.<set>.in<i>.npy (dyn_mlp.b3.in0.npy), or\n"
    "<stem>[.<set>].inputs.safetensors / .outputs.safetensors. A package\n"
    "without references runs on random inputs and its modes are compared only\n"
    "with each other. --manifest lists packages explicitly, with references,\n"
    "tolerances, modes, time limits and expectations (docs/CLI.md).\n"
    "\n"
    "Options:\n"
    "  --manifest FILE     packages from a compat manifest (repeatable)\n"
    "  --timeout S         time limit per package, seconds (default 120)\n"
    "  -j, --jobs N        packages run at once (default 1)\n"
    "  --rtol R, --atol A  tolerance, |got - expected| <= A + R * |expected|, for\n"
    "                      entries that set none. Default: PyTorch's\n"
    "                      torch.testing.assert_close per dtype (float32 rtol\n"
    "                      1.3e-6 atol 1e-5, float64 1e-7/1e-7, float16 1e-3/1e-5,\n"
    "                      bfloat16 1.6e-2/1e-5, integers and bool exact);\n"
    "                      --rtol 0 --atol 0 compares bit for bit\n"
    "  --modes LIST        comma-separated modes to run (default: all; a listed\n"
    "                      mode the package lacks fails, an unlisted one skips)\n"
    "  --runs N            runs per mode and reference set (default 3)\n"
    "  --json FILE         write the results as JSON ('-': stdout, no table)\n"
    "  --junit FILE        write JUnit XML: one testcase per package and mode\n"
    "  --no-verify         skip checking package manifests' sha256 hashes\n"
    "  --log LEVEL         library log level in the children\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 every package met its expectation (opened and passed every\n"
    "mode it has, or was refused as its manifest entry expects), 1 any did not\n"
    "(\"aotrun: COMPAT_FAILED: ...\" after the reports) or a named file failed,\n"
    "2 usage error.\n";

// One row of the report: a package in one mode, or the package as a whole
// (mode "open", "references" or "package") when it did not get that far.
struct Row {
  std::string mode;
  std::string outcome;  // pass mismatch error crash timeout refused opened skipped unavailable
  bool met = false;
  std::string message;
  std::string code;
  double wall_s = 0;
  nlohmann::json detail;  // the child's mode event
};

struct PackageRun {
  CompatEntry entry;
  double timeout_s = 0;
  nlohmann::json opened;  // the child's "opened" event, or null
  std::vector<Row> rows;
  ChildResult child;
  bool met = false;
};

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(sig);
  }
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// The child's "@@aotrun-compat" lines, parsed (a line that does not parse
// is skipped: the child may have died in the middle of one).
std::vector<nlohmann::json> child_events(const std::string& out) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(out);
  std::string line;
  const std::string prefix = "@@aotrun-compat ";
  while (std::getline(lines, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    try {
      events.push_back(nlohmann::json::parse(line.substr(prefix.size())));
    } catch (const nlohmann::json::exception&) {
    }
  }
  return events;
}

// A "refused" event: met when the entry expects it (with that code, if any).
Row refused_row(const nlohmann::json& e, const CompatEntry& entry) {
  Row r;
  r.mode = "open";
  r.outcome = "refused";
  r.code = e.value("code", "");
  r.message = e.value("message", "");
  const bool expected = entry.expect == "refused";
  r.met = expected && (entry.expect_code.empty() || entry.expect_code == r.code);
  if (expected && !r.met) {
    r.message = "refused with " + r.code + ", expected " + entry.expect_code + ": " + r.message;
  }
  return r;
}

// An "opened" event of an entry that expects to be refused.
Row opened_row(const CompatEntry& entry) {
  Row r;
  r.mode = "open";
  r.outcome = "opened";
  r.message = "expected to be refused" + (entry.expect_code.empty() ? std::string() : " with " + entry.expect_code) +
              ", but it opened";
  return r;
}

Row error_row(const nlohmann::json& e) {
  Row r;
  r.mode = e.value("stage", "package");
  r.outcome = "error";
  r.code = e.value("code", "");
  r.message = e.value("message", "");
  return r;
}

Row mode_row(const nlohmann::json& e) {
  Row r;
  r.mode = e.value("mode", "");
  r.outcome = e.value("status", "");
  r.code = e.value("code", "");
  r.message = e.value("message", e.value("reason", ""));
  r.wall_s = e.value("wall_s", 0.0);
  r.detail = e;
  r.met = r.outcome == "pass" || r.outcome == "skipped";
  if (r.outcome == "error" && r.message.empty()) r.message = "failed";
  return r;
}

// The row of a child that ended before its "done" event: timed out, killed
// by a signal or exited early, in `mode` (where it got to), with the end of
// its stderr and the modes it did not run.
Row unfinished_row(const PackageRun& p, const std::string& mode, const std::vector<std::string>& finished) {
  const ChildResult& c = p.child;
  Row r;
  r.mode = mode;
  r.wall_s = c.wall_s;
  if (c.timed_out) {
    r.outcome = "timeout";
    r.message = "killed after " + fixed(p.timeout_s, 1) + " s, the time limit";
    r.code = "TIMEOUT";
  } else if (c.signal != 0) {
    r.outcome = "crash";
    r.code = signal_name(c.signal);
    r.message = "killed by " + signal_name(c.signal) + " (" + strsignal(c.signal) + ")";
  } else {
    r.outcome = "error";
    r.code = "EXIT_" + std::to_string(c.exit_code);
    r.message = "exited with status " + std::to_string(c.exit_code) + " before it finished";
  }
  const std::string tail = last_line(c.err_tail);
  if (!tail.empty()) r.message += "; stderr: " + tail;
  std::vector<std::string> not_run;
  const std::vector<std::string> wanted = p.entry.modes.empty() ? compat_mode_names() : p.entry.modes;
  if (!p.opened.is_null()) {
    for (const std::string& m : wanted) {
      if (m != r.mode && std::find(finished.begin(), finished.end(), m) == finished.end()) not_run.push_back(m);
    }
  }
  if (!not_run.empty()) {
    std::string list;
    for (const std::string& m : not_run) list += (list.empty() ? "" : ", ") + m;
    r.message += " (not run: " + list + ")";
  }
  return r;
}

// The child's events -> rows, and whether the package met its expectation.
void interpret(PackageRun& p) {
  bool done = false, refused = false;
  std::string started;  // a mode started and not finished
  std::vector<std::string> finished;
  std::string stage = "open";
  for (const nlohmann::json& e : child_events(p.child.out)) {
    const std::string ev = e.value("event", "");
    if (ev == "refused") {
      refused = true;
      p.rows.push_back(refused_row(e, p.entry));
    } else if (ev == "opened") {
      p.opened = e;
      stage = "references";
      if (p.entry.expect == "refused") p.rows.push_back(opened_row(p.entry));
    } else if (ev == "error") {
      p.rows.push_back(error_row(e));
    } else if (ev == "mode_start") {
      started = e.value("mode", "");
      stage = "package";
    } else if (ev == "mode") {
      p.rows.push_back(mode_row(e));
      finished.push_back(p.rows.back().mode);
      started.clear();
    } else if (ev == "done") {
      done = true;
    }
  }
  if (!done) {
    const std::string mode = started.empty() ? (refused ? "package" : (p.opened.is_null() ? "open" : stage)) : started;
    p.rows.push_back(unfinished_row(p, mode, finished));
  }
  p.met = !p.rows.empty();
  for (const Row& r : p.rows) p.met = p.met && r.met;
}

// --- reports -----------------------------------------------------------------

std::string diff_text(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.value("identical", false)) return "identical";
  const nlohmann::json& m = v["max_abs_diff"];
  return m.is_null() ? "differs" : "max diff " + number_text(m.get<double>(), false);
}

void print_table(const std::vector<PackageRun>& runs, std::ostream& out) {
  Table t;
  t.add({"PACKAGE", "FORMAT", "MODE", "RESULT", "VS REFERENCE", "VS THREADED", "TIME", "NOTE"});
  for (const PackageRun& p : runs) {
    const std::string format = p.opened.is_null() ? "-" : p.opened.value("format", "");
    for (const Row& r : p.rows) {
      std::string result = r.outcome;
      if (r.outcome == "refused" || r.outcome == "error") result += " " + r.code;
      if (r.outcome == "crash") result += " " + r.code;
      const nlohmann::json sets = r.detail.is_null() ? nlohmann::json() : r.detail.value("sets", nlohmann::json());
      if (sets.is_array() && sets.size() > 1 && r.outcome != "pass") {
        result += " (" + std::to_string(r.detail.value("sets_passed", 0)) + "/" + std::to_string(sets.size()) +
                  " sets passed)";
      }
      if (!r.met) result = "FAIL: " + result;
      std::string ref = "-", thr = "-";
      if (!r.detail.is_null()) {
        ref = diff_text(r.detail.value("vs_reference", nlohmann::json()));
        thr = diff_text(r.detail.value("vs_threaded", nlohmann::json()));
      }
      const std::string note = r.outcome == "skipped" || r.outcome == "unavailable" ? r.message : "";
      t.add({p.entry.label, format, r.mode, result, ref, thr, r.wall_s > 0 ? fixed(r.wall_s, 2) + " s" : "-", note});
    }
  }
  t.print(out);
  bool header = false;
  for (const PackageRun& p : runs) {
    for (const Row& r : p.rows) {
      if (r.met) continue;
      if (!header) {
        out << "\nfailures\n";
        header = true;
      }
      out << "  " << p.entry.label << " [" << r.mode << "]: " << r.message << '\n';
      // Every set of the mode, each with its own verdict.
      const nlohmann::json sets = r.detail.is_null() ? nlohmann::json() : r.detail.value("sets", nlohmann::json());
      for (size_t s = 0; sets.is_array() && sets.size() > 1 && s < sets.size(); ++s) {
        const nlohmann::json& set = sets[s];
        out << "    set " << set.value("set", "") << ": " << set.value("status", "")
            << (set.contains("message") ? " " + set.value("code", "") + ": " + set.value("message", "") : "") << '\n';
      }
      if (r.outcome == "crash" || r.outcome == "timeout" || (r.outcome == "error" && r.code.rfind("EXIT_", 0) == 0)) {
        // The end of its stderr, a few lines.
        std::vector<std::string> lines;
        std::istringstream in(p.child.err_tail);
        std::string l;
        while (std::getline(in, l)) lines.push_back(l);
        const size_t from = lines.size() > 6 ? lines.size() - 6 : 0;
        for (size_t i = from; i < lines.size(); ++i) out << "    | " << lines[i] << '\n';
      }
    }
  }
}

struct Totals {
  size_t packages = 0, packages_met = 0, rows = 0, passed = 0, skipped = 0, failed = 0, refused_expected = 0;
};

Totals totals(const std::vector<PackageRun>& runs) {
  Totals t;
  for (const PackageRun& p : runs) {
    ++t.packages;
    if (p.met) ++t.packages_met;
    for (const Row& r : p.rows) {
      ++t.rows;
      if (!r.met) {
        ++t.failed;
      } else if (r.outcome == "skipped") {
        ++t.skipped;
      } else if (r.outcome == "refused") {
        ++t.refused_expected;
      } else {
        ++t.passed;
      }
    }
  }
  return t;
}

nlohmann::ordered_json report_json(const std::vector<PackageRun>& runs, const Totals& t, double wall_s, int jobs) {
  nlohmann::ordered_json j;
  j["library_version"] = aotrun_version_string();
  j["jobs"] = jobs;
  j["wall_s"] = wall_s;
  j["tolerance_defaults"] = {
      {"source", "torch.testing.assert_close"},         {"float16", {{"rtol", 1e-3}, {"atol", 1e-5}}},
      {"bfloat16", {{"rtol", 1.6e-2}, {"atol", 1e-5}}}, {"float32", {{"rtol", 1.3e-6}, {"atol", 1e-5}}},
      {"float64", {{"rtol", 1e-7}, {"atol", 1e-7}}},    {"integer_and_bool", {{"rtol", 0}, {"atol", 0}}}};
  nlohmann::ordered_json packages = nlohmann::ordered_json::array();
  for (const PackageRun& p : runs) {
    nlohmann::ordered_json e;
    e["label"] = p.entry.label;
    e["path"] = p.entry.path;
    e["expect"] = {
        {"outcome", p.entry.expect},
        {"code", p.entry.expect_code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p.entry.expect_code)}};
    e["met"] = p.met;
    e["rtol"] = p.entry.rtol ? nlohmann::ordered_json(*p.entry.rtol) : nlohmann::ordered_json();
    e["atol"] = p.entry.atol ? nlohmann::ordered_json(*p.entry.atol) : nlohmann::ordered_json();
    nlohmann::ordered_json sets = nlohmann::ordered_json::array();
    for (const ReferenceSet& s : p.entry.sets)
      sets.push_back({{"name", s.name}, {"inputs", s.inputs}, {"outputs", s.outputs}});
    e["sets"] = sets;
    if (!p.opened.is_null()) {
      e["package"] = {{"name", p.opened.value("name", "")},
                      {"format", p.opened.value("format", "")},
                      {"abi_version", p.opened.value("abi_version", "")},
                      {"device", p.opened.value("device", "")},
                      {"modes", p.opened.value("modes", nlohmann::json::object())}};
    } else {
      e["package"] = nullptr;
    }
    const ChildResult& c = p.child;
    e["child"] = {
        {"exit_code", c.exited ? nlohmann::ordered_json(c.exit_code) : nlohmann::ordered_json()},
        {"signal", c.signal != 0 ? nlohmann::ordered_json(c.signal) : nlohmann::ordered_json()},
        {"signal_name", c.signal != 0 ? nlohmann::ordered_json(signal_name(c.signal)) : nlohmann::ordered_json()},
        {"timed_out", c.timed_out},
        {"timeout_s", p.timeout_s},
        {"wall_s", c.wall_s},
        {"stderr_bytes", c.err_bytes},
        {"stderr_tail", c.err_tail}};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const Row& r : p.rows) {
      nlohmann::ordered_json row = {
          {"mode", r.mode},       {"outcome", r.outcome},
          {"met", r.met},         {"code", r.code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.code)},
          {"message", r.message}, {"wall_s", r.wall_s}};
      if (!r.detail.is_null()) {
        for (const char* key : {"effective_mode", "runs", "vs_reference", "vs_threaded", "sets_passed", "sets"}) {
          if (r.detail.contains(key)) row[key] = r.detail[key];
        }
      }
      rows.push_back(row);
    }
    e["rows"] = rows;
    packages.push_back(e);
  }
  j["packages"] = packages;
  j["summary"] = {{"packages", t.packages}, {"packages_met", t.packages_met},
                  {"rows", t.rows},         {"passed", t.passed},
                  {"skipped", t.skipped},   {"refused_as_expected", t.refused_expected},
                  {"failed", t.failed}};
  j["passed"] = t.failed == 0;
  return j;
}

// XML text: escaped, and without the control characters XML 1.0 forbids.
std::string xml(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += "?";
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

// Valid UTF-8 is kept; any other byte becomes '?'.
std::string utf8_clean(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n != 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (ok) {
      out.append(s, i, n);
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

void write_junit(const std::vector<PackageRun>& runs, const Totals& t, double wall_s, std::ostream& out) {
  size_t failures = 0, errors = 0;
  for (const PackageRun& p : runs) {
    for (const Row& r : p.rows) {
      if (r.met) continue;
      if (r.outcome == "mismatch" || r.outcome == "opened" || r.outcome == "refused" || r.outcome == "unavailable") {
        ++failures;
      } else {
        ++errors;
      }
    }
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"aotrun compat\" tests=\"" << t.rows << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" skipped=\"" << t.skipped << "\" time=\"" << fixed(wall_s, 3) << "\">\n";
  out << "  <testsuite name=\"aotrun compat\" tests=\"" << t.rows << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" skipped=\"" << t.skipped << "\" time=\"" << fixed(wall_s, 3) << "\">\n";
  for (const PackageRun& p : runs) {
    const std::string err =
        p.child.err_tail.size() > 16384 ? p.child.err_tail.substr(p.child.err_tail.size() - 16384) : p.child.err_tail;
    for (const Row& r : p.rows) {
      out << "    <testcase classname=\"" << xml(utf8_clean(p.entry.label)) << "\" name=\"" << xml(r.mode)
          << "\" time=\"" << fixed(r.wall_s, 3) << "\">\n";
      if (!r.met) {
        const bool failure =
            r.outcome == "mismatch" || r.outcome == "opened" || r.outcome == "refused" || r.outcome == "unavailable";
        const std::string message = r.outcome + (r.code.empty() ? "" : " " + r.code) + ": " + r.message;
        out << "      <" << (failure ? "failure" : "error") << " type=\"" << xml(r.outcome) << "\" message=\""
            << xml(utf8_clean(message)) << "\">" << xml(utf8_clean(message)) << "</" << (failure ? "failure" : "error")
            << ">\n";
      } else if (r.outcome == "skipped") {
        out << "      <skipped message=\"" << xml(utf8_clean(r.message)) << "\"/>\n";
      }
      if (!err.empty() && (!r.met || r.outcome != "skipped")) {
        out << "      <system-err>" << xml(utf8_clean(err)) << "</system-err>\n";
      }
      out << "    </testcase>\n";
    }
  }
  out << "  </testsuite>\n</testsuites>\n";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) throw Failure("IO_ERROR", "cannot write '" + path + "'");
}

// The sweep's settings from the command line (an entry's own win).
struct SweepOptions {
  double timeout_s = 0;
  int jobs = 1;
  int runs = 3;
  std::optional<double> rtol, atol;
  std::vector<std::string> modes;  // empty: every mode
};

std::vector<std::string> modes_option(const Args& args) {
  std::vector<std::string> modes;
  if (args.has("modes")) {
    std::stringstream ss(args.get("modes"));
    std::string m;
    while (std::getline(ss, m, ',')) {
      const auto& names = compat_mode_names();
      if (std::find(names.begin(), names.end(), m) == names.end()) {
        throw UsageError("compat", "unknown mode '" + m + "' in --modes (threaded, single_threaded, graph)");
      }
      modes.push_back(m);
    }
  }
  return modes;
}

SweepOptions sweep_options(const Args& args) {
  SweepOptions o;
  o.timeout_s = args.get_double("timeout", 120, 0.001, 1e7);
  o.jobs = static_cast<int>(args.get_int("jobs", 1, 1, 256));
  o.runs = static_cast<int>(args.get_int("runs", 3, 1, 1000));
  if (args.has("rtol")) o.rtol = args.get_double("rtol", 0, 0, 1e300);
  if (args.has("atol")) o.atol = args.get_double("atol", 0, 0, 1e300);
  o.modes = modes_option(args);
  return o;
}

// Every package to sweep, found under PATHs then listed in manifests, each
// with the command line's settings where its entry has none.
std::vector<PackageRun> planned_runs(const Args& args, const SweepOptions& o) {
  std::vector<CompatEntry> entries;
  for (const std::string& path : args.positionals()) {
    for (CompatEntry& e : discover_packages(path)) entries.push_back(std::move(e));
  }
  for (const std::string& path : args.all("manifest")) {
    for (CompatEntry& e : read_compat_manifest(path)) entries.push_back(std::move(e));
  }
  if (entries.empty()) throw Failure(AOTRUN_ERR_NOT_FOUND, "no packages found to sweep");
  std::vector<PackageRun> results(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    CompatEntry& e = entries[i];
    if (!e.rtol) e.rtol = o.rtol;
    if (!e.atol) e.atol = o.atol;
    if (e.modes.empty()) e.modes = o.modes;
    if (args.has("no-verify")) e.verify_hashes = false;
    results[i].entry = e;
    results[i].timeout_s = e.timeout_s.value_or(o.timeout_s);
  }
  return results;
}

// Runs every package in a child of its own (`aotrun compat-one`), at most
// `jobs` at once, and interprets each child's events as it ends.
class SweepRunner {
 public:
  SweepRunner(std::vector<PackageRun>& results, const Args& args, const SweepOptions& options)
      : results_(results), args_(args), options_(options) {}

  // Until every package has ended; returns the sweep's wall time, seconds.
  double run() {
    self_ = self_executable();
    install_child_reaper();
    progress_ = isatty(STDERR_FILENO) != 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (finished_ < results_.size()) {
      start_children();
      wait_for_output();
      reap_ended();
    }
    if (progress_) std::cerr << "\r\033[K" << std::flush;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  std::vector<std::string> child_argv(const PackageRun& p) const {
    std::vector<std::string> argv = {
        self_, "compat-one", "--entry", entry_to_json(p.entry).dump(), "--runs", std::to_string(options_.runs)};
    if (args_.has("log")) {
      argv.push_back("--log");
      argv.push_back(args_.get("log"));
    }
    return argv;
  }

  // Up to `jobs` children running.
  void start_children() {
    while (static_cast<int>(running_.size()) < options_.jobs && next_ < results_.size()) {
      PackageRun& p = results_[next_];
      running_.emplace_back(next_, std::make_unique<Child>(child_argv(p), p.timeout_s, 16u << 20, 64u << 10));
      ++next_;
      show_progress();
    }
  }

  // Until a child has output, or 50 ms, or the nearest time limit.
  void wait_for_output() const {
    std::vector<pollfd> fds;
    double wait_s = 0.05;
    for (const auto& [index, child] : running_) {
      for (int fd : child->fds()) fds.push_back({fd, POLLIN, 0});
      wait_s = std::min(wait_s, child->remaining_s());
    }
    ::poll(fds.data(), fds.size(), static_cast<int>(std::ceil(wait_s * 1000)));
  }

  // Reads each child's output; a child that has ended becomes its rows.
  void reap_ended() {
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->second->poll()) {
        PackageRun& p = results_[it->first];
        p.child = it->second->result();
        interpret(p);
        ++finished_;
        it = running_.erase(it);
        show_progress();
      } else {
        ++it;
      }
    }
  }

  // "[finished/total] the packages running", on a terminal.
  void show_progress() const {
    if (!progress_) return;
    std::string names;
    for (const auto& [index, child] : running_) names += (names.empty() ? "" : ", ") + results_[index].entry.label;
    std::string line = "[" + std::to_string(finished_) + "/" + std::to_string(results_.size()) + "] " + names;
    if (line.size() > 100) line = line.substr(0, 97) + "...";
    std::cerr << "\r\033[K" << line << std::flush;
  }

  std::vector<PackageRun>& results_;
  const Args& args_;
  const SweepOptions& options_;
  std::string self_;
  bool progress_ = false;
  std::vector<std::pair<size_t, std::unique_ptr<Child>>> running_;
  size_t next_ = 0, finished_ = 0;
};

// --json and --junit files, then the JSON (--json -) or the table and a
// summary on stdout.
void write_reports(const Args& args, const std::vector<PackageRun>& results, const Totals& t, double wall_s, int jobs) {
  const bool json_stdout = args.get("json") == "-";
  const nlohmann::ordered_json j = report_json(results, t, wall_s, jobs);
  if (args.has("json") && !json_stdout) write_file(args.get("json"), j.dump(2) + "\n");
  if (args.has("junit")) {
    std::ostringstream x;
    write_junit(results, t, wall_s, x);
    write_file(args.get("junit"), x.str());
  }
  if (json_stdout) {
    std::cout << j.dump(2) << '\n';
  } else {
    print_table(results, std::cout);
    std::cout << '\n'
              << t.packages << (t.packages == 1 ? " package" : " packages") << ", " << t.rows << " rows: " << t.passed
              << " passed, " << t.skipped << " skipped, " << t.refused_expected << " refused as expected, " << t.failed
              << " failed (" << fixed(wall_s, 2) << " s)\n";
  }
  std::cout.flush();
}

}  // namespace

int compat_main(int argc, char** argv, int begin) {
  auto specs = common_options();
  for (const char* name : {"timeout", "rtol", "atol", "modes", "runs", "json", "junit"}) {
    specs.push_back({name, true, false});
  }
  specs.push_back({"jobs", true, false, 'j'});
  specs.push_back({"manifest", true, true});
  const Args args = Args::parse("compat", specs, argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp;
    return kExitOk;
  }
  apply_log_option(args);
  const SweepOptions options = sweep_options(args);
  if (args.positionals().empty() && !args.has("manifest")) {
    throw UsageError("compat", "missing what to sweep (PATH or --manifest FILE)");
  }
  std::vector<PackageRun> results = planned_runs(args, options);
  const double wall_s = SweepRunner(results, args, options).run();
  const Totals t = totals(results);
  write_reports(args, results, t, wall_s, options.jobs);
  if (t.failed != 0) {
    throw Failure("COMPAT_FAILED", std::to_string(t.packages - t.packages_met) + " of " + std::to_string(t.packages) +
                                       " packages did not meet their expectation (" + std::to_string(t.failed) +
                                       (t.failed == 1 ? " row" : " rows") + " failed)");
  }
  return kExitOk;
}

}  // namespace aotrun::cli
