/* aotrun's implementation of AOTInductor's C shim (libaotrun_shim.so.1): the
 * device-neutral functions and the CPU kernels.
 *
 * Declarations written for aotrun from PyTorch's documented behaviour of the
 * `aoti_torch_*` functions that AOTInductor-generated code calls (torch
 * 2.6-2.15). The ABI (names, argument types, integer codes) is PyTorch's, so
 * that a model library built against libtorch binds to this library instead.
 * Every function returning AOTITorchError returns AOTI_TORCH_SUCCESS (0) or
 * AOTI_TORCH_FAILURE (1); on failure aotrun_shim_last_error() says why.
 * Tensors of another device get their memory through a device layer
 * (device_layer.h); the CUDA one, with the CUDA-only functions, is
 * libaotrun_shim_cuda.so.1 (cpp/shim/cuda/include/aotrun_shim/cuda.h).
 * See docs/SHIM.md. */
#ifndef AOTRUN_SHIM_SHIM_H_
#define AOTRUN_SHIM_SHIM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AOTRUN_SHIM_API __attribute__((visibility("default")))

/* The shim's version, that of libaotrun_shim.so.1 and libaotrun_shim_cuda.so.1
 * (their CMake VERSION) and of aotrun_shim_version()'s string. A minor adds
 * functions; "since aotrun-shim x.y" in these headers names the minor that
 * added one. tests/docs/check_docs.py checks that they agree. */
#define AOTRUN_SHIM_VERSION_MAJOR 1
#define AOTRUN_SHIM_VERSION_MINOR 8
#define AOTRUN_SHIM_VERSION_PATCH 0

typedef int32_t AOTITorchError;
#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1

/* A tensor handle: a view (sizes, strides, offset, dtype, device) over a
 * reference-counted storage. Opaque to callers. */
struct AtenTensorOpaque;
typedef struct AtenTensorOpaque* AtenTensorHandle;

/* --- aotrun's own additions (not in libtorch) ----------------------------- */
/* The message of this thread's last failure ("" if none). Valid until the next
 * failing call on this thread. */
AOTRUN_SHIM_API const char* aotrun_shim_last_error(void);
/* "aotrun-shim <major>.<minor>.<patch>" (AOTRUN_SHIM_VERSION_*). */
AOTRUN_SHIM_API const char* aotrun_shim_version(void);
/* Declares that nothing writes `tensor`'s memory (its whole storage) from now
 * on, for as long as any tensor over that storage lives: a model's
 * parameters, once its container is created. Kernels may then keep copies
 * derived from it (a GEMM's weight packed once per OpenMP team size, a
 * convolution's weight in oneDNN's layout) instead of deriving them on each
 * call; those go with the storage. Writing the memory afterwards makes the
 * kernels' results wrong, silently: only the owner of the memory can promise
 * this. Frozen constants (the mkldnn layout) are declared already. Fails on a
 * null handle or a tensor not on the CPU. Any thread, but not while a kernel
 * reads the tensor. Since aotrun-shim 1.5. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_declare_constant(AtenTensorHandle tensor);
/* A function the shim calls, with `context`, each time
 * aoti_torch_create_tensor_from_blob or aoti_torch_create_tensor_from_blob_v2
 * has made a tensor on the calling thread, until that thread sets another
 * (NULL clears it). AOTInductor's load_constants copies each constant out of
 * the model library and then wraps the copy with one of those calls, so a
 * loader that sets a hook around a container's creation learns when each
 * copy is done: aotrun hands the library's pages of the weights copied so
 * far back to the kernel there, so that the weights do not count twice in
 * the process's memory while the rest load. The hook runs on the thread
 * that made the tensor, after the tensor is made (not after a failed
 * call); it must not throw and must not call the shim. Per thread: other
 * threads' calls do not run it. Since aotrun-shim 1.5.
 *
 * The tensors made while a hook is set are taken to be a model's constants:
 * when the thread clears or replaces the hook, the shim asks the kernel for
 * transparent huge pages over the span they cover, if it is one block of
 * at least 4 MiB (madvise MADV_HUGEPAGE and MADV_COLLAPSE over its whole
 * 2 MiB pages; a hint, ignored where the kernel has none). A call reads
 * every weight, and 4 KiB pages cost it a TLB miss each (frozen GPT-2 of
 * the benchmark tier: 14% faster per call on a Xeon under KVM). On a
 * machine whose hypervisor takes free memory back (a virtio balloon with
 * free page reporting) the span is only advised, with no MADV_COLLAPSE and
 * nothing advised ahead, and khugepaged collapses it in the background:
 * huge pages there fault in again on the host while the model loads.
 * AOTRUN_SHIM_CONSTANT_HUGE_PAGES=now | later in the environment chooses
 * (since aotrun-shim 1.6). An
 * mkldnn-layout constant made while a hook is set whose bytes are not
 * 64-byte aligned is copied into aligned memory of the shim's (what
 * aoti_torch_get_data_ptr then reports), and the whole pages of the
 * original are released (MADV_DONTNEED: the caller must not read them
 * again); such a window asks for no huge pages at its close, and the rest
 * of a block it advised ahead is advised back; where the thread allows
 * slides (aotrun_shim_set_constant_slides) it slides in place instead.
 * AOTRUN_SHIM_ALIGN_CONSTANTS=0 in the environment turns the copy and the
 * slides off. */
