// Checks of caller tensors against a spec, and typed access to their data.
// The checks run on every call (packages are defensive: the host validates
// too, but a package may be driven by other hosts). They allocate only when
// they fail, to build the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

#include "aotrun/sdk/dtype.hpp"
#include "aotrun/sdk/error.hpp"
#include "aotrun/sdk/shape.hpp"
#include "aotrun/sdk/signature.hpp"

namespace aotrun {
namespace sdk {

// Pointer to the first element (byte_offset applied).
template <class T>
T* data_ptr(const DLTensor& t) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
}

// Element count, false if a dim is negative or the count overflows int64_t
// (a wrapped count can read as 0, "empty", and let NULL data through). An
// empty tensor (a zero dim) is 0 whatever the other dims say.
inline bool checked_numel(const DLTensor& t, int64_t* out) noexcept {
  int64_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) return false;
    if (t.shape[i] == 0) {
      *out = 0;
      return true;
    }
  }
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (__builtin_mul_overflow(n, t.shape[i], &n)) return false;
  }
  *out = n;
  return true;
}

// Byte size (dtype_bytes x element count), false if it overflows int64_t:
// model code computes sizes from shapes, and those must not wrap either.
inline bool checked_nbytes(const DLTensor& t, int64_t* out) noexcept {
  int64_t n = 0;
  return checked_numel(t, &n) && !__builtin_mul_overflow(n, static_cast<int64_t>(dtype_bytes(t.dtype)), out);
}

// Element count; INVALID_ARGUMENT if it overflows (checked_numel).
inline int64_t numel(const DLTensor& t) {
  int64_t n = 0;
  if (!checked_numel(t, &n)) {
    fail_invalid("a tensor of shape " + format_shape(t.shape, t.ndim) + " has no valid element count");
  }
  return n;
}

// strides NULL, or equal to compact row-major strides (dims of extent 1 may
// carry any stride; an empty tensor is always compact). A stride product
// that overflows cannot equal any given stride: not compact.
inline bool is_compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) return true;
  }
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    if (__builtin_mul_overflow(expected, t.shape[i], &expected)) return false;
  }
  return true;
}

inline const char* device_name(int32_t type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLCUDAManaged: return "cuda_managed";
    default: return "other";
  }
}

inline std::string device_str(DLDevice d) {
  return std::string(device_name(d.device_type)) + ":" + std::to_string(d.device_id);
}

// CPU tensors match any CPU device id (DLPack leaves it 0 by convention).
inline bool same_device(DLDevice a, DLDevice b) {
  if (a.device_type != b.device_type) return false;
  return a.device_type == kDLCPU || a.device_id == b.device_id;
}

namespace detail {

[[noreturn]] inline void tensor_fail(const char* role, size_t index, const TensorSpec& spec, const std::string& what) {
  fail_invalid(std::string(role) + " " + std::to_string(index) + " ('" + spec.name + "'): " + what);
}

}  // namespace detail

// Checks dtype, ndim and every fixed dimension of the spec; dims must be >= 0.
inline void check_tensor_shape(const char* role, size_t index, const TensorSpec& spec, const DLTensor& t) {
  if (!same_dtype(t.dtype, spec.dtype)) {
    detail::tensor_fail(role, index, spec, "dtype is " + dtype_name(t.dtype) + ", expected " + dtype_name(spec.dtype));
  }
  if (t.ndim != spec.ndim()) {
    detail::tensor_fail(role, index, spec,
                        "has " + std::to_string(t.ndim) + " dimensions, expected " + std::to_string(spec.ndim()) +
                            " (shape " + spec.shape_str() + ")");
  }
  if (t.ndim > 0 && t.shape == nullptr) detail::tensor_fail(role, index, spec, "shape is NULL");
  for (int32_t d = 0; d < t.ndim; ++d) {
    const bool bad = t.shape[d] < 0 || (spec.shape[d] != kDynamic && t.shape[d] != spec.shape[d]);
    if (bad) {
      detail::tensor_fail(role, index, spec,
                          "shape " + format_shape(t.shape, t.ndim) + " does not match " + spec.shape_str() +
                              " (dimension " + std::to_string(d) + ")");
    }
  }
}

// Everything a run needs: shape as above, plus the device, compact layout and
// data present (NULL data is allowed only for empty tensors).
inline void check_run_tensor(const char* role, size_t index, const TensorSpec& spec, const DLTensor& t,
                             DLDevice device) {
  check_tensor_shape(role, index, spec, t);
  if (!same_device(t.device, device)) {
    detail::tensor_fail(role, index, spec,
                        "is on device " + device_str(t.device) + ", the container runs on " + device_str(device));
  }
  int64_t bytes = 0;
  if (!checked_nbytes(t, &bytes)) {
    detail::tensor_fail(role, index, spec, "shape " + format_shape(t.shape, t.ndim) + " is too large to address");
  }
  if (!is_compact(t)) {
    detail::tensor_fail(role, index, spec, "is not compact row-major (strides given do not match)");
  }
  if (t.data == nullptr && bytes != 0) detail::tensor_fail(role, index, spec, "data is NULL");
}

}  // namespace sdk
}  // namespace aotrun
