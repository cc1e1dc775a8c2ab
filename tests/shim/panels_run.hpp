// Whether the shim's own panel GEMM runs in this process, for tests whose
// expectations differ between it and oneDNN's packing (kernel_test.cpp,
// differential_frozen_test.cpp).
#pragma once

#include <cstdlib>
#include <cstring>

namespace aotrun_shim_test {

// Whether a constant float32 weight runs on the shim's panel GEMM
// (panel_gemm.hpp): the CPU has AVX-512, or AVX2 and FMA, nothing caps the
// shim's vector ISA below both (vector_isa.cpp: unset, "avx512" or
// "avx2") and packing is not turned off or left to oneDNN.
inline bool panels_run() {
  const char* isa = std::getenv("AOTRUN_SHIM_MAX_ISA");
  const char* packing = std::getenv("AOTRUN_SHIM_PACKED_GEMM");
  if (isa != nullptr && std::strcmp(isa, "avx512") != 0 && std::strcmp(isa, "avx2") != 0) return false;
  if (packing != nullptr && (std::strcmp(packing, "0") == 0 || std::strcmp(packing, "onednn") == 0)) return false;
  return __builtin_cpu_supports("avx512f") || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
}

// Whether a frozen linear's blob already in panel rows is read in place
// (packed_gemm.cpp): where panels run with AVX-512. The AVX2 kernel packs
// such a blob like any other weight.
inline bool panels_read_blobs_in_place() {
  const char* isa = std::getenv("AOTRUN_SHIM_MAX_ISA");
  return panels_run() && (isa == nullptr || std::strcmp(isa, "avx512") == 0) && __builtin_cpu_supports("avx512f");
}

}  // namespace aotrun_shim_test
