// Whether the shim's own panel GEMM runs in this process, for tests whose
// expectations differ between it and oneDNN's packing (kernel_test.cpp,
// differential_frozen_test.cpp).
#pragma once

#include <cstdlib>
#include <cstring>

namespace aotrun_shim_test {

// Whether a constant float32 weight runs on the shim's panel GEMM
// (panel_gemm.hpp): the CPU has AVX-512, nothing caps the shim's vector
// ISA below it (vector_isa.cpp: unset or "avx512") and packing is not
// turned off or left to oneDNN.
inline bool panels_run() {
  const char* isa = std::getenv("AOTRUN_SHIM_MAX_ISA");
  const char* packing = std::getenv("AOTRUN_SHIM_PACKED_GEMM");
  if (isa != nullptr && std::strcmp(isa, "avx512") != 0) return false;
  if (packing != nullptr && (std::strcmp(packing, "0") == 0 || std::strcmp(packing, "onednn") == 0)) return false;
  return __builtin_cpu_supports("avx512f");
}

}  // namespace aotrun_shim_test
