// Attention for inference: one thread block per (query row, head, batch).
// Scores of the row live in shared memory (key count x 4 bytes); softmax and
// the weighted sum of values are exact float32, as PyTorch's math backend.
// Written for correctness on the sequence lengths AOTInductor exports hand
// it; a fused, tiled kernel is faster.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "launchers.hpp"

namespace aotrun::shim::cuda {
namespace {

template <typename T>
__device__ float load(const T* p);
template <>
__device__ float load<float>(const float* p) {
  return *p;
}
template <>
__device__ float load<__nv_bfloat16>(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}
template <>
__device__ float load<__half>(const __half* p) {
  return __half2float(*p);
}

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half(v);
}

// Block-wide reduction (max or sum) of one value per thread.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
  if (warp == 0) {
    for (int off = 16; off > 0; off >>= 1) {
      const float o = __shfl_xor_sync(0xffffffffu, v, off);
      v = kMax ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  return scratch[0];
}

struct Args {
  View4 q, k, v, bias;
  char* out;
  int64_t os[4];
  float* lse;
  int64_t ls[3];
  float scale;
  bool causal;
};

template <typename T>
__global__ void attention(Args a) {
  extern __shared__ float scores[];
  __shared__ float scratch[32];
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t S = a.k.size[2], E = a.q.size[3], Ev = a.v.size[3];
  const T* q = static_cast<const T*>(a.q.data) + b * a.q.stride[0] + h * a.q.stride[1] + i * a.q.stride[2];
  const T* k = static_cast<const T*>(a.k.data) + b * a.k.stride[0] + h * a.k.stride[1];
  const T* v = static_cast<const T*>(a.v.data) + b * a.v.stride[0] + h * a.v.stride[1];
  const T* bias = a.bias.data == nullptr ? nullptr
                                         : static_cast<const T*>(a.bias.data) + b * a.bias.stride[0] +
                                               h * a.bias.stride[1] + i * a.bias.stride[2];
  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
    float s = -INFINITY;
    if (!(a.causal && j > i)) {
      float dot = 0.0f;
      for (int64_t e = 0; e < E; ++e)
        dot += load(q + e * a.q.stride[3]) * load(k + j * a.k.stride[2] + e * a.k.stride[3]);
      s = dot * a.scale;
      if (bias != nullptr) s += load(bias + j * a.bias.stride[3]);
    }
    scores[j] = s;
    local_max = fmaxf(local_max, s);
  }
  const float m = block_reduce<true>(local_max, scratch);
  float local_sum = 0.0f;
  for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
    const float p = m == -INFINITY ? 0.0f : __expf(scores[j] - m);
    scores[j] = p;
    local_sum += p;
  }
  const float sum = block_reduce<false>(local_sum, scratch);  // its barriers publish scores[]
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  T* out = reinterpret_cast<T*>(a.out) + b * a.os[0] + h * a.os[1] + i * a.os[2];
  for (int64_t d = threadIdx.x; d < Ev; d += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < S; ++j) acc += scores[j] * load(v + j * a.v.stride[2] + d * a.v.stride[3]);
    out[d * a.os[3]] = from_float<T>(acc * inv);
  }
  if (a.lse != nullptr && threadIdx.x == 0) {
    a.lse[b * a.ls[0] + h * a.ls[1] + i * a.ls[2]] = sum > 0.0f ? m + logf(sum) : INFINITY;
  }
}

template <typename T>
cudaError_t launch(const Args& a, cudaStream_t stream) {
  const int64_t L = a.q.size[2], H = a.q.size[1], B = a.q.size[0], S = a.k.size[2];
  if (L == 0 || H == 0 || B == 0) return cudaSuccess;
  if (H > 65535 || B > 65535 || L > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  // Rounded up and padded by 4 floats: ptxas merges the scalar tail loads of
  // the unrolled loops into one wider load ahead of the branch, which stays
  // inside the block's shared memory but past S (compute-sanitizer saw it).
  const size_t shared = static_cast<size_t>((S + 3) / 4 * 4 + 4) * sizeof(float);
  if (shared > 48 * 1024) {
    const cudaError_t rc =
        cudaFuncSetAttribute(attention<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (rc != cudaSuccess) return rc;
  }
  attention<T>
      <<<dim3(static_cast<unsigned>(L), static_cast<unsigned>(H), static_cast<unsigned>(B)), 128, shared, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_attention(Elem elem, View4 q, View4 k, View4 v, View4 bias, Elem bias_elem, void* out,
                             const int64_t* out_stride, float* lse, const int64_t* lse_stride, float scale, bool causal,
                             cudaStream_t stream) {
  if (bias.data != nullptr && bias_elem != elem) return cudaErrorInvalidValue;
  Args a{q, k, v, bias, static_cast<char*>(out), {}, lse, {}, scale, causal};
  for (int d = 0; d < 4; ++d) a.os[d] = out_stride[d];
  for (int d = 0; d < 3 && lse != nullptr; ++d) a.ls[d] = lse_stride[d];
  switch (elem) {
    case Elem::kFloat32: return launch<float>(a, stream);
    case Elem::kBFloat16: return launch<__nv_bfloat16>(a, stream);
    case Elem::kFloat16: return launch<__half>(a, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace aotrun::shim::cuda
