// The lane mask of an AVX-512 loop's tail, for masked loads and stores:
// lanes below `left` on (all 16 when left >= 16, none when left <= 0).
// For files compiled with -mavx512f (softmax_row_avx512.cpp,
// head_products_avx512.cpp, panel_gemm_avx512.cpp); avx2_tail_mask.hpp is
// the AVX2 counterpart.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace aotrun::shim::kernels {

inline __mmask16 avx512_tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << left) - 1);
}

}  // namespace aotrun::shim::kernels
