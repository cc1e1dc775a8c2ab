// The shim's vector ISA choice (vector_isa.hpp).
#include "compute/vector_isa.hpp"

#include <cstdlib>
#include <cstring>

namespace aotrun::shim::kernels {
namespace {

VectorIsa choose() {
  const char* cap = std::getenv("AOTRUN_SHIM_MAX_ISA");
  const bool allow512 = cap == nullptr || std::strcmp(cap, "avx512") == 0;
  const bool allow2 = allow512 || std::strcmp(cap, "avx2") == 0;
  if (allow512 && __builtin_cpu_supports("avx512f")) return VectorIsa::kAvx512;
  if (allow2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::kAvx2;
  return VectorIsa::kScalar;
}

}  // namespace

VectorIsa vector_isa() {
  static const VectorIsa isa = choose();
  return isa;
}

}  // namespace aotrun::shim::kernels