typedef void (*aotrun_shim_blob_hook)(void* context);
AOTRUN_SHIM_API void aotrun_shim_set_blob_hook(aotrun_shim_blob_hook hook, void* context);
/* Whether the constants of the calling thread's blob-hook windows may slide
 * in place (nonzero) or not (0, the default), until the thread says
 * otherwise. A model's blob from load_constants is malloc'd: every constant
 * in it starts 16 bytes past a 64-byte line. Once a window has met an
 * mkldnn-layout constant inside such a block (glibc's own mapping, at
 * least 256 KiB), each constant after it whose neighbour below has slid or
 * been copied out is moved down to the 64-byte boundary below it
 * (memmove, within that block: nothing outside it is ever written), and
 * its tensor made there: the blob stays one block of huge pages and a
 * frozen weight is read aligned, with no copy elsewhere (the weights that
 * cannot slide are still copied, and keep their bytes in the block's huge
 * pages). Only for a caller that writes nothing into the
 * blob after its constants are made: AOTInductor's copying constant updates
 * (update_constant_buffer without user-managed buffers) write each new
 * value at its original offset, which then overlaps the slid constant after
 * it. Since aotrun-shim 1.6. */
AOTRUN_SHIM_API void aotrun_shim_set_constant_slides(int allowed);

