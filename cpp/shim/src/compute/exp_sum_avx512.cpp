// The softmax's exponentials with AVX-512 and Sleef (compiled with
// -mavx512f; called only where the CPU has it: exp_sum.cpp).
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

namespace aotrun::shim::kernels {

float exp_sum_avx512(float* row, int64_t n, float max) {
  const __m512 vmax = _mm512_set1_ps(max);
  __m512 acc = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 x = Sleef_expf16_u10(_mm512_sub_ps(_mm512_loadu_ps(row + j), vmax));
    _mm512_storeu_ps(row + j, x);
    acc = _mm512_add_ps(acc, x);
  }
  if (j < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - j)) - 1);
    const __m512 x = Sleef_expf16_u10(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + j), vmax));
    _mm512_mask_storeu_ps(row + j, m, x);
    acc = _mm512_add_ps(acc, _mm512_maskz_mov_ps(m, x));
  }
  // (_mm512_reduce_add_ps trips a false -Wuninitialized in GCC 12's header)
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc);
  float sum = 0.0f;
  for (float x : lanes) sum += x;
  return sum;
}

}  // namespace aotrun::shim::kernels
