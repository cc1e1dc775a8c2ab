// The two passes of attention's row softmax: the row's maximum, then
// row[j] = exp(row[j] - max) and their sum. AVX-512 or AVX2 (with FMA),
// whichever is the widest the CPU has, with Sleef's 1-ulp expf; else scalar
// code and libm. AOTRUN_SHIM_MAX_ISA=avx2 or =scalar caps the choice, so
// that an AVX-512 machine also proves the narrower paths (issue #41: the
// tests must pass on every x86 host). The maximum is exact on every path.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {

float row_max_avx512(const float* row, int64_t n);
float exp_sum_avx512(float* row, int64_t n, float max);
float row_max_avx2(const float* row, int64_t n);
float exp_sum_avx2(float* row, int64_t n, float max);

namespace {

float row_max_scalar(const float* row, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
  return mx;
}

float exp_sum_scalar(float* row, int64_t n, float max) {
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max);
    sum += row[j];
  }
  return sum;
}

struct RowKernels {
  float (*max)(const float*, int64_t);
  float (*exp_sum)(float*, int64_t, float);
};

RowKernels choose() {
  const char* cap = std::getenv("AOTRUN_SHIM_MAX_ISA");
  const bool allow512 = cap == nullptr || std::strcmp(cap, "avx512") == 0;
  const bool allow2 = allow512 || std::strcmp(cap, "avx2") == 0;
  if (allow512 && __builtin_cpu_supports("avx512f")) return {&row_max_avx512, &exp_sum_avx512};
  if (allow2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {&row_max_avx2, &exp_sum_avx2};
  }
  return {&row_max_scalar, &exp_sum_scalar};
}

const RowKernels& kernels() {
  static const RowKernels k = choose();
  return k;
}

}  // namespace

float row_max(const float* row, int64_t n) { return kernels().max(row, n); }

float exp_sum(float* row, int64_t n, float max) { return kernels().exp_sum(row, n, max); }

}  // namespace aotrun::shim::kernels
