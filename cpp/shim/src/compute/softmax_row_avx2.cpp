// The softmax row's passes with AVX2 and Sleef (compiled with -mavx2 -mfma;
// called only where the CPU has both: softmax_row.cpp). Tails are masked, as
// in the AVX-512 version, so every element takes the same path.
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <limits>

#include "compute/avx2_tail_mask.hpp"

namespace aotrun::shim::kernels {

// NaNs are skipped, as the scalar loop skips them: maxps returns its second
// operand (the running maximum) when the first is NaN.
float row_max_avx2(const float* row, int64_t n) {
  const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 a0 = lowest, a1 = lowest;  // two chains hide maxps's latency
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    a0 = _mm256_max_ps(_mm256_loadu_ps(row + j), a0);
    a1 = _mm256_max_ps(_mm256_loadu_ps(row + j + 8), a1);
  }
  for (; j + 8 <= n; j += 8) a0 = _mm256_max_ps(_mm256_loadu_ps(row + j), a0);
  if (j < n) {  // lanes past the row read as -inf
    const __m256i m = avx2_tail_mask(n - j);
    const __m256 x = _mm256_blendv_ps(lowest, _mm256_maskload_ps(row + j, m), _mm256_castsi256_ps(m));
    a1 = _mm256_max_ps(x, a1);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(a0, a1));
  float mx = lanes[0];
  for (float x : lanes) mx = x > mx ? x : mx;
  return mx;
}

float exp_sum_avx2(float* row, int64_t n, float max) {
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 x = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(row + j), vmax));
    _mm256_storeu_ps(row + j, x);
    acc = _mm256_add_ps(acc, x);
  }
  if (j < n) {
    const __m256i m = avx2_tail_mask(n - j);
    const __m256 x = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_maskload_ps(row + j, m), vmax));
    _mm256_maskstore_ps(row + j, m, x);
    acc = _mm256_add_ps(acc, _mm256_and_ps(x, _mm256_castsi256_ps(m)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float sum = 0.0f;
  for (float x : lanes) sum += x;
  return sum;
}

}  // namespace aotrun::shim::kernels
