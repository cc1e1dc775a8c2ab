// The float32 runs the pooling kernels spend their time in, compiled per
// ISA (pooling_runs*.cpp): acc[i] += x[i]; libtorch's max step with the
// index at + i (a row of the padded plane) or at (a channel vector).
#pragma once

#include <cstdint>

namespace aotrun::shim::kernels::pooling {

struct Runs {
  void (*add)(float* acc, const float* x, int64_t n);
  void (*max_seq)(float* m, int32_t* ix, const float* x, int64_t n, int32_t at);
  void (*max_at)(float* m, int64_t* ix, const float* x, int64_t n, int64_t at);
};

// The widest the CPU has, chosen once.
const Runs& runs_f32();

}  // namespace aotrun::shim::kernels::pooling