/* --- constants ------------------------------------------------------------ */
AOTRUN_SHIM_API int32_t aoti_torch_device_type_cpu(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_cuda(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_meta(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_xpu(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_mps(void);
AOTRUN_SHIM_API int32_t aoti_torch_device_type_privateuse1(void);

AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e5m2(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e4m3fn(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e5m2fnuz(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float8_e4m3fnuz(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_bfloat16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_float64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint8(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_uint64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int8(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int16(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_int64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_bool(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_complex32(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_complex64(void);
AOTRUN_SHIM_API int32_t aoti_torch_dtype_complex128(void);

AOTRUN_SHIM_API int32_t aoti_torch_layout_strided(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_coo(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_csr(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_csc(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_bsr(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_sparse_bsc(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout__mkldnn(void);
AOTRUN_SHIM_API int32_t aoti_torch_layout_jagged(void);

AOTRUN_SHIM_API int32_t aoti_torch_memory_format_contiguous_format(void);
AOTRUN_SHIM_API int32_t aoti_torch_memory_format_channels_last(void);
AOTRUN_SHIM_API int32_t aoti_torch_memory_format_channels_last_3d(void);
AOTRUN_SHIM_API int32_t aoti_torch_memory_format_preserve_format(void);

/* Bytes per element of `dtype` (returned directly, not an error code); 0 for
 * a code the shim does not know. */
AOTRUN_SHIM_API size_t aoti_torch_dtype_element_size(int32_t dtype);

/* --- grad mode (thread-local; no autograd here, the flag is only kept) ---- */
AOTRUN_SHIM_API bool aoti_torch_grad_mode_is_enabled(void);
AOTRUN_SHIM_API void aoti_torch_grad_mode_set_enabled(bool enabled);

/* --- errors --------------------------------------------------------------- */
/* Throws (a C++ std::runtime_error, like libtorch's c10::Error) when !cond. */
AOTRUN_SHIM_API void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line, const char* msg);
AOTRUN_SHIM_API void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg);

/* --- tensor handles ------------------------------------------------------- */
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                                  const int64_t* strides_ptr, int64_t storage_offset,
                                                                  int32_t dtype, int32_t device_type,
                                                                  int32_t device_index, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_create_tensor_from_blob_v2(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                                     const int64_t* strides_ptr, int64_t storage_offset,
                                                                     int32_t dtype, int32_t device_type,
                                                                     int32_t device_index, AtenTensorHandle* ret,
                                                                     int32_t layout, const uint8_t* opaque_metadata,
                                                                     int64_t opaque_metadata_size);
AOTRUN_SHIM_API AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr,
                                                        const int64_t* strides_ptr, int32_t dtype, int32_t device_type,
                                                        int32_t device_index, AtenTensorHandle* ret_new_tensor);
AOTRUN_SHIM_API AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
AOTRUN_SHIM_API AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle, AtenTensorHandle* new_handle);
AOTRUN_SHIM_API AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim,
                                                              const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                                              int64_t storage_offset, AtenTensorHandle* ret_new_tensor);
/* A view of `dtype` into self's storage (self's offset must be 0), starting
 * offset_bytes in: what Inductor's memory planning allocates from a pool. */
AOTRUN_SHIM_API AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes, int32_t dtype,
                                                           int64_t ndim, const int64_t* sizes_ptr,
                                                           const int64_t* strides_ptr,
                                                           AtenTensorHandle* ret_new_tensor);
AOTRUN_SHIM_API AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking);
AOTRUN_SHIM_API AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst);
AOTRUN_SHIM_API AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst);
AOTRUN_SHIM_API AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle* ret_dst);
AOTRUN_SHIM_API AOTITorchError aoti_torch_zero_(AtenTensorHandle tensor);

/* --- getters -------------------------------------------------------------- */
AOTRUN_SHIM_API AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret_size);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret_numel);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret_storage_offset);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret_size);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index);
AOTRUN_SHIM_API AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout);
AOTRUN_SHIM_API AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous);

/* --- item getters (0-d or one-element tensors of exactly that dtype) ------- */
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_float32(AtenTensorHandle tensor, float* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_float64(AtenTensorHandle tensor, double* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint8(AtenTensorHandle tensor, uint8_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint16(AtenTensorHandle tensor, uint16_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint32(AtenTensorHandle tensor, uint32_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_uint64(AtenTensorHandle tensor, uint64_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int8(AtenTensorHandle tensor, int8_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int16(AtenTensorHandle tensor, int16_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int32(AtenTensorHandle tensor, int32_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_int64(AtenTensorHandle tensor, int64_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_bool(AtenTensorHandle tensor, bool* ret_value);
/* bfloat16 and float16 items are their raw 16 bits (c10's BFloat16/Half are
 * a uint16_t in a struct, passed the same way). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle tensor, uint16_t* ret_value);
AOTRUN_SHIM_API AOTITorchError aoti_torch_item_float16(AtenTensorHandle tensor, uint16_t* ret_value);

/* --- 0-d tensors from scalars --------------------------------------------- */
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_float32(float value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_float64(double value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint8(uint8_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint16(uint16_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint32(uint32_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_uint64(uint64_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int8(int8_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int16(int16_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int32(int32_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_int64(int64_t value, AtenTensorHandle* ret);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scalar_to_tensor_bool(bool value, AtenTensorHandle* ret);

/* --- CPU kernels for Inductor's fallback ops ------------------------------ */
/* out = beta * self + alpha * (mat1 @ mat2); self broadcasts to out. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                        AtenTensorHandle mat1, AtenTensorHandle mat2, double beta,
                                                        double alpha);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                     AtenTensorHandle mat2);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                      AtenTensorHandle mat2);
/* bias may be NULL or point to NULL (no bias). transposed != 0: weight
 * [C_in, C_out / groups, k...] and output_padding applies (since aotrun-shim
 * 1.3; before, refused). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0);
/* attn_mask and scale may be NULL; ret0: output [B, Hq, L, Ev]; ret1: logsumexp [B, Hq, L] (float32). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* dtype may be NULL (then: self's dtype, integers and bool promoted to int64). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                     AtenTensorHandle* ret0);

/* --- sorting, searching, data-dependent sizes and scatter (CPU; since
 * aotrun-shim 1.3) ----------------------------------------------------- */
/* dtype may be NULL (then: self's dtype, integers and bool promoted to int64). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                      AtenTensorHandle* ret0);
/* ret0: sorted values, ret1: int64 indices; NaN sorts above every number.
 * stable may be NULL (not stable). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim,
                                                          int32_t descending, AtenTensorHandle* ret0,
                                                          AtenTensorHandle* ret1);
/* ret0: the k largest (largest != 0) or smallest values along dim, ret1: their int64 indices. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
                                                   int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* side may be NULL or point to "left"/"right"; sorter may be NULL or point to
 * NULL. ret0: int64 (int32 when out_int32) of self's shape. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_searchsorted_Tensor(AtenTensorHandle sorted_sequence,
                                                                  AtenTensorHandle self, int32_t out_int32,
                                                                  int32_t right, const char** side,
                                                                  AtenTensorHandle* sorter, AtenTensorHandle* ret0);
/* boundaries: 1-d, sorted. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries,
                                                               int32_t out_int32, int32_t right,
                                                               AtenTensorHandle* ret0);
/* ret0: [n, self's ndim] int64 coordinates of the non-zero elements. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0);
/* ret0: 1-d, self's elements where the bool mask (broadcast with self) is true. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
                                                            AtenTensorHandle* ret0);
/* repeats: 1-d int64 or int32; output_size may be NULL (else must equal the sum). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_repeat_interleave_Tensor(AtenTensorHandle repeats, int64_t* output_size,
                                                                       AtenTensorHandle* ret0);
/* out = self, then out[index along dim] = src / value. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                              AtenTensorHandle index, AtenTensorHandle src);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                int64_t dim, AtenTensorHandle index, double value);
/* reduce: "sum", "prod", "mean", "amax" or "amin"; include_self: whether
 * self's values take part. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                     int64_t dim, AtenTensorHandle index,
                                                                     AtenTensorHandle src, const char* reduce,
                                                                     int32_t include_self);

/* --- scans, a scalar search and a static-size nonzero (CPU; since
 * aotrun-shim 1.4) ------------------------------------------------------ */
/* ret0: the running maximum (cummax) or minimum (cummin) along dim, self's
 * dtype; ret1: the int64 index where it was found. Ties take the last index;
 * a NaN, once seen, stays, its index that of the latest NaN. Both contiguous. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                     AtenTensorHandle* ret1);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                                     AtenTensorHandle* ret1);
/* ret0: log(cumsum(exp(self))) along dim, computed stably; floating dtypes. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_logcumsumexp(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0);
/* The insertion point of the scalar `self` in the 1-d sorted_sequence: a
 * 0-d int64 (int32 when out_int32); side and sorter as for
 * aoti_torch_cpu_searchsorted_Tensor. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self,
                                                                  int32_t out_int32, int32_t right, const char** side,
                                                                  AtenTensorHandle* sorter, AtenTensorHandle* ret0);
/* ret0: [size, self's ndim] int64: the first `size` rows of nonzero(self),
 * then rows of fill_value; size must be >= 0. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_nonzero_static(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                                             AtenTensorHandle* ret0);

/* --- quantized linear, batched products, distances, selection and bags
 * (CPU; since aotrun-shim 1.3) ---------------------------------------- */
/* int8 weight-only linear: self [M, K] float32, bfloat16 or float16 (rows
 * unit-stride), mat2 [N, K] int8 (contiguous), scales [N] of self's dtype.
 * ret0 [M, N] = self @ (mat2 * scales[:, None])^T, self's dtype. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                                  AtenTensorHandle scales, AtenTensorHandle* ret0);
/* int4 weight-only linear (since aotrun-shim 1.4), libtorch's
 * _weight_int4pack_mm_for_cpu: X [M, K] float32, bfloat16 or float16
 * (contiguous), w [N, K / 2] uint8 as _convert_weight_to_int4pack_for_cpu
 * packs it under libtorch's CPU capability (N a multiple of 16), qGroupSize a
 * one-element int64 tensor (32, 64, 128 or 256, dividing K), qScaleAndZeros
 * [K / qGroupSize, N, 2] (scale, zero) of X's dtype, contiguous.
 * ret0 [M, N] = X @ ((q - 8) * scale + zero)^T per group, X's dtype. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(AtenTensorHandle X, AtenTensorHandle w,
                                                                             AtenTensorHandle qGroupSize,
                                                                             AtenTensorHandle qScaleAndZeros,
                                                                             AtenTensorHandle* ret0);
/* out = beta * self + alpha * (batch1 @ batch2) for each batch; self
 * broadcast to [b, n, p], not read when beta == 0. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                          AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
                                                          double alpha);
/* p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M]:
 * ret0 [..., P, R]. compute_mode may be NULL (0: the matrix method for p = 2
 * when P or R exceeds 25; 1: always for p = 2; 2: never). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
                                                             int64_t* compute_mode, AtenTensorHandle* ret0);
/* ret0: the k-th smallest value along dim (k counted from 1, NaN above every
 * number), ret1: its int64 index; dim kept as size 1 when keepdim. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim, int32_t keepdim,
                                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* Bags of weight rows: mode 0 sum, 1 mean, 2 max; bag j starts at offsets[j]
 * (include_last_offset: the last offset ends the last bag); per_sample_weights
 * may be NULL or point to NULL (mode sum only); indices equal to padding_idx
 * (>= 0) are skipped; scale_grad_by_freq and sparse only concern gradients.
 * ret0 output [bags, D], ret1 offset2bag, ret2 bag_size, ret3 max_indices. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                                             AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                             int64_t mode, int32_t sparse,
                                                             AtenTensorHandle* per_sample_weights,
                                                             int32_t include_last_offset, int64_t padding_idx,
                                                             AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                             AtenTensorHandle* ret2, AtenTensorHandle* ret3);

/* One layer and one direction of an LSTM, as AOTInductor emits every
 * nn.LSTM on CPU (since aotrun-shim 1.4). input [T, N, I] ([N, T, I] when
 * batch_first), weight0 W_ih [4H, I] and weight1 W_hh [4H, H] (plain, or
 * frozen constants in the mkldnn layout), weight2/weight3 b_ih/b_hh [4H]
 * (read when has_biases), hx_/cx_ [1, N, H]; gates i, f, g, o; reverse walks
 * the sequence from its end. mode must be 2 (LSTM), batch_sizes empty, all
 * float32. ret0 output [T, N, H] ([N, T, H]), ret1 hy and ret2 cy [1, N, H],
 * ret3 an empty uint8 workspace; num_layers, bidirectional and train are
 * ignored (one layer and direction per call). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mkldnn_rnn_layer(
    AtenTensorHandle input, AtenTensorHandle weight0, AtenTensorHandle weight1, AtenTensorHandle weight2,
    AtenTensorHandle weight3, AtenTensorHandle hx_, AtenTensorHandle cx_, int32_t reverse, const int64_t* batch_sizes,
    int64_t batch_sizes_len_, int64_t mode, int64_t hidden_size, int64_t num_layers, int32_t has_biases,
    int32_t bidirectional, int32_t batch_first, int32_t train, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3);

/* --- pooling (CPU; since aotrun-shim 1.7) -----------------------------------
 * The pools Inductor does not lower to its own loops (windows of more than
 * 25 elements, adaptive windows that do not divide evenly, every 3-d
 * adaptive pool). self: [C, H, W] or [N, C, H, W] for the 2-d functions,
 * [C, D, H, W] or [N, C, D, H, W] for the 3-d ones, any strides; only N may
 * be 0 (the adaptive ones: as noted below). List arguments hold one value
 * for every pooled dim or one per pooled dim (depth, height, width); their
 * pointer may be NULL only with length 0. Output sizes as libtorch's:
 * floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1, or
 * with ceil_mode rounded up unless that last window would start in the
 * right padding; each must be at least 1. Every result is a new tensor the
 * caller owns (delete with aoti_torch_delete_tensor_object), laid out as
 * libtorch's: channels-last for a channels-last 4-d self (the 2-d
 * functions) and for a channels-last-3d self (max_pool3d_with_indices; also
 * a 4-d self dense with C innermost), else contiguous. Indices are int64,
 * laid out like the values, offsets into self's pooled plane (h * W + w;
 * 3-d: d * H * W + h * W + w). Fails, naming the function and the argument,
 * for a null or non-CPU self, a null ret, a self of another rank, an empty
 * non-batch dim, a dtype libtorch's CPU kernel does not take, a list of
 * another length, kernel_size or stride below 1, dilation below 1, padding
 * below 0 or above half of kernel_size, an output size below 1 (adaptive:
 * below 0), values above 2^31 - 1, and a 4-d self of max_pool3d_with_indices
 * in the 2-d channels-last layout (libtorch refuses it too). */
/* ret0: the mean of each window of kernel_size elements, every stride
 * (length 0: kernel_size), self padded by padding on each side. A window is
 * clipped to the padded input; count_include_pad != 0 divides by its
 * clipped length with the padding, else by its elements in self;
 * *divisor_override (NULL: none; not 0) replaces both. float32, float64,
 * bfloat16, float16 (summed in float32) and int64 (divided as C does). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
                                                         int64_t kernel_size_len_, const int64_t* stride,
                                                         int64_t stride_len_, const int64_t* padding,
                                                         int64_t padding_len_, int32_t ceil_mode,
                                                         int32_t count_include_pad, int64_t* divisor_override,
                                                         AtenTensorHandle* ret0);
/* The same over three dims; float32, float64 and int64 only, self's pooled
 * dims each at least kernel_size (libtorch's rules); ret0 contiguous. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
                                                         int64_t kernel_size_len_, const int64_t* stride,
                                                         int64_t stride_len_, const int64_t* padding,
                                                         int64_t padding_len_, int32_t ceil_mode,
                                                         int32_t count_include_pad, int64_t* divisor_override,
                                                         AtenTensorHandle* ret0);
/* ret0: the maximum of each window of kernel_size elements dilation apart,
 * every stride (length 0: kernel_size), padding on each side; ret1: where
 * it is. A NaN wins (the window's last NaN), otherwise the first of equal
 * maxima; a window with no element inside self gives the dtype's lowest
 * value and its first position. Every real dtype but bool and uint16-64. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_max_pool2d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                                      int64_t stride_len_, const int64_t* padding,
                                                                      int64_t padding_len_, const int64_t* dilation,
                                                                      int64_t dilation_len_, int32_t ceil_mode,
                                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                                      int64_t stride_len_, const int64_t* padding,
                                                                      int64_t padding_len_, const int64_t* dilation,
                                                                      int64_t dilation_len_, int32_t ceil_mode,
                                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* Adaptive pools: output_size (output_size_len_ must be 2, or 3) values
 * >= 0 (0: an empty result); output index o of a dim of `in` elements
 * reads [floor(o * in / out), ceil((o + 1) * in / out)). float32, float64,
 * bfloat16, float16. ret0: the windows' means, summed in float32 for the
 * 2-d function; the 3-d one sums and divides in self's dtype, rounding each
 * step, as libtorch's does (so bfloat16 and float16 means of large windows
 * are libtorch's, not exact), and returns contiguous results. The 2-d mean
 * takes an empty C; the other adaptive pools an empty C of an unbatched
 * self. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__adaptive_avg_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                                   int64_t output_size_len_, AtenTensorHandle* ret0);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__adaptive_avg_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                                   int64_t output_size_len_, AtenTensorHandle* ret0);
/* ret0: the windows' maxima, ret1: their indices, as for
 * aoti_torch_cpu_max_pool2d_with_indices; the 3-d one's contiguous. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_adaptive_max_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                                  int64_t output_size_len_, AtenTensorHandle* ret0,
                                                                  AtenTensorHandle* ret1);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_adaptive_max_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                                  int64_t output_size_len_, AtenTensorHandle* ret0,
                                                                  AtenTensorHandle* ret1);

/* --- torch.fft (CPU; since aotrun-shim 1.4) ---------------------------------
 * dim: dim_len_ dims to transform (negative ones wrapped, none repeated);
 * normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the product of the
 * signal sizes. Results are laid out as libtorch's CPU kernels lay them out
 * (batch dims outermost); float32/complex64 and float64/complex128 only. */
/* ret0: the DFT of real self over dim, complex64 (complex128 for float64);
 * the last dim of dim keeps its first n/2 + 1 bins when onesided. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                       int64_t normalization, int32_t onesided, AtenTensorHandle* ret0);
/* ret0: the forward (forward != 0) or backward, unscaled but for
 * normalization, DFT of complex self over dim (none: a copy). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                       int64_t normalization, int32_t forward, AtenTensorHandle* ret0);
/* The same under the name of torch releases before the generated shim. */
AOTRUN_SHIM_API AOTITorchError aoti_torch__fft_c2c(AtenTensorHandle self, const int64_t* dim_ptr, int64_t dim_size,
                                                   int64_t normalization, int32_t forward, AtenTensorHandle* ret);
/* ret0: |self|; complex64/complex128 give float32/float64, real dtypes their
 * own (bool refused); laid out like self when it is dense. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_abs(AtenTensorHandle self, AtenTensorHandle* ret0);
/* ret0: a view of complex self as real [..., 2] (same storage). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0);
AOTRUN_SHIM_API AOTITorchError aoti_torch_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret);
/* ret0: a view of real self [..., 2] (last stride 1, other strides and the
 * offset even) as complex [...] (same storage). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0);

/* --- Pointwise functions around an FFT (CPU; since aotrun-shim 1.4) --------
 * Inductor generates no code for complex tensors and calls these instead
 * (irfft(rfft(x) * w), X[..., :k], spectra added through a float view).
 * ret0: self * other, broadcast, in libtorch's promoted dtype (0-d tensors
 * rank below tensors with dims), laid out as libtorch's TensorIterator lays
 * it out; complex64/complex128, every real dtype and bool. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mul_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                                         AtenTensorHandle* ret0);
/* ret0: a view of self along dim from *start (null: 0) to *end (null: the
 * end), every step-th element (step > 0); bounds clamped as libtorch's. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start,
                                                           int64_t* end, int64_t step, AtenTensorHandle* ret0);
/* ret0: a view of self's bytes as dtype (Tensor.view(dtype)); with another
 * element size the last dim must have stride 1 and scales. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret0);
/* ret0: torch.cat of tensors[0..tensors_len_) along dim (wrapped; 1-d empty
 * tensors skipped), in the dtypes' promotion, laid out as libtorch lays it
 * out (channels-last when every tensor suggests it, else contiguous); other
 * dims must match. complex64/complex128, every real dtype and bool. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_cat(const AtenTensorHandle* tensors, int64_t tensors_len_, int64_t dim,
                                                  AtenTensorHandle* ret0);

/* --- AOTInductor's proxy executor (since aotrun-shim 1.4) ------------------
 * A model calls the ops that have no C shim function (torch.linalg.inv,
 * torch.linalg.solve, torch.unique, ...) through
 * aoti_torch_proxy_executor_call_function, by their index in the model's
 * extern kernel node list (<hash>.wrapper.json beside the wrapper in a .pt2).
 * The host makes one executor per model from that list and passes it to the
 * model's runs (AOTInductorModelContainerRun's proxy_executor). aotrun's
 * shim runs aten::linalg_inv_ex, aten::_linalg_solve_ex (left=True),
 * aten::_linalg_check_errors, aten::_unique2 and (since aotrun-shim 1.4
 * like the executor) aten::_fft_c2r (torch.fft.irfft), aten::median.dim,
 * aten::constant_pad_nd, aten::full and aten::slice_scatter (docs/SHIM.md). */
typedef struct AOTIProxyExecutorOpaque* AOTIProxyExecutorHandle;
/* Node `extern_node_index` with its tensor inputs, then one handle per
 * tensor output, in flatten_tensor_args; its int arguments in
 * flatten_int_args (num_ints: one per int, a list's elements; 0 but for
 * aten::_fft_c2r: dim..., normalization, last_dim_size; aten::median.dim:
 * dim; aten::constant_pad_nd: pad..., then value when it is an int;
 * aten::full: size..., then fill_value when it is an int; aten::slice_scatter:
 * dim, start and end unless None, step).
 * Each output handle then holds the result (the wrapper's own buffer,
 * written, when it has the result's sizes and dtype; else the result
 * itself). Fails, naming the node, on a null executor, an index out of range
 * or counts the node does not have; the ops' errors are libtorch's
 * (_linalg_check_errors: "linalg.inv: The diagonal element 2 is zero, ..."). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_proxy_executor_call_function(AOTIProxyExecutorHandle proxy_executor,
                                                                       int extern_node_index, int num_ints,
                                                                       int64_t* flatten_int_args, int num_tensors,
                                                                       AtenTensorHandle* flatten_tensor_args);
/* aotrun's own: an executor for the node list `nodes_json` (`size` bytes of
 * JSON; copied, the caller keeps its buffer). Fails, naming the op, when a
 * node calls an op the shim does not run, or passes an argument kind it does
 * not take; *ret is then NULL. Free with aotrun_shim_proxy_executor_delete
 * (NULL is fine) once no run uses it. Any thread may call the executor. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_proxy_executor_create(const char* nodes_json, size_t size,
                                                                 AOTIProxyExecutorHandle* ret);
AOTRUN_SHIM_API void aotrun_shim_proxy_executor_delete(AOTIProxyExecutorHandle executor);

/* --- the fused ops of frozen exports (torch._inductor.config.freezing; CPU,
 * float32; since aotrun-shim 1.3) ------------------------------------------
 * W: a plain strided weight, or a frozen constant created in the mkldnn
 * layout (aoti_torch_create_tensor_from_blob_v2 with layout
 * aoti_torch_layout__mkldnn() and its 772 bytes of oneDNN metadata), which
 * the shim unpacked once at load. B: NULL, a pointer to NULL, or [out].
 * attr: "none", "relu", "sigmoid", "tanh", "hardswish", "hardsigmoid",
 * "swish"/"silu", "gelu" (algorithm NULL/"none" or "tanh"), "leaky_relu"
 * (scalars[0]: slope), "hardtanh" (scalars[0], scalars[1]: min, max);
 * scalars is an array of scalars_len_ pointers, each may be NULL (read only
 * by leaky_relu and hardtanh). binary_attr / attr of the binary forms:
 * "add", "sub", "mul", "div"; alpha NULL or 1; unary_attr NULL or "relu".
 * Convolution outputs are channels-last when X (or a plain W) is. */
/* ret0 [..., out] = attr(X [..., in] @ W[out, in]^T + B), contiguous. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__linear_pointwise(AtenTensorHandle X, AtenTensorHandle W,
                                                                AtenTensorHandle* B, const char* attr,
                                                                const double** scalars, int64_t scalars_len_,
                                                                const char** algorithm, AtenTensorHandle* ret0);
/* ret0 = (X @ W^T + B) <attr> other. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__linear_pointwise_binary(AtenTensorHandle X, AtenTensorHandle other,
                                                                       AtenTensorHandle W, AtenTensorHandle* B,
                                                                       const char* attr, AtenTensorHandle* ret0);
/* ret0 = attr(conv(X, W) + B); W [O, I/groups, k...]. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise(
    AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_, int64_t groups,
    const char* attr, const double** scalars, int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0);
/* ret0 = unary_attr((conv(X, W) + B) <binary_attr> other). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary(
    AtenTensorHandle X, AtenTensorHandle other, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
    int64_t padding_len_, const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_,
    int64_t groups, const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0);
/* In place (note: other first): other = unary_attr(conv(X, W) + B + other),
 * binary_attr "add" only; ret0 is a new handle to other's tensor. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary_(
    AtenTensorHandle other, AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
    int64_t padding_len_, const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_,
    int64_t groups, const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0);
/* ret0 = attr(conv_transpose(X, W) + B); a plain W is PyTorch's
 * [I, O/groups, k...], an mkldnn constant oneDNN's [O, I/groups, k...]. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mkldnn__convolution_transpose_pointwise(
    AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* output_padding, int64_t output_padding_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* dilation, int64_t dilation_len_, int64_t groups, const char* attr, const double** scalars,
    int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0);

/* --- indexing with tensors and masked scatter (CPU; since aotrun-shim 1.7) --
 * x[mask] (valid tokens, boxes) and a vision-language model's image
 * embeddings merged into its token embeddings
 * (inputs_embeds.masked_scatter(image_mask, image_embeds)). Each result is a
 * new tensor the caller owns (aoti_torch_delete_tensor_object); on failure
 * *ret0 is left alone and aotrun_shim_last_error() names the function and
 * the argument. */
/* ret0 = self[indices] (aten::index.Tensor). indices: indices_len_ (at most
 * self's ndim) pointers, each NULL (that dim taken whole; so is every dim
 * past the list) or pointing to a handle of an int64, int32, bool or uint8
 * tensor. Integer index tensors broadcast together, negative values count
 * from the end, values out of range are refused; a k-d bool/uint8 mask
 * stands for the coordinates of its true elements over the next k dims,
 * whose sizes it must match. When the indexed dims are adjacent the index
 * shape replaces them in place, else it comes first. self: any dtype and
 * strides; ret0 has its dtype and libtorch's layout (dense, not always
 * contiguous). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                           int64_t indices_len_, AtenTensorHandle* ret0);
/* ret0: a contiguous copy of self broadcast with the bool mask, in which the
 * positions where mask is true take source's elements in order (row-major,
 * source read as if flattened). source must have self's dtype and at least
 * as many elements as mask has true positions. Floating, integer (not
 * uint16-64), bool and complex dtypes, as libtorch. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask,
                                                             AtenTensorHandle source, AtenTensorHandle* ret0);

/* --- statistics (CPU; since aotrun-shim 1.8) --------------------------------
 * torch.histc, torch.median(x) and torch.mode, as libtorch 2.15's CPU
 * kernels give them (aten::nanmedian.dim and aten::bincount, which have no C
 * shim function, run in the proxy executor). Each result is a new tensor the
 * caller owns; on failure the results are left alone and
 * aotrun_shim_last_error() names the function and the argument. */
/* ret0 [bins], contiguous, self's dtype: the histogram of self's elements in
 * bins equal bins over [min, max]; min == max takes the range from the data
 * (widened by 1 on each side when still empty). Elements outside the range
 * and NaN are not counted; an element equal to max goes to the last bin.
 * self: float32, float64, float16 or bfloat16, any shape and strides.
 * Refused: bins < 1, a range that is not finite (NaN in the data when it
 * gives the range) or whose min exceeds its max, bounds the dtype cannot
 * hold. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_histc(AtenTensorHandle self, int64_t bins, double min, double max,
                                                    AtenTensorHandle* ret0);
/* ret0: 0-d, self's dtype, the median of all of self's elements (the lower
 * of the two middle ones for an even count); NaN when any is NaN, and for an
 * empty self of a floating dtype. Floating and integer dtypes other than
 * uint16-64. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_median(AtenTensorHandle self, AtenTensorHandle* ret0);
/* ret0: the most frequent value along dim (the smallest of equally frequent
 * ones; each NaN counts as a value of its own), ret1: an int64 index of it,
 * the one libtorch gives; contiguous, dim kept as size 1 when keepdim.
 * Every real dtype and bool other than uint16-64; a dim of size 0 is
 * refused. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim,
                                                   AtenTensorHandle* ret0, AtenTensorHandle* ret1);

/* --- bilinear products, pairwise distances, 3-d sampling (CPU; since
 * aotrun-shim 1.8) ------------------------------------------------------------
 * The fallbacks nn.Bilinear, torch.pdist and F.grid_sample on 5-d inputs
 * reach. Each result is a new contiguous tensor the caller owns
 * (aoti_torch_delete_tensor_object); on failure *ret0 is left alone and
 * aotrun_shim_last_error() names the function and the argument. */
/* ret0 = (i1.unsqueeze(expand1) * i2.unsqueeze(expand2) *
 * i3.unsqueeze(expand3)).sum(sumdim) (aten::_trilinear; F.bilinear passes
 * x1 [B, I], weight [O, I, J], x2 [B, J], {1, 3}, {0}, {1, 2}, {2, 3}, 1).
 * The lists hold dims of the expanded rank (i1.dim() + expand1_len_),
 * negative counting from the end, none repeated; each input must reach that
 * rank through its unsqueezes. Sizes other than 1 must agree (size 1
 * broadcasts); a dim's output size is the last non-expanded input's there.
 * unroll_dim (in [0, rank)) orders the computation as libtorch's. The three
 * dtypes must be equal: float32, float64, bfloat16, float16 or an 8-64 bit
 * integer (int8-int32 and uint8 not with a summed dim only one input of a
 * pair has, which libtorch refuses); ret0 has it. Float results agree with
 * libtorch's within floating-point summation order. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__trilinear(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
                                                         const int64_t* expand1, int64_t expand1_len_,
                                                         const int64_t* expand2, int64_t expand2_len_,
                                                         const int64_t* expand3, int64_t expand3_len_,
                                                         const int64_t* sumdim, int64_t sumdim_len_, int64_t unroll_dim,
                                                         AtenTensorHandle* ret0);
/* ret0 [N(N-1)/2] = the p-norm distances of every pair of rows i < j of self
 * [N, M] (row-major pair order; torch.pdist): p = 0 counts differing
 * elements, inf takes the largest |difference|, other p
 * (Σ|d|^p)^(1/p). self: contiguous 2-d float32 or float64; N <= 1 gives
 * an empty result, M = 0 zeros. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p, AtenTensorHandle* ret0);
/* ret0 [N, C, D', H', W'] = input [N, C, D, H, W] sampled at grid
 * [N, D', H', W', 3] (x, y, z in [-1, 1]; F.grid_sample on 5-d input).
 * interpolation_mode 0 (trilinear) or 1 (nearest, half to even);
 * padding_mode 0 (zeros outside), 1 (border: clamped) or 2 (reflection);
 * align_corners nonzero: -1 and 1 are the corner voxels' centres, else their
 * outer edges. input and grid: the same float32, float64, bfloat16 or
 * float16 dtype, any strides; input's D, H, W at least 1. Refuses
 * interpolation 2 (bicubic) and modes out of range, for which libtorch's 3-d
 * kernel returns uninitialized memory or treats them as zeros padding. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cpu_grid_sampler_3d(AtenTensorHandle input, AtenTensorHandle grid,
                                                              int64_t interpolation_mode, int64_t padding_mode,
                                                              int32_t align_corners, AtenTensorHandle* ret0);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_SHIM_H_ */
