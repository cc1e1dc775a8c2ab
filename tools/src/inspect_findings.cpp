#include "inspect_findings.hpp"

#include <sys/stat.h>

#include <iostream>

#include <aotrun/aotrun.hpp>

#include "error.hpp"
#include "linkinfo/link_findings.hpp"
#include "model_library.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

nlohmann::ordered_json or_null(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s);
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Whether the loader would refuse on what was found.
bool refuses(const aotrun::LinkFindings& f) {
  bool versions = false;
  for (const auto& v : f.versions) versions |= !v.missing.empty();
  return !f.elf_error.empty() || !f.shim_missing.empty() || versions || !f.cpu_missing.empty();
}

}  // namespace

nlohmann::ordered_json link_findings_json(const std::string& package_path) {
  const ModelLibrary lib(package_path);
  nlohmann::ordered_json j;
  j["library"] = or_null(lib.shown());
  if (lib.file().empty()) {
    j["error"] = lib.error();
    return j;
  }
  const ProviderView provider = provider_preview(package_path);
  const aotrun::LinkFindings f = aotrun::examine_library(lib.file(), provider.library, lib.cpu_isa());
  j["ok"] = !refuses(f);
  // What open would choose, asked of libaotrun (null name: it would refuse,
  // or the package calls no C shim).
  j["provider"] = {{"name", or_null(provider.name)},
                   {"library", or_null(provider.library)},
                   {"reason", or_null(provider.error.empty() ? provider.reason : provider.error)}};
  j["elf_error"] = or_null(f.elf_error);
  j["tables_error"] = or_null(f.tables_error);
  nlohmann::ordered_json missing = nlohmann::ordered_json::array();
  for (const auto& m : f.shim_missing) missing.push_back({{"name", m.name}, {"first_release", m.first_release}});
  j["shim"] = {{"called", f.shim_calls.size()}, {"libtorch", or_null(f.torch_library)}, {"missing", missing}};
  nlohmann::ordered_json versions = nlohmann::ordered_json::array();
  for (const auto& v : f.versions) {
    versions.push_back({{"library", v.file},
                        {"family", v.family},
                        {"newest_needed", v.needed.empty() ? "" : v.needed.back()},
                        {"needed", v.needed},
                        {"loaded", or_null(v.loaded)},
                        {"newest_available", or_null(v.newest_available)},
                        {"missing", v.missing}});
  }
  j["symbol_versions"] = versions;
  j["cpu"] = {{"isa", or_null(f.cpu_isa)}, {"missing", f.cpu_missing}};
  return j;
}

void link_findings_text(const std::string& package_path, std::ostream& out) {
  const ModelLibrary lib(package_path);
  out << "\npre-dlopen checks" << (lib.shown().empty() ? "" : " (" + lib.shown() + ")") << "\n";
  Table t(2);
  if (lib.file().empty()) {
    t.add({"library", "not examined: " + lib.error()});
    t.print(out);
    return;
  }
  const ProviderView provider = provider_preview(package_path);
  const aotrun::LinkFindings f = aotrun::examine_library(lib.file(), provider.library, lib.cpu_isa());
  if (!provider.name.empty()) {
    t.add({"provider", provider.name + ": " + provider.reason});
  } else if (!provider.reason.empty() || !provider.error.empty()) {
    t.add({"provider", "none: " + (provider.error.empty() ? provider.reason : provider.error)});
  }
  t.add({"image", f.elf_error.empty() ? "loadable by the dynamic loader" : "REFUSED: " + f.elf_error});
  if (!f.tables_error.empty()) t.add({"symbols", "not read: " + f.tables_error});
  if (!f.shim_calls.empty()) {
    const std::string n = std::to_string(f.shim_calls.size()) + " function(s) called";
    if (f.torch_library.empty()) {
      t.add({"libtorch shim", n + "; no libtorch to check them against (set AOTRUN_LIBTORCH)"});
    } else if (f.shim_missing.empty()) {
      t.add({"libtorch shim", n + ", all exported by " + f.torch_library});
    } else {
      t.add({"libtorch shim", n + ", " + std::to_string(f.shim_missing.size()) + " MISSING from " + f.torch_library});
      for (const auto& m : f.shim_missing) t.add({"", "  " + m.name + " (first in " + m.first_release + ")"});
    }
  } else if (f.tables_error.empty()) {
    t.add({"libtorch shim", "none called"});
  }
  for (const auto& v : f.versions) {
    std::string s = "needs up to " + v.needed.back() + " from " + v.file;
    if (v.loaded.empty()) {
      s += "; not loaded in this process (left to dlopen)";
    } else {
      s += "; " + v.loaded + " has up to " + (v.newest_available.empty() ? "?" : v.newest_available);
      s += v.missing.empty() ? ": ok" : ": MISSING " + joined(v.missing);
    }
    t.add({v.family, s});
  }
  if (f.cpu_isa.empty()) {
    t.add({"cpu isa", "not recorded by the package"});
  } else if (f.cpu_missing.empty()) {
    t.add({"cpu isa", "compiled for " + f.cpu_isa + "; this CPU has what it needs"});
  } else {
    t.add({"cpu isa", "compiled for " + f.cpu_isa + "; this CPU LACKS " + joined(f.cpu_missing)});
  }
  t.add({"verdict", refuses(f) ? "refused before dlopen" : "nothing found that refuses it"});
  t.print(out);
}

namespace {

// The refusal, then what the checks before dlopen found.
void show_refusal(const std::string& path, const std::string& code_name, const std::string& message, bool json) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // nothing to examine
  if (json) {
    nlohmann::ordered_json j;
    j["path"] = path;
    j["error"] = {{"code", code_name}, {"message", message}};
    j["link_findings"] = link_findings_json(path);
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << "package '" << path << "' was refused (" << code_name << ")\n";
    link_findings_text(path, std::cout);
  }
}

}  // namespace

Package open_or_show_findings(const std::string& path, const Args& args, bool json) {
  try {
    return open_package(path, args);
  } catch (const Failure& e) {
    show_refusal(path, e.code_name(), e.what(), json);
    throw;
  } catch (const aotrun::cxx::Error& e) {  // the C++ wrapper's form of the same
    show_refusal(path, e.code_name(), e.what(), json);
    throw;
  }
}

}  // namespace aotrun::cli
