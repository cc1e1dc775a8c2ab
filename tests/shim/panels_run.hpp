// Whether the shim's own panel GEMM runs in this process, for tests whose
// expectations differ between it and oneDNN's packing (kernel_test.cpp,
// differential_frozen_test.cpp).
#pragma once

#include <cpuid.h>

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

// Whether a frozen convolution of many channels may take the shim's own
// path (convolution_gemm.cpp: im2col + panels or packed GEMM) on this
// core where oneDNN runs below AVX-512: on AMD and Hygon cores, unless
// AOTRUN_SHIM_CONV_GEMM says otherwise ("1" anywhere, "0" nowhere).
inline bool conv_gemm_path_here() {
  const char* env = std::getenv("AOTRUN_SHIM_CONV_GEMM");
  if (env != nullptr && std::strcmp(env, "1") == 0) return true;
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
}

}  // namespace aotrun_shim_test
