#include "loader/version_check.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "util/error.hpp"

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

void check_symbol_versions(const ElfDynamicSymbols& model, const std::string& who) {
  std::map<std::string, std::vector<std::string>> missing_by_file;
  for (const auto& need : model.needs) {
    const std::string path = loaded_path(need.file);
    if (path.empty()) continue;
    const ElfDynamicSymbols* lib = cached_elf_symbols(path);
    if (lib != nullptr && std::find(lib->versions.begin(), lib->versions.end(), need.version) == lib->versions.end()) {
      missing_by_file[path].push_back(need.version);
    }
  }
  if (!missing_by_file.empty()) {
    std::string what;
    for (const auto& [path, versions] : missing_by_file) {
      const ElfDynamicSymbols* lib = cached_elf_symbols(path);  // readable: it found the versions missing
      // The newest version of the same family, e.g. GLIBCXX_3.4.30.
      const std::string family = versions[0].substr(0, versions[0].find_last_of('_') + 1);
      std::string newest;
      for (const auto& v : lib->versions) {
        if (v.rfind(family, 0) == 0 && (newest.empty() || version_less(newest, v))) newest = v;
      }
      what += (what.empty() ? "" : "; ") + list_names(versions) + " from " + path +
              (newest.empty() ? "" : " (which has up to " + newest + ")");
    }
    fail(Code::LoadFailed, who + " needs symbol versions this process's libraries lack: " + what +
                               ". It was built with a newer toolchain than this system's: run it where that "
                               "runtime is installed, or build it again on an older system");
  }
}

}  // namespace aotrun
