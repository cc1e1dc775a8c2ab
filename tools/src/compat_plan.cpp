#include "compat_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "base/strings.hpp"
#include "error.hpp"

namespace fs = std::filesystem;

namespace aotrun::cli {

namespace {

// Whether directory `dir` is an aotrun package directory.
bool is_package_dir(const fs::path& dir) {
  const fs::path manifest = dir / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) return false;
  std::ifstream in(manifest);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object()) return true;  // broken: let the loader say so
    return j.contains("library") || j.value("format", std::string()) == "aotrun-package";
  } catch (const nlohmann::json::exception&) {
    return true;  // unparsable: a broken package, which the sweep reports
  }
}

// The stem that reference files are named after: mlp.pt2 -> mlp,
// libmlp.so -> libmlp, a directory -> its name.
std::string stem_of(const fs::path& path, bool is_dir) {
  if (is_dir) return path.filename().string();
  return path.stem().string();
}

// Reference sets beside `package` in `dir`.
std::vector<ReferenceSet> find_references(const fs::path& dir, const std::string& stem) {
  std::map<std::string, std::map<int, std::string>> ins, outs;
  std::map<std::string, std::string> st_in, st_out;
  std::error_code ec;
  const std::string prefix = stem + ".";
  static const std::regex npy_re(R"(^(?:([A-Za-z0-9_-]+)\.)?(in|out)([0-9]+)\.npy$)");
  static const std::regex st_re(R"(^(?:([A-Za-z0-9_-]+)\.)?(inputs|outputs)\.safetensors$)");
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0 || !e.is_regular_file(ec)) continue;
    const std::string rest = name.substr(prefix.size());
    std::smatch m;
    if (std::regex_match(rest, m, npy_re)) {
      const std::string set = m[1].matched ? m[1].str() : "default";
      auto& table = m[2] == "in" ? ins : outs;
      table[set][std::stoi(m[3])] = e.path().string();
    } else if (std::regex_match(rest, m, st_re)) {
      const std::string set = m[1].matched ? m[1].str() : "default";
      (m[2] == "inputs" ? st_in : st_out)[set] = e.path().string();
    }
  }
  std::map<std::string, ReferenceSet> sets;
  auto add = [&](const std::map<std::string, std::map<int, std::string>>& table, bool input) {
    for (const auto& [set, files] : table) {
      ReferenceSet& s = sets[set];
      s.name = set;
      for (const auto& [index, file] : files) (input ? s.inputs : s.outputs).push_back(file);
    }
  };
  add(ins, true);
  add(outs, false);
  for (const auto& [set, file] : st_in) {
    sets[set].name = set;
    sets[set].inputs.push_back(file);
  }
  for (const auto& [set, file] : st_out) {
    sets[set].name = set;
    sets[set].outputs.push_back(file);
  }
  std::vector<ReferenceSet> out;
  if (sets.count("default") != 0) out.push_back(sets["default"]);
  for (auto& [name, set] : sets) {
    if (name != "default") out.push_back(set);
  }
  return out;
}

CompatEntry entry_for(const fs::path& path, bool is_dir, const std::string& label) {
  CompatEntry e;
  e.path = path.string();
  e.label = label;
  e.sets = find_references(path.parent_path().empty() ? fs::path(".") : path.parent_path(), stem_of(path, is_dir));
  return e;
}

void walk(const fs::path& dir, std::vector<CompatEntry>& out) {
  std::vector<fs::directory_entry> entries;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) entries.push_back(e);
  std::sort(entries.begin(), entries.end(),
            [](const fs::directory_entry& a, const fs::directory_entry& b) { return a.path() < b.path(); });
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec)) {
      if (is_package_dir(e.path())) {
        out.push_back(entry_for(e.path(), true, e.path().string()));
      } else {
        walk(e.path(), out);
      }
    } else if (e.is_regular_file(ec) && (ends_with(name, ".pt2") || ends_with(name, ".so"))) {
      out.push_back(entry_for(e.path(), false, e.path().string()));
    }
  }
}

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "compat manifest '" + file + "': " + what);
}

std::optional<double> number_field(const nlohmann::json& j, const char* key, const std::string& file,
                                   const std::string& where) {
  if (!j.contains(key)) return std::nullopt;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number() || v.get<double>() < 0) bad(file, where + "." + key + " must be a number >= 0");
  return v.get<double>();
}

std::vector<std::string> string_list(const nlohmann::json& j, const std::string& file, const std::string& where,
                                     const fs::path& base) {
  if (!j.is_array()) bad(file, where + " must be a list of file names");
  std::vector<std::string> out;
  for (const nlohmann::json& v : j) {
    std::string s;
    if (v.is_string()) {
      s = v.get<std::string>();
    } else if (v.is_object() && v.contains("file") && v["file"].is_string()) {
      s = v["file"].get<std::string>();  // the fixture manifests' {"file": ...}
    } else {
      bad(file, where + " must be a list of file names");
    }
    if (base.empty() || fs::path(s).is_absolute()) {
      out.push_back(s);
    } else {
      out.push_back((base / s).string());
    }
  }
  return out;
}

