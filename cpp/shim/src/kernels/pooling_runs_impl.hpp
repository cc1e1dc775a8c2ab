// The float32 runs of the pooling kernels (pooling_window.hpp's add_run,
// max_run_seq, max_run_at), compiled once per ISA by pooling_runs*.cpp
// with the compiler's vectoriser. Internal linkage and no templates: no
// copy compiled for a wider ISA can stand in for another TU's.
#pragma once

#include <cstdint>

namespace aotrun::shim::kernels::pooling {
namespace {

// Greater, or NaN: libtorch's max step.
inline bool f32_takes_over(float v, float best) { return v > best || v != v; }

void add_f32(float* __restrict acc, const float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

void max_seq_f32(float* __restrict m, int32_t* __restrict ix, const float* __restrict x, int64_t n, int32_t at) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const bool take = f32_takes_over(v, m[i]);
    m[i] = take ? v : m[i];
    ix[i] = take ? at + static_cast<int32_t>(i) : ix[i];
  }
}

void max_at_f32(float* __restrict m, int64_t* __restrict ix, const float* __restrict x, int64_t n, int64_t at) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const bool take = f32_takes_over(v, m[i]);
    m[i] = take ? v : m[i];
    ix[i] = take ? at : ix[i];
  }
}

}  // namespace
}  // namespace aotrun::shim::kernels::pooling
