// The lane mask of an AVX2 loop's tail, for _mm256_maskload_ps and
// _mm256_maskstore_ps: lanes below `left` on (all of them when left >= 8).
// For files compiled with -mavx2 only (softmax_row_avx2.cpp,
// head_products_avx2.cpp); elsewhere the intrinsic does not compile.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace aotrun::shim::kernels {

inline __m256i avx2_tail_mask(int64_t left) {
  alignas(32) int32_t lane_on[8];
  for (int k = 0; k < 8; ++k) lane_on[k] = k < left ? -1 : 0;
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(lane_on));
}

}  // namespace aotrun::shim::kernels
