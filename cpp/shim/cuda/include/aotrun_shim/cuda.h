/* aotrun's CUDA layer of the AOTInductor C shim (libaotrun_shim_cuda.so.1,
 * since aotrun-shim 1.1).
 *
 * The functions that AOTInductor-generated CUDA code calls beyond the
 * device-neutral shim (shim.h), declared for aotrun from PyTorch's documented
 * behaviour; names, argument types and codes are PyTorch's, so that a model
 * library built against libtorch_cuda binds here instead. Tensor storage of
 * device type CUDA (1) is served by this library's device layer
 * (device_layer.h), registered when it loads.
 *
 * Memory: every CUDA tensor the shim allocates comes from a stream-ordered
 * pool: the calling thread's own pool when one is in use there
 * (aotrun_shim_cuda_pool_use), else the shared pool of its device
 * (cudaMallocFromPoolAsync on the thread's current stream
 * of that device, see the stream guard). Allocated while that stream is being
 * captured, it becomes a graph allocation node owned by the graph: nothing
 * outside the graph can take it. Released while the same capture is active,
 * it becomes a free node; released later, outside the capture, it is left to
 * the graph (cudaGraphInstantiateFlagAutoFreeOnLaunch reclaims it at the
 * next launch). Memory allocated outside a capture and released during one
 * is freed once the capture is over (a free node would free it again on
 * every replay).
 *
 * Threads: the current stream is per thread and per device, as in PyTorch.
 * Every function may be called from any thread.
 *
 * Errors: AOTI_TORCH_FAILURE with aotrun_shim_last_error() naming the
 * function, the argument and CUDA's error. */
#ifndef AOTRUN_SHIM_CUDA_H_
#define AOTRUN_SHIM_CUDA_H_

#include <stddef.h>
#include <stdint.h>

#include "aotrun_shim/shim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque* CUDAStreamGuardHandle;
struct CUDAGuardOpaque;
typedef struct CUDAGuardOpaque* CUDAGuardHandle;

/* --- streams and devices -------------------------------------------------- */
/* Makes `stream` (a cudaStream_t) the current stream of device_index and
 * device_index the current device, until the guard is deleted (which restores
 * both). Guards nest; delete them in reverse order. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index,
                                                                   CUDAStreamGuardHandle* ret_guard);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard);
/* Makes device_index the current device until deleted. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle* ret_guard);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index);
/* The thread's current stream of device_index (-1: the current device); the
 * legacy default stream (NULL) when no stream guard is active. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);

/* --- kernels (fallback ops), on the current stream ------------------------ */
/* out = self @ mat2 (2-d), cuBLAS; float32 (no TF32, as PyTorch's default),
 * bfloat16 and float16 (float32 accumulation). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                      AtenTensorHandle mat2);
/* out = beta * self + alpha * (mat1 @ mat2), self broadcast to out. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                         AtenTensorHandle mat1, AtenTensorHandle mat2, double beta,
                                                         double alpha);
/* out = self @ mat2 per batch (3-d). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                       AtenTensorHandle mat2);
/* Memory-efficient attention, inference only: query [B, H, L, E], key
 * [B, H, S, E], value [B, H, S, Ev], optional additive bias broadcast to
 * [B, H, L, S], is_causal (top-left), scale (NULL: 1/sqrt(E)). dropout_p must
 * be 0. ret0: output [B, H, L, Ev] laid out as [B, L, H, Ev] (as PyTorch's);
 * ret1: logsumexp [B, H, L rounded up to 32] float32 when compute_log_sumexp,
 * else [B, H, 0]; ret2, ret3: the (unused) philox seed and offset, 0-d int64
 * CPU tensors. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3);

/* --- aotrun's own additions ----------------------------------------------- */
/* Bytes held by the pool of device_index (cudaMemPoolAttrReservedMemCurrent)
 * and in use (cudaMemPoolAttrUsedMemCurrent); 0 and 0 before its first use.
 * Memory of allocation nodes inside instantiated graphs is the graph's and is
 * not counted. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_pool_bytes(int32_t device_index, uint64_t* reserved, uint64_t* used);
/* Returns the pool's unused memory to the device (cudaMemPoolTrimTo 0), as an
 * allocator cache flush would. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_trim_pool(int32_t device_index);

/* Pools of their own (since aotrun-shim 1.2). By default every CUDA tensor
 * comes from its device's shared pool above, which keeps freed memory for
 * the next allocation of anyone in the process. A runner (one container of a
 * model) takes its memory from a pool of its own instead, so that what one
 * model keeps cached is not another's to take, and is returned to the device
 * when that pool is destroyed.
 *
 * aotrun_shim_cuda_pool_create: a new stream-ordered pool on device_index
 * (-1: the current device) that keeps freed memory for reuse. Owned by the
 * caller; released with aotrun_shim_cuda_pool_destroy.
 * aotrun_shim_cuda_pool_use: makes `pool` the one the CALLING THREAD's CUDA
 * tensors of the pool's device come from (NULL: the device's shared pool
 * again); *previous (may be NULL) receives the pool used before, to restore.
 * Tensors of other devices still come from their shared pools. A tensor is
 * released into the pool it came from, on any thread.
 * aotrun_shim_cuda_pool_destroy: NULL is a no-op. The pool must not be in
 * use on any thread. Memory still allocated from it (tensors alive, frees
 * not yet run on their stream) returns to the device once released
 * (cudaMemPoolDestroy's rule); allocation nodes of graphs captured while it
 * was in use belong to their graphs, not to the pool.
 * aotrun_shim_cuda_pool_get_bytes: as aotrun_shim_cuda_pool_bytes, for it. */
typedef struct aotrun_shim_cuda_pool aotrun_shim_cuda_pool;
/* Copies `bytes` of device memory at `src` to host memory at `dst` on
 * `stream` (a cudaStream_t; NULL: the legacy default stream) and waits for
 * the copy, after the stream's earlier work; *done is then 1. While the
 * stream is being captured nothing is read and *done is 0: a capture cannot
 * wait for the host. For checks of a model's inputs before it runs (since
 * aotrun-shim 1.2). */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_read_to_host(void* stream, const void* src, void* dst, size_t bytes,
                                                             int32_t* done);
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_pool_create(int32_t device_index, aotrun_shim_cuda_pool** ret_pool);
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_pool_destroy(aotrun_shim_cuda_pool* pool);
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_pool_use(aotrun_shim_cuda_pool* pool, aotrun_shim_cuda_pool** previous);
AOTRUN_SHIM_API AOTITorchError aotrun_shim_cuda_pool_get_bytes(const aotrun_shim_cuda_pool* pool, uint64_t* reserved,
                                                               uint64_t* used);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_CUDA_H_ */
