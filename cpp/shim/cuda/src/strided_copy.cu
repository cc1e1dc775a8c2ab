// Elementwise copy between two strided views of one device (broadcast
// sources have stride 0): what clone, copy_ and contiguous staging need.
#include <cstdint>

#include "launchers.hpp"

namespace aotrun::shim::cuda {
namespace {

struct CopyDims {
  int ndim;
  int64_t size[kMaxCopyDims];
  int64_t dst[kMaxCopyDims];
  int64_t src[kMaxCopyDims];
};

template <typename T>
__global__ void strided_copy(T* dst, const T* src, CopyDims d, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, doff = 0, soff = 0;
    for (int k = d.ndim - 1; k >= 0; --k) {
      const int64_t idx = rest % d.size[k];
      rest /= d.size[k];
      doff += idx * d.dst[k];
      soff += idx * d.src[k];
    }
    dst[doff] = src[soff];
  }
}

template <typename T>
cudaError_t launch(void* dst, const void* src, const CopyDims& d, int64_t n, cudaStream_t stream) {
  const int threads = 256;
  const int64_t want = (n + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 65535 ? want : 65535);
  strided_copy<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(src), d, n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(void* dst, const void* src, size_t elem_size, int ndim, const int64_t* sizes,
                                const int64_t* dst_strides, const int64_t* src_strides, cudaStream_t stream) {
  if (ndim < 0 || ndim > kMaxCopyDims) return cudaErrorInvalidValue;
  CopyDims d{};
  d.ndim = ndim;
  int64_t n = 1;
  for (int k = 0; k < ndim; ++k) {
    d.size[k] = sizes[k];
    d.dst[k] = dst_strides[k];
    d.src[k] = src_strides[k];
    n *= sizes[k];
  }
  if (n == 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch<uint8_t>(dst, src, d, n, stream);
    case 2: return launch<uint16_t>(dst, src, d, n, stream);
    case 4: return launch<uint32_t>(dst, src, d, n, stream);
    case 8: return launch<uint64_t>(dst, src, d, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotrun::shim::cuda