void apply_common(CompatEntry& e, const nlohmann::json& j, const std::string& file, const std::string& where) {
  if (auto v = number_field(j, "rtol", file, where)) e.rtol = v;
  if (auto v = number_field(j, "atol", file, where)) e.atol = v;
  if (auto v = number_field(j, "timeout_s", file, where)) {
    if (*v <= 0) bad(file, where + ".timeout_s must be > 0");
    e.timeout_s = v;
  }
  if (j.contains("modes")) {
    const nlohmann::json& m = j["modes"];
    if (!m.is_array()) bad(file, where + ".modes must be a list");
    e.modes.clear();
    for (const nlohmann::json& v : m) {
      const auto& names = compat_mode_names();
      if (!v.is_string() || std::find(names.begin(), names.end(), v.get<std::string>()) == names.end()) {
        bad(file, where + ".modes: " + v.dump() + " is not threaded, single_threaded or graph");
      }
      e.modes.push_back(v.get<std::string>());
    }
  }
  if (j.contains("expect")) {
    const nlohmann::json& x = j["expect"];
    if (!x.is_object() || !x.contains("outcome") || !x["outcome"].is_string()) {
      bad(file, where + ".expect must be {\"outcome\": \"ok\" | \"refused\", \"code\": ...}");
    }
    e.expect = x["outcome"].get<std::string>();
    if (e.expect != "ok" && e.expect != "refused") {
      bad(file, where + ".expect.outcome must be \"ok\" or \"refused\", got '" + e.expect + "'");
    }
    if (x.contains("code")) {
      if (!x["code"].is_string()) bad(file, where + ".expect.code must be a code name such as LOAD_FAILED");
      e.expect_code = x["code"].get<std::string>();
      if (e.expect != "refused") bad(file, where + ".expect.code needs outcome \"refused\"");
    }
  }
  if (j.contains("batch")) {
    if (!j["batch"].is_number_integer() || j["batch"].get<int64_t>() < 0)
      bad(file, where + ".batch must be an integer >= 0");
    e.batch = j["batch"].get<int64_t>();
  }
  if (j.contains("verify_hashes")) {
    if (!j["verify_hashes"].is_boolean()) bad(file, where + ".verify_hashes must be true or false");
    e.verify_hashes = j["verify_hashes"].get<bool>();
  }
  if (j.contains("pt2_model")) {
    if (!j["pt2_model"].is_string()) bad(file, where + ".pt2_model must be a string");
    e.pt2_model = j["pt2_model"].get<std::string>();
  }
}

std::vector<ReferenceSet> sets_field(const nlohmann::json& j, const std::string& file, const std::string& where,
                                     const fs::path& base) {
  std::vector<ReferenceSet> sets;
  if (j.contains("sets")) {
    if (!j["sets"].is_object()) bad(file, where + ".sets must be an object of named sets");
    for (auto it = j["sets"].begin(); it != j["sets"].end(); ++it) {
      ReferenceSet s;
      s.name = it.key();
      const std::string w = where + ".sets." + it.key();
      if (!it->is_object()) bad(file, w + " must be {\"inputs\": [...], \"outputs\": [...]}");
      if (it->contains("inputs")) s.inputs = string_list((*it)["inputs"], file, w + ".inputs", base);
      if (it->contains("outputs")) s.outputs = string_list((*it)["outputs"], file, w + ".outputs", base);
      sets.push_back(std::move(s));
    }
    // "default" first, as in discovery.
    std::stable_partition(sets.begin(), sets.end(), [](const ReferenceSet& s) { return s.name == "default"; });
  }
  if (j.contains("inputs") || j.contains("outputs")) {
    ReferenceSet s;
    s.name = "default";
    if (j.contains("inputs")) s.inputs = string_list(j["inputs"], file, where + ".inputs", base);
    if (j.contains("outputs")) s.outputs = string_list(j["outputs"], file, where + ".outputs", base);
    sets.insert(sets.begin(), std::move(s));
  }
  return sets;
}

}  // namespace

const std::vector<std::string>& compat_mode_names() {
  static const std::vector<std::string> names = {"threaded", "single_threaded", "graph"};
  return names;
}

std::vector<CompatEntry> discover_packages(const std::string& root) {
  const fs::path p(root);
  std::error_code ec;
  if (!fs::exists(p, ec)) throw Failure(AOTRUN_ERR_NOT_FOUND, "'" + root + "' does not exist");
  std::vector<CompatEntry> out;
  if (fs::is_directory(p, ec)) {
    if (is_package_dir(p)) {
      out.push_back(entry_for(p, true, root));
    } else {
      walk(p, out);
    }
  } else {
    out.push_back(entry_for(p, false, root));
  }
  return out;
}

