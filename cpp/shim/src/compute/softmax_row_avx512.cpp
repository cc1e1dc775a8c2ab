// The softmax row's passes with AVX-512 and Sleef (compiled with -mavx512f;
// called only where the CPU has it: softmax_row.cpp).
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <limits>

#include "compute/avx512_tail_mask.hpp"

namespace aotrun::shim::kernels {
namespace {

// max(x, acc) lane by lane, written as a fully masked max because GCC 12's
// _mm512_max_ps passes _mm512_undefined_ps() and warns -Wuninitialized.
__m512 max_into(__m512 acc, __m512 x) { return _mm512_mask_max_ps(acc, 0xffff, x, acc); }

// (_mm512_reduce_max_ps trips the same false -Wuninitialized in GCC 12's header)
float lanes_max(__m512 acc) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc);
  float mx = lanes[0];
  for (float x : lanes) mx = x > mx ? x : mx;
  return mx;
}

}  // namespace

// NaNs are skipped, as the scalar loop skips them: maxps returns its second
// operand (the running maximum) when the first is NaN.
float row_max_avx512(const float* row, int64_t n) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 a0 = lowest, a1 = lowest;  // two chains hide maxps's latency
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    a0 = max_into(a0, _mm512_loadu_ps(row + j));
    a1 = max_into(a1, _mm512_loadu_ps(row + j + 16));
  }
  for (; j + 16 <= n; j += 16) a0 = max_into(a0, _mm512_loadu_ps(row + j));
  if (j < n) {
    const __mmask16 m = avx512_tail_mask(n - j);
    a1 = _mm512_mask_max_ps(a1, m, _mm512_maskz_loadu_ps(m, row + j), a1);
  }
  return lanes_max(max_into(a0, a1));
}

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
    const __mmask16 m = avx512_tail_mask(n - j);
    const __m512 x = Sleef_expf16_u10(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + j), vmax));
    _mm512_mask_storeu_ps(row + j, m, x);
    acc = _mm512_add_ps(acc, _mm512_maskz_mov_ps(m, x));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc);
  float sum = 0.0f;
  for (float x : lanes) sum += x;
  return sum;
}

}  // namespace aotrun::shim::kernels
