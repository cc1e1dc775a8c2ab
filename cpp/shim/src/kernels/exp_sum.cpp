// row[j] = exp(row[j] - max) and their sum: the inner loop of attention's
// softmax. AVX-512 (Sleef, 1 ulp) where the CPU has it, else libm.
#include <cmath>
#include <cstdint>

#include "kernels.hpp"

namespace aotrun::shim::kernels {

float exp_sum_avx512(float* row, int64_t n, float max);

namespace {

float exp_sum_scalar(float* row, int64_t n, float max) {
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max);
    sum += row[j];
  }
  return sum;
}

}  // namespace

float exp_sum(float* row, int64_t n, float max) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512 ? exp_sum_avx512(row, n, max) : exp_sum_scalar(row, n, max);
}

}  // namespace aotrun::shim::kernels
