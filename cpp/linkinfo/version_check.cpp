#include "linkinfo/version_check.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/error.hpp"

namespace aotrun {
namespace {

// The file this process loaded as `soname` ("libstdc++.so.6"), or "" if it
// has not loaded one (dlopen would then search for it, and say so itself).
std::string loaded_path(const std::string& soname) {
  void* h = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return "";
  std::string path;
  struct link_map* map = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) path = map->l_name;
  ::dlclose(h);  // drops the reference NOLOAD took
  return path;
}

}  // namespace

std::string list_names(const std::vector<std::string>& names, size_t max) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max) s += " and " + std::to_string(names.size() - max) + " more";
  return s;
}

const ElfDynamicSymbols* cached_elf_symbols(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ElfDynamicSymbols>> cache;  // NULL: unreadable
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) {
    std::unique_ptr<ElfDynamicSymbols> tables;
    try {
      tables = std::make_unique<ElfDynamicSymbols>(read_elf_dynamic_symbols(path, "aoti_"));
    } catch (const Error&) {
    }
    it = cache.emplace(path, std::move(tables)).first;
  }
  return it->second.get();
}

void check_symbol_versions(const std::string& so, const std::string& who) {
  // A diagnosis, not a gate: tables the dynamic loader does not need
  // (section headers) may be missing or damaged in a library it loads fine,
  // so a file that cannot be read here is left to dlopen.
  ElfDynamicSymbols tables;
  try {
    tables = read_elf_dynamic_symbols(so, "aoti_");
  } catch (const Error&) {
    return;
  }
  check_symbol_versions(tables, who);
}

std::vector<VersionFinding> version_findings(const ElfDynamicSymbols& model) {
  std::vector<VersionFinding> out;
  for (const auto& need : model.needs) {
    const auto us = need.version.find_last_of('_');
    const std::string family = need.version.substr(0, us == std::string::npos ? need.version.size() : us);
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const VersionFinding& f) { return f.file == need.file && f.family == family; });
    if (it == out.end()) {
      VersionFinding f;
      f.file = need.file;
      f.family = family;
      f.loaded = loaded_path(need.file);
      if (const ElfDynamicSymbols* lib = f.loaded.empty() ? nullptr : cached_elf_symbols(f.loaded)) {
        for (const auto& v : lib->versions) {
          const auto vus = v.find_last_of('_');
          if (vus == std::string::npos || v.compare(0, vus, family) != 0 || vus != family.size()) continue;
          if (f.newest_available.empty() || version_less(f.newest_available, v)) f.newest_available = v;
        }
      }
      it = out.insert(out.end(), std::move(f));
    }
    if (std::find(it->needed.begin(), it->needed.end(), need.version) != it->needed.end()) continue;
    it->needed.push_back(need.version);
    const ElfDynamicSymbols* lib = it->loaded.empty() ? nullptr : cached_elf_symbols(it->loaded);
    if (lib != nullptr && std::find(lib->versions.begin(), lib->versions.end(), need.version) == lib->versions.end()) {
      it->missing.push_back(need.version);
    }
  }
  for (auto& f : out) {
    std::stable_sort(f.needed.begin(), f.needed.end(), version_less);
    std::stable_sort(f.missing.begin(), f.missing.end(), version_less);
  }
  return out;
}

void check_symbol_versions(const ElfDynamicSymbols& model, const std::string& who) {
  check_symbol_versions(version_findings(model), who);
}

void check_symbol_versions(const std::vector<VersionFinding>& findings, const std::string& who) {
  std::string what;
  for (const auto& f : findings) {
    if (f.missing.empty()) continue;
    what += (what.empty() ? "" : "; ") + list_names(f.missing) + " from " + f.loaded +
            (f.newest_available.empty() ? "" : " (which has up to " + f.newest_available + ")");
  }
  if (!what.empty()) {
    fail(Code::LoadFailed, who + " needs symbol versions this process's libraries lack: " + what +
                               ". It was built with a newer toolchain than this system's: run it where that "
                               "runtime is installed, or build it again on an older system");
  }
}

}  // namespace aotrun
