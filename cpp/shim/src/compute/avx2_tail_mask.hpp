// The lane mask of an AVX2 loop's tail, for _mm256_maskload_ps and
// _mm256_maskstore_ps: lanes below `left` on (all of them when left >= 8).
// And loads and stores of all 8 lanes (Full) or of the mask's: a masked
// store (vmaskmovps) costs many times a plain one on AMD's cores, so only a
// tail should take it. For files compiled with -mavx2 only
// (softmax_row_avx2.cpp, head_products_avx2.cpp, panel_gemm_avx2.cpp);
// elsewhere the intrinsics do not compile.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace aotrun::shim::kernels {

inline __m256i avx2_tail_mask(int64_t left) {
  alignas(32) int32_t lane_on[8];
  for (int k = 0; k < 8; ++k) lane_on[k] = k < left ? -1 : 0;
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(lane_on));
}

template <bool Full>
inline __m256 avx2_load(const float* p, __m256i mask) {
  return Full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

template <bool Full>
inline void avx2_store(float* p, __m256i mask, __m256 v) {
  if (Full) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, mask, v);
  }
}

}  // namespace aotrun::shim::kernels
