// The vector extensions an AOTInductor model's kernels were compiled for
// (its AOTI_CPU_ISA) against the CPU running this process: a model built for
// more than the CPU has dies of SIGILL in its first kernel.
#pragma once

#include <string>
#include <vector>

namespace aotrun {

// Whether this CPU has `feature` (a __builtin_cpu_supports name: "avx2",
// "fma", "f16c", "avx512f", ...); true for names not checked here and off x86.
bool cpu_has(const char* feature);

// The CPU features `cpu_isa` ("AVX2", "AVX512", ...; case-insensitive)
// needs that `has(feature)` denies, in the names of
// __builtin_cpu_supports; empty when none is missing or the name is unknown
// here (not x86, or a name torch added later).
std::vector<std::string> missing_cpu_features(const std::string& cpu_isa, bool (*has)(const char* feature));

}  // namespace aotrun
