// The softmax's exponentials with AVX2 and Sleef (compiled with -mavx2
// -mfma; called only where the CPU has both: exp_sum.cpp). The tail is
// masked, as in the AVX-512 version, so every element takes the same path.
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

namespace aotrun::shim::kernels {

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
    alignas(32) int32_t lane_on[8];
    for (int k = 0; k < 8; ++k) lane_on[k] = k < n - j ? -1 : 0;
    const __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(lane_on));
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
