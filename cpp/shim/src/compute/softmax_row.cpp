// The two passes of attention's row softmax: the row's maximum, then
// row[j] = exp(row[j] - max) and their sum. AVX-512 or AVX2 (with FMA),
// whichever is the widest the CPU has, with Sleef's 1-ulp expf; else scalar
// code and libm (vector_isa.hpp chooses, AOTRUN_SHIM_MAX_ISA caps). The
// maximum is exact on every path.
#include <cmath>
#include <cstdint>
#include <limits>

#include "compute/vector_isa.hpp"
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
  switch (vector_isa()) {
    case VectorIsa::kAvx512: return {&row_max_avx512, &exp_sum_avx512};
    case VectorIsa::kAvx2: return {&row_max_avx2, &exp_sum_avx2};
    case VectorIsa::kScalar: break;
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
