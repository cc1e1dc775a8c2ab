#include "bias_act.hpp"

namespace cuda_mlp {
namespace {

// Grid-stride loop: any size runs with a bounded grid.
__global__ void bias_act_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t n, int64_t cols,
                                bool relu) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = y[i] + bias[i % cols];
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
}

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;

}  // namespace

cudaError_t launch_bias_act(float* y, const float* bias, int64_t rows, int64_t cols, bool relu, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return cudaSuccess;
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  bias_act_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(y, bias, n, cols, relu);
  return cudaGetLastError();
}

}  // namespace cuda_mlp
