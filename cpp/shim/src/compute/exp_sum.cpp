// row[j] = exp(row[j] - max) and their sum: the inner loop of attention's
// softmax. Sleef's 1-ulp expf on AVX-512 or AVX2 (with FMA), whichever is the
// widest the CPU has, else libm. AOTRUN_SHIM_MAX_ISA=avx2 or =scalar caps the
// choice, so that an AVX-512 machine also proves the narrower paths (issue
// #41: the tests must pass on every x86 host).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {

float exp_sum_avx512(float* row, int64_t n, float max);
float exp_sum_avx2(float* row, int64_t n, float max);

namespace {

float exp_sum_scalar(float* row, int64_t n, float max) {
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max);
    sum += row[j];
  }
  return sum;
}

using ExpSum = float (*)(float*, int64_t, float);

ExpSum choose() {
  const char* cap = std::getenv("AOTRUN_SHIM_MAX_ISA");
  const bool allow512 = cap == nullptr || std::strcmp(cap, "avx512") == 0;
  const bool allow2 = allow512 || std::strcmp(cap, "avx2") == 0;
  if (allow512 && __builtin_cpu_supports("avx512f")) return &exp_sum_avx512;
  if (allow2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &exp_sum_avx2;
  return &exp_sum_scalar;
}

}  // namespace

float exp_sum(float* row, int64_t n, float max) {
  static const ExpSum f = choose();
  return f(row, n, max);
}

}  // namespace aotrun::shim::kernels
