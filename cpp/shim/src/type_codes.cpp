// The dtype, device type, layout and memory format codes (c10's values):
// aoti_torch_dtype_*, aoti_torch_device_type_*, aoti_torch_layout_*, ...
#include "aotrun_shim/shim.h"
#include "dtype.hpp"

using namespace aotrun::shim;

extern "C" {

int32_t aoti_torch_device_type_cpu(void) { return kCPU; }
int32_t aoti_torch_device_type_cuda(void) { return kCUDA; }
int32_t aoti_torch_device_type_meta(void) { return kMeta; }
int32_t aoti_torch_device_type_xpu(void) { return kXPU; }
int32_t aoti_torch_device_type_mps(void) { return kMPS; }
int32_t aoti_torch_device_type_privateuse1(void) { return kPrivateUse1; }

int32_t aoti_torch_dtype_float8_e5m2(void) { return kFloat8E5M2; }
int32_t aoti_torch_dtype_float8_e4m3fn(void) { return kFloat8E4M3FN; }
int32_t aoti_torch_dtype_float8_e5m2fnuz(void) { return kFloat8E5M2FNUZ; }
int32_t aoti_torch_dtype_float8_e4m3fnuz(void) { return kFloat8E4M3FNUZ; }
int32_t aoti_torch_dtype_bfloat16(void) { return kBFloat16; }
int32_t aoti_torch_dtype_float16(void) { return kFloat16; }
int32_t aoti_torch_dtype_float32(void) { return kFloat32; }
int32_t aoti_torch_dtype_float64(void) { return kFloat64; }
int32_t aoti_torch_dtype_uint8(void) { return kUInt8; }
int32_t aoti_torch_dtype_uint16(void) { return kUInt16; }
int32_t aoti_torch_dtype_uint32(void) { return kUInt32; }
int32_t aoti_torch_dtype_uint64(void) { return kUInt64; }
int32_t aoti_torch_dtype_int8(void) { return kInt8; }
int32_t aoti_torch_dtype_int16(void) { return kInt16; }
int32_t aoti_torch_dtype_int32(void) { return kInt32; }
int32_t aoti_torch_dtype_int64(void) { return kInt64; }
int32_t aoti_torch_dtype_bool(void) { return kBool; }
int32_t aoti_torch_dtype_complex32(void) { return kComplex32; }
int32_t aoti_torch_dtype_complex64(void) { return kComplex64; }
int32_t aoti_torch_dtype_complex128(void) { return kComplex128; }

int32_t aoti_torch_layout_strided(void) { return kStrided; }
int32_t aoti_torch_layout_sparse_coo(void) { return kSparseCoo; }
int32_t aoti_torch_layout_sparse_csr(void) { return kSparseCsr; }
int32_t aoti_torch_layout_sparse_csc(void) { return kSparseCsc; }
int32_t aoti_torch_layout_sparse_bsr(void) { return kSparseBsr; }
int32_t aoti_torch_layout_sparse_bsc(void) { return kSparseBsc; }
int32_t aoti_torch_layout__mkldnn(void) { return kMkldnn; }
int32_t aoti_torch_layout_jagged(void) { return kJagged; }

int32_t aoti_torch_memory_format_contiguous_format(void) { return kContiguousFormat; }
int32_t aoti_torch_memory_format_channels_last(void) { return kChannelsLast; }
int32_t aoti_torch_memory_format_channels_last_3d(void) { return kChannelsLast3d; }
int32_t aoti_torch_memory_format_preserve_format(void) { return kPreserveFormat; }

size_t aoti_torch_dtype_element_size(int32_t dtype) { return element_size(dtype); }

}  // extern "C"
