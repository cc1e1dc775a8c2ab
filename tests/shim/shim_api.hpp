// The shim's C functions resolved by name from a loaded library (aotrun's
// shim or real libtorch), so that the same test code drives either.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <string>

struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;

// X(name, return, (argument types))
#define AOTRUN_SHIM_TEST_FUNCTIONS(X)                                                                                  \
  X(aoti_torch_device_type_cpu, int32_t, ())                                                                           \
  X(aoti_torch_device_type_cuda, int32_t, ())                                                                          \
  X(aoti_torch_device_type_meta, int32_t, ())                                                                          \
  X(aoti_torch_device_type_xpu, int32_t, ())                                                                           \
  X(aoti_torch_device_type_mps, int32_t, ())                                                                           \
  X(aoti_torch_device_type_privateuse1, int32_t, ())                                                                   \
  X(aoti_torch_dtype_float8_e5m2, int32_t, ())                                                                         \
  X(aoti_torch_dtype_float8_e4m3fn, int32_t, ())                                                                       \
  X(aoti_torch_dtype_float8_e5m2fnuz, int32_t, ())                                                                     \
  X(aoti_torch_dtype_float8_e4m3fnuz, int32_t, ())                                                                     \
  X(aoti_torch_dtype_bfloat16, int32_t, ())                                                                            \
  X(aoti_torch_dtype_float16, int32_t, ())                                                                             \
  X(aoti_torch_dtype_float32, int32_t, ())                                                                             \
  X(aoti_torch_dtype_float64, int32_t, ())                                                                             \
  X(aoti_torch_dtype_uint8, int32_t, ())                                                                               \
  X(aoti_torch_dtype_uint16, int32_t, ())                                                                              \
  X(aoti_torch_dtype_uint32, int32_t, ())                                                                              \
  X(aoti_torch_dtype_uint64, int32_t, ())                                                                              \
  X(aoti_torch_dtype_int8, int32_t, ())                                                                                \
  X(aoti_torch_dtype_int16, int32_t, ())                                                                               \
  X(aoti_torch_dtype_int32, int32_t, ())                                                                               \
  X(aoti_torch_dtype_int64, int32_t, ())                                                                               \
  X(aoti_torch_dtype_bool, int32_t, ())                                                                                \
  X(aoti_torch_dtype_complex32, int32_t, ())                                                                           \
  X(aoti_torch_dtype_complex64, int32_t, ())                                                                           \
  X(aoti_torch_dtype_complex128, int32_t, ())                                                                          \
  X(aoti_torch_layout_strided, int32_t, ())                                                                            \
  X(aoti_torch_layout_sparse_coo, int32_t, ())                                                                         \
  X(aoti_torch_layout_sparse_csr, int32_t, ())                                                                         \
  X(aoti_torch_layout_sparse_csc, int32_t, ())                                                                         \
  X(aoti_torch_layout_sparse_bsr, int32_t, ())                                                                         \
  X(aoti_torch_layout_sparse_bsc, int32_t, ())                                                                         \
  X(aoti_torch_layout__mkldnn, int32_t, ())                                                                            \
  X(aoti_torch_layout_jagged, int32_t, ())                                                                             \
  X(aoti_torch_memory_format_contiguous_format, int32_t, ())                                                           \
  X(aoti_torch_memory_format_channels_last, int32_t, ())                                                               \
  X(aoti_torch_memory_format_channels_last_3d, int32_t, ())                                                            \
  X(aoti_torch_memory_format_preserve_format, int32_t, ())                                                             \
  X(aoti_torch_dtype_element_size, size_t, (int32_t))                                                                  \
  X(aoti_torch_grad_mode_is_enabled, bool, ())                                                                         \
  X(aoti_torch_grad_mode_set_enabled, void, (bool))                                                                    \
  X(aoti_torch_create_tensor_from_blob, int32_t,                                                                       \
    (void*, int64_t, const int64_t*, const int64_t*, int64_t, int32_t, int32_t, int32_t, AtenTensorHandle*))           \
  X(aoti_torch_create_tensor_from_blob_v2, int32_t,                                                                    \
    (void*, int64_t, const int64_t*, const int64_t*, int64_t, int32_t, int32_t, int32_t, AtenTensorHandle*, int32_t,   \
     const uint8_t*, int64_t))                                                                                         \
  X(aoti_torch_empty_strided, int32_t,                                                                                 \
    (int64_t, const int64_t*, const int64_t*, int32_t, int32_t, int32_t, AtenTensorHandle*))                           \
  X(aoti_torch_new_uninitialized_tensor, int32_t, (AtenTensorHandle*))                                                 \
  X(aoti_torch_delete_tensor_object, int32_t, (AtenTensorHandle))                                                      \
  X(aoti_torch_new_tensor_handle, int32_t, (AtenTensorHandle, AtenTensorHandle*))                                      \
  X(aoti_torch__reinterpret_tensor, int32_t,                                                                           \
    (AtenTensorHandle, int64_t, const int64_t*, const int64_t*, int64_t, AtenTensorHandle*))                           \
  X(aoti_torch__alloc_from_pool, int32_t,                                                                              \
    (AtenTensorHandle, int64_t, int32_t, int64_t, const int64_t*, const int64_t*, AtenTensorHandle*))                  \
  X(aoti_torch_clone, int32_t, (AtenTensorHandle, AtenTensorHandle*))                                                  \
  X(aoti_torch_clone_preserve_strides, int32_t, (AtenTensorHandle, AtenTensorHandle*))                                 \
  X(aoti_torch_copy_, int32_t, (AtenTensorHandle, AtenTensorHandle, int32_t))                                          \
  X(aoti_torch_tensor_copy_, int32_t, (AtenTensorHandle, AtenTensorHandle))                                            \
  X(aoti_torch_assign_tensors, int32_t, (AtenTensorHandle, AtenTensorHandle))                                          \
  X(aoti_torch_assign_tensors_out, int32_t, (AtenTensorHandle, AtenTensorHandle*))                                     \
  X(aoti_torch_zero_, int32_t, (AtenTensorHandle))                                                                     \
  X(aoti_torch_is_defined, int32_t, (AtenTensorHandle, bool*))                                                         \
  X(aoti_torch_get_data_ptr, int32_t, (AtenTensorHandle, void**))                                                      \
  X(aoti_torch_get_storage_size, int32_t, (AtenTensorHandle, int64_t*))                                                \
  X(aoti_torch_get_storage_numel, int32_t, (AtenTensorHandle, int64_t*))                                               \
  X(aoti_torch_get_storage_offset, int32_t, (AtenTensorHandle, int64_t*))                                              \
  X(aoti_torch_get_sizes, int32_t, (AtenTensorHandle, int64_t**))                                                      \
  X(aoti_torch_get_size, int32_t, (AtenTensorHandle, int64_t, int64_t*))                                               \
  X(aoti_torch_get_strides, int32_t, (AtenTensorHandle, int64_t**))                                                    \
  X(aoti_torch_get_stride, int32_t, (AtenTensorHandle, int64_t, int64_t*))                                             \
  X(aoti_torch_get_dim, int32_t, (AtenTensorHandle, int64_t*))                                                         \
  X(aoti_torch_get_numel, int32_t, (AtenTensorHandle, int64_t*))                                                       \
  X(aoti_torch_get_dtype, int32_t, (AtenTensorHandle, int32_t*))                                                       \
  X(aoti_torch_get_device_type, int32_t, (AtenTensorHandle, int32_t*))                                                 \
  X(aoti_torch_get_device_index, int32_t, (AtenTensorHandle, int32_t*))                                                \
  X(aoti_torch_get_layout, int32_t, (AtenTensorHandle, int32_t*))                                                      \
  X(aoti_torch_is_contiguous, int32_t, (AtenTensorHandle, bool*))                                                      \
  X(aoti_torch_item_float32, int32_t, (AtenTensorHandle, float*))                                                      \
  X(aoti_torch_item_int64, int32_t, (AtenTensorHandle, int64_t*))                                                      \
  X(aoti_torch_item_bool, int32_t, (AtenTensorHandle, bool*))                                                          \
  X(aoti_torch_item_bfloat16, int32_t, (AtenTensorHandle, uint16_t*))                                                  \
  X(aoti_torch_scalar_to_tensor_float32, int32_t, (float, AtenTensorHandle*))                                          \
  X(aoti_torch_scalar_to_tensor_int64, int32_t, (int64_t, AtenTensorHandle*))                                          \
  X(aoti_torch_cpu_addmm_out, int32_t,                                                                                 \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double, double))                          \
  X(aoti_torch_cpu_mm_out, int32_t, (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle))                            \
  X(aoti_torch_cpu_bmm_out, int32_t, (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle))                           \
  X(aoti_torch_cpu_convolution, int32_t,                                                                               \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const int64_t*, int64_t, const int64_t*, int64_t,          \
     const int64_t*, int64_t, int32_t, const int64_t*, int64_t, int64_t, AtenTensorHandle*))                           \
  X(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu, int32_t,                                               \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double, int32_t, AtenTensorHandle*, double*,                \
     AtenTensorHandle*, AtenTensorHandle*))                                                                            \
  X(aoti_torch_cpu_cumsum, int32_t, (AtenTensorHandle, int64_t, int32_t*, AtenTensorHandle*))                          \
  X(aoti_torch_cpu_cumprod, int32_t, (AtenTensorHandle, int64_t, int32_t*, AtenTensorHandle*))                         \
  X(aoti_torch_cpu_sort_stable, int32_t,                                                                               \
    (AtenTensorHandle, int32_t*, int64_t, int32_t, AtenTensorHandle*, AtenTensorHandle*))                              \
  X(aoti_torch_cpu_topk, int32_t,                                                                                      \
    (AtenTensorHandle, int64_t, int64_t, int32_t, int32_t, AtenTensorHandle*, AtenTensorHandle*))                      \
  X(aoti_torch_cpu_searchsorted_Tensor, int32_t,                                                                       \
    (AtenTensorHandle, AtenTensorHandle, int32_t, int32_t, const char**, AtenTensorHandle*, AtenTensorHandle*))        \
  X(aoti_torch_cpu_bucketize_Tensor, int32_t,                                                                          \
    (AtenTensorHandle, AtenTensorHandle, int32_t, int32_t, AtenTensorHandle*))                                         \
  X(aoti_torch_cpu_nonzero, int32_t, (AtenTensorHandle, AtenTensorHandle*))                                            \
  X(aoti_torch_cpu_masked_select, int32_t, (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*))                    \
  X(aoti_torch_cpu_index_Tensor, int32_t, (AtenTensorHandle, const AtenTensorHandle**, int64_t, AtenTensorHandle*))    \
  X(aoti_torch_cpu_masked_scatter, int32_t, (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*)) \
  X(aoti_torch_cpu_repeat_interleave_Tensor, int32_t, (AtenTensorHandle, int64_t*, AtenTensorHandle*))                 \
  X(aoti_torch_cpu_scatter_src_out, int32_t,                                                                           \
    (AtenTensorHandle, AtenTensorHandle, int64_t, AtenTensorHandle, AtenTensorHandle))                                 \
  X(aoti_torch_cpu_scatter_value_out, int32_t,                                                                         \
    (AtenTensorHandle, AtenTensorHandle, int64_t, AtenTensorHandle, double))                                           \
  X(aoti_torch_cpu_scatter_reduce_two_out, int32_t,                                                                    \
    (AtenTensorHandle, AtenTensorHandle, int64_t, AtenTensorHandle, AtenTensorHandle, const char*, int32_t))           \
  X(aoti_torch_cpu__weight_int8pack_mm, int32_t,                                                                       \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*))                                         \
  X(aoti_torch_cpu_baddbmm_out, int32_t,                                                                               \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double, double))                          \
  X(aoti_torch_cpu__cdist_forward, int32_t, (AtenTensorHandle, AtenTensorHandle, double, int64_t*, AtenTensorHandle*)) \
  X(aoti_torch_cpu__trilinear, int32_t,                                                                                \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, const int64_t*, int64_t, const int64_t*, int64_t,           \
     const int64_t*, int64_t, const int64_t*, int64_t, int64_t, AtenTensorHandle*))                                    \
  X(aoti_torch_cpu__pdist_forward, int32_t, (AtenTensorHandle, double, AtenTensorHandle*))                             \
  X(aoti_torch_cpu_grid_sampler_3d, int32_t,                                                                           \
    (AtenTensorHandle, AtenTensorHandle, int64_t, int64_t, int32_t, AtenTensorHandle*))                                \
  X(aoti_torch_cpu_kthvalue, int32_t,                                                                                  \
    (AtenTensorHandle, int64_t, int64_t, int32_t, AtenTensorHandle*, AtenTensorHandle*))                               \
  X(aoti_torch_cpu__embedding_bag, int32_t,                                                                            \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, int32_t, int64_t, int32_t, AtenTensorHandle*, int32_t,      \
     int64_t, AtenTensorHandle*, AtenTensorHandle*, AtenTensorHandle*, AtenTensorHandle*))                             \
  X(aoti_torch_cpu_mkldnn_rnn_layer, int32_t,                                                                          \
    (AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle,       \
     AtenTensorHandle, int32_t, const int64_t*, int64_t, int64_t, int64_t, int64_t, int32_t, int32_t, int32_t,         \
     int32_t, AtenTensorHandle*, AtenTensorHandle*, AtenTensorHandle*, AtenTensorHandle*))                             \
  X(aoti_torch_cpu_avg_pool2d, int32_t,                                                                                \
    (AtenTensorHandle, const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*, int64_t, int32_t, int32_t,    \
     int64_t*, AtenTensorHandle*))                                                                                     \
  X(aoti_torch_cpu_avg_pool3d, int32_t,                                                                                \
    (AtenTensorHandle, const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*, int64_t, int32_t, int32_t,    \
     int64_t*, AtenTensorHandle*))                                                                                     \
  X(aoti_torch_cpu_max_pool2d_with_indices, int32_t,                                                                   \
    (AtenTensorHandle, const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*,      \
     int64_t, int32_t, AtenTensorHandle*, AtenTensorHandle*))                                                          \
  X(aoti_torch_cpu_max_pool3d_with_indices, int32_t,                                                                   \
    (AtenTensorHandle, const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*,      \
     int64_t, int32_t, AtenTensorHandle*, AtenTensorHandle*))                                                          \
  X(aoti_torch_cpu__adaptive_avg_pool2d, int32_t, (AtenTensorHandle, const int64_t*, int64_t, AtenTensorHandle*))      \
  X(aoti_torch_cpu__adaptive_avg_pool3d, int32_t, (AtenTensorHandle, const int64_t*, int64_t, AtenTensorHandle*))      \
  X(aoti_torch_cpu_adaptive_max_pool2d, int32_t,                                                                       \
    (AtenTensorHandle, const int64_t*, int64_t, AtenTensorHandle*, AtenTensorHandle*))                                 \
  X(aoti_torch_cpu_adaptive_max_pool3d, int32_t,                                                                       \
    (AtenTensorHandle, const int64_t*, int64_t, AtenTensorHandle*, AtenTensorHandle*))                                 \
  X(aoti_torch_cpu_histc, int32_t, (AtenTensorHandle, int64_t, double, double, AtenTensorHandle*))                     \
  X(aoti_torch_cpu_median, int32_t, (AtenTensorHandle, AtenTensorHandle*))                                             \
  X(aoti_torch_cpu_mode, int32_t, (AtenTensorHandle, int64_t, int32_t, AtenTensorHandle*, AtenTensorHandle*))

struct ShimApi {
#define AOTRUN_SHIM_TEST_FIELD(name, ret, args) ret(*name) args = nullptr;
  AOTRUN_SHIM_TEST_FUNCTIONS(AOTRUN_SHIM_TEST_FIELD)
#undef AOTRUN_SHIM_TEST_FIELD

  // Resolves every function from `handle`; returns the first missing name, or "".
  std::string resolve(void* handle) {
#define AOTRUN_SHIM_TEST_RESOLVE(name, ret, args)               \
  name = reinterpret_cast<ret(*) args>(::dlsym(handle, #name)); \
  if (name == nullptr) return #name;
    AOTRUN_SHIM_TEST_FUNCTIONS(AOTRUN_SHIM_TEST_RESOLVE)
#undef AOTRUN_SHIM_TEST_RESOLVE
    return "";
  }
};