std::vector<CompatEntry> read_compat_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Failure(AOTRUN_ERR_NOT_FOUND, "cannot open compat manifest '" + path + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    bad(path, std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) bad(path, "must be a JSON object");
  const fs::path base = fs::path(path).parent_path();
  auto resolve = [&](const std::string& s) {
    return base.empty() || fs::path(s).is_absolute() ? s : (base / s).string();
  };
  CompatEntry defaults;
  if (j.contains("defaults")) {
    if (!j["defaults"].is_object()) bad(path, "defaults must be an object");
    apply_common(defaults, j["defaults"], path, "defaults");
  }
  std::vector<CompatEntry> out;
  if (j.contains("packages")) {
    if (!j["packages"].is_array()) bad(path, "packages must be a list");
    for (size_t i = 0; i < j["packages"].size(); ++i) {
      const nlohmann::json& p = j["packages"][i];
      const std::string where = "packages[" + std::to_string(i) + "]";
      if (p.is_string()) {
        // A bare path: discovered like a directory argument.
        for (CompatEntry& e : discover_packages(resolve(p.get<std::string>()))) {
          CompatEntry d = defaults;
          d.path = e.path;
          d.label = e.label;
          d.sets = e.sets;
          out.push_back(std::move(d));
        }
        continue;
      }
      if (!p.is_object() || !p.contains("path") || !p["path"].is_string()) {
        bad(path, where + " must be a path or an object with \"path\"");
      }
      CompatEntry e = defaults;
      e.path = resolve(p["path"].get<std::string>());
      e.label = p.value("name", p["path"].get<std::string>());
      apply_common(e, p, path, where);
      if (p.contains("references") && p["references"] == "auto") {
        const bool is_dir = fs::is_directory(e.path);
        const fs::path pp(e.path);
        e.sets = find_references(pp.parent_path().empty() ? fs::path(".") : pp.parent_path(), stem_of(pp, is_dir));
      } else {
        e.sets = sets_field(p, path, where, base);
      }
      out.push_back(std::move(e));
    }
  } else if (j.contains("models") && j["models"].is_object()) {
    // A fixture manifest (compat/aoti/fixtures/*/manifest.json): models with
    // an "archive" and named "sets"; its "tolerance" per dtype is PyTorch's
    // default, which applies anyway.
    for (auto it = j["models"].begin(); it != j["models"].end(); ++it) {
      const std::string where = "models." + it.key();
      if (!it->is_object() || !it->contains("archive") || !(*it)["archive"].is_string()) {
        bad(path, where + " needs \"archive\"");
      }
      CompatEntry e = defaults;
      e.path = resolve((*it)["archive"].get<std::string>());
      e.label = e.path;
      e.sets = sets_field(*it, path, where, base);
      out.push_back(std::move(e));
    }
  } else {
    bad(path, "has neither \"packages\" nor \"models\"");
  }
  return out;
}

nlohmann::json entry_to_json(const CompatEntry& e) {
  nlohmann::json j;
  j["path"] = e.path;
  j["label"] = e.label;
  nlohmann::json sets = nlohmann::json::array();
  for (const ReferenceSet& s : e.sets) sets.push_back({{"name", s.name}, {"inputs", s.inputs}, {"outputs", s.outputs}});
  j["sets"] = sets;
  if (e.rtol) j["rtol"] = *e.rtol;
  if (e.atol) j["atol"] = *e.atol;
  j["modes"] = e.modes;
  j["expect"] = e.expect;
  j["expect_code"] = e.expect_code;
  if (e.batch) j["batch"] = *e.batch;
  j["verify_hashes"] = e.verify_hashes;
  j["pt2_model"] = e.pt2_model;
  return j;
}

CompatEntry entry_from_json(const nlohmann::json& j) {
  CompatEntry e;
  e.path = j.at("path").get<std::string>();
  e.label = j.value("label", e.path);
  for (const nlohmann::json& s : j.at("sets")) {
    ReferenceSet r;
    r.name = s.at("name").get<std::string>();
    r.inputs = s.at("inputs").get<std::vector<std::string>>();
    r.outputs = s.at("outputs").get<std::vector<std::string>>();
    e.sets.push_back(std::move(r));
  }
  if (j.contains("rtol")) e.rtol = j["rtol"].get<double>();
  if (j.contains("atol")) e.atol = j["atol"].get<double>();
  e.modes = j.value("modes", std::vector<std::string>{});
  e.expect = j.value("expect", std::string("ok"));
  e.expect_code = j.value("expect_code", std::string());
  if (j.contains("batch")) e.batch = j["batch"].get<int64_t>();
  e.verify_hashes = j.value("verify_hashes", true);
  e.pt2_model = j.value("pt2_model", std::string());
  return e;
}

}  // namespace aotrun::cli
