// The layer's own CUDA kernels (*.cu), launched on a given stream. Each
// returns the launch's cudaError_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotrun::shim::cuda {

constexpr int kMaxCopyDims = 8;

// dst[i] = src[i] over `sizes` (ndim <= kMaxCopyDims), element strides,
// elements of elem_size 1, 2, 4 or 8 bytes.
cudaError_t launch_strided_copy(void* dst, const void* src, size_t elem_size, int ndim, const int64_t* sizes,
                                const int64_t* dst_strides, const int64_t* src_strides, cudaStream_t stream);

// Element types of the attention kernel.
enum class Elem { kFloat32, kBFloat16, kFloat16 };

// A 4-d strided view [B, H, rows, cols] (element strides).
struct View4 {
  const void* data;
  int64_t size[4];
  int64_t stride[4];
};

// Attention of one (batch, head, query row) per block: out [B, H, L, Ev]
// (strided), lse [B, H, L] float32 (may be null), bias broadcast view (data
// null: none; strides 0 where broadcast), scores = q k^T * scale + bias,
// causal: key j > query i masked.
cudaError_t launch_attention(Elem elem, View4 q, View4 k, View4 v, View4 bias, Elem bias_elem, void* out,
                             const int64_t* out_stride, float* lse, const int64_t* lse_stride, float scale, bool causal,
                             cudaStream_t stream);

}  // namespace aotrun::shim::cuda
