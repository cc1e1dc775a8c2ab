#include "linkinfo/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cctype>
#include <map>

namespace aotrun {

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

}  // namespace aotrun
