// The package's own kernel: y[r, c] = act(y[r, c] + bias[c]) over a
// row-major [rows, cols] matrix, act = ReLU or identity.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace cuda_mlp {

// Enqueues the kernel on `stream` (legal under capture). Returns the launch
// status (cudaGetLastError after the launch).
cudaError_t launch_bias_act(float* y, const float* bias, int64_t rows, int64_t cols, bool relu, cudaStream_t stream);

}  // namespace cuda_mlp
