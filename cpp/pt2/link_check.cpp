#include "pt2/link_check.hpp"

#include <dlfcn.h>
#include <link.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "loader/elf_symbols.hpp"
#include "util/error.hpp"

namespace aotrun::pt2 {
namespace {

std::string joined(const std::vector<std::string>& v, size_t max = 12) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += " and " + std::to_string(v.size() - max) + " more";
  return s;
}

// Reading a large library's tables costs milliseconds: once per file. Of
// the exports only the shim's ("aoti_") are kept; the rest is not asked for.
const ElfDynamicSymbols& symbols_of(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, ElfDynamicSymbols> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) it = cache.emplace(path, read_elf_dynamic_symbols(path, "aoti_")).first;
  return it->second;
}

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

bool cpu_has(const char* feature) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports needs a literal argument.
  const std::string f = feature;
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "f16c") {  // not a feature name clang 14's __builtin_cpu_supports knows: CPUID.1:ECX bit 29
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
  }
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
#endif
  (void)feature;
  return true;
}

}  // namespace

std::vector<std::string> missing_cpu_features(const std::string& cpu_isa, bool (*has)(const char* feature)) {
  std::string isa;
  for (char c : cpu_isa) isa += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // The -m flags torch's cpu_vec_isa.py compiles each ISA's kernels with
  // (VecAVX2, VecAVX512, and VecAMX, which builds on AVX512).
  static const std::map<std::string, std::vector<const char*>> kNeeds = {
      {"avx2", {"avx2", "fma", "f16c"}},
      {"avx512", {"avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"}},
      {"amx_tile", {"avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"}},
  };
  std::vector<std::string> missing;
#if defined(__x86_64__)
  auto it = kNeeds.find(isa);
  if (it == kNeeds.end()) return missing;
  for (const char* f : it->second) {
    if (!has(f)) missing.push_back(f);
  }
#else
  (void)has;
  (void)kNeeds;
#endif
  return missing;
}

void check_model_requirements(const std::string& so, const std::string& name, const TorchShim& shim,
                              const std::string& cpu_isa) {
  const std::vector<std::string> lacking = missing_cpu_features(cpu_isa, &cpu_has);
  if (!lacking.empty()) {
    fail(Code::Unsupported, "package '" + name + "' was compiled for " + cpu_isa + " and this CPU lacks " +
                                joined(lacking) + "; running it would die of SIGILL (export it again on, or for, " +
                                "this machine's instruction set)");
  }
  const ElfDynamicSymbols& model = symbols_of(so);

  // The shim functions the model calls, against the libtorch it would bind to.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(shim.delete_tensor_object), &info) != 0 && info.dli_fname != nullptr) {
    const std::string torch = info.dli_fname;
    const ElfDynamicSymbols& lib = symbols_of(torch);
    std::vector<std::string> missing;
    for (const auto& s : model.undefined) {
      if (s.rfind("aoti_", 0) == 0 && !std::binary_search(lib.defined.begin(), lib.defined.end(), s)) {
        missing.push_back(s);
      }
    }
    if (!missing.empty()) {
      fail(Code::LoadFailed, "package '" + name + "' calls " + std::to_string(missing.size()) +
                                 " function(s) of libtorch's C shim that " + torch + " does not export: " +
                                 joined(missing) +
                                 " (the package was exported by a newer torch than this libtorch: run it with "
                                 "the libtorch of the release that exported it, or a newer one)");
    }
  }

  // Symbol versions, against the libraries this process already has.
  std::map<std::string, std::vector<std::string>> missing_by_file;
  for (const auto& need : model.needs) {
    const std::string path = loaded_path(need.file);
    if (path.empty()) continue;
    const ElfDynamicSymbols& lib = symbols_of(path);
    if (std::find(lib.versions.begin(), lib.versions.end(), need.version) == lib.versions.end()) {
      missing_by_file[path].push_back(need.version);
    }
  }
  if (!missing_by_file.empty()) {
    std::string what;
    for (const auto& [path, versions] : missing_by_file) {
      const ElfDynamicSymbols& lib = symbols_of(path);
      // The newest version of the same family, e.g. GLIBCXX_3.4.30.
      const std::string family = versions[0].substr(0, versions[0].find_last_of('_') + 1);
      std::string newest;
      for (const auto& v : lib.versions) {
        if (v.rfind(family, 0) == 0 && (newest.empty() || version_less(newest, v))) newest = v;
      }
      what += (what.empty() ? "" : "; ") + joined(versions) + " from " + path +
              (newest.empty() ? "" : " (which has up to " + newest + ")");
    }
    fail(Code::LoadFailed, "package '" + name + "' (" + so + ") needs symbol versions this process's libraries lack: " +
                               what + ". It was built with a newer toolchain than this system's: run it where "
                               "that runtime is installed, or export it again on an older system");
  }
}

}  // namespace aotrun::pt2
