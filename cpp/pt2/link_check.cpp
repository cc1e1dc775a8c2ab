#include "pt2/link_check.hpp"

#include <dlfcn.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cctype>
#include <map>

#include "loader/elf_symbols.hpp"
#include "loader/version_check.hpp"
#include "util/error.hpp"

namespace aotrun::pt2 {
namespace {

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
                                list_names(lacking) + "; running it would die of SIGILL (export it again on, or for, " +
                                "this machine's instruction set)");
  }
  // Private to this open (not cached). A diagnosis, not a gate: a library
  // whose section headers cannot be read is left to dlopen.
  ElfDynamicSymbols model;
  try {
    model = read_elf_dynamic_symbols(so, "aoti_");
  } catch (const Error&) {
    return;
  }

  // The shim functions the model calls, against the libtorch it would bind to.
  Dl_info info{};
  const ElfDynamicSymbols* lib = nullptr;
  if (::dladdr(reinterpret_cast<void*>(shim.delete_tensor_object), &info) != 0 && info.dli_fname != nullptr &&
      (lib = cached_elf_symbols(info.dli_fname)) != nullptr) {
    const std::string torch = info.dli_fname;
    std::vector<std::string> missing;
    for (const auto& s : model.undefined) {
      if (s.rfind("aoti_", 0) == 0 && !std::binary_search(lib->defined.begin(), lib->defined.end(), s)) {
        missing.push_back(s);
      }
    }
    if (!missing.empty()) {
      fail(Code::LoadFailed, "package '" + name + "' calls " + std::to_string(missing.size()) +
                                 " function(s) of libtorch's C shim that " + torch +
                                 " does not export: " + list_names(missing) +
                                 " (the package was exported by a newer torch than this libtorch: run it with "
                                 "the libtorch of the release that exported it, or a newer one)");
    }
  }

  // Symbol versions, against the libraries this process already has.
  check_symbol_versions(model, "package '" + name + "' (" + so + ")");
}

}  // namespace aotrun::pt2
