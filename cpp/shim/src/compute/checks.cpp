#include <initializer_list>
#include <string>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {

void fail_arg(const char* op, const char* arg, const std::string& why) {
  throw ShimError(std::string(op) + ": argument '" + arg + "' " + why);
}

void expect_cpu_defined(const Tensor& t, const char* op, const char* arg) {
  if (!t.defined()) fail_arg(op, arg, "is an undefined tensor");
  if (t.device_type != kCPU) fail_arg(op, arg, "is not a CPU tensor");
}

void expect_dim(const Tensor& t, int64_t dim, const char* op, const char* arg) {
  expect_cpu_defined(t, op, arg);
  if (t.dim() != dim) {
    fail_arg(op, arg, "must be " + std::to_string(dim) + "-d, got " + std::to_string(t.dim()) + "-d");
  }
}

namespace {

// Dims visited innermost first; see channels_last_strides.
bool laid_out_as(const Tensor& t, std::initializer_list<int> inner_first) {
  if (t.strides[1] == 0) return false;
  int64_t min = 0;
  for (int d : inner_first) {
    if (t.sizes[d] == 0) return false;
    if (t.strides[d] < min) return false;
    if (d == 0 && min == t.strides[1]) return false;
    min = t.strides[d];
    if (t.sizes[d] > 1) min *= t.sizes[d];
  }
  return true;
}

bool is_cpx(int32_t d) { return d == kComplex64 || d == kComplex128; }
bool is_flt(int32_t d) { return d == kFloat16 || d == kBFloat16 || d == kFloat32 || d == kFloat64; }
bool is_sint(int32_t d) { return d == kInt8 || d == kInt16 || d == kInt32 || d == kInt64; }
bool is_wide_uint(int32_t d) { return d == kUInt16 || d == kUInt32 || d == kUInt64; }

int int_width(int32_t d) {
  switch (d) {
    case kInt8:
    case kUInt8: return 8;
    case kInt16: return 16;
    case kInt32: return 32;
    default: return 64;
  }
}

}  // namespace

bool is_channels_last(const Tensor& t) { return t.dim() == 4 && laid_out_as(t, {1, 3, 2, 0}); }
bool is_channels_last_3d(const Tensor& t) { return t.dim() == 5 && laid_out_as(t, {1, 4, 3, 2, 0}); }

int32_t promote_types(int32_t a, int32_t b, const char* op) {
  if (a == b) return a;
  // c10: a uint16/32/64 promotes only with a floating type (to it), bool included in the refusal.
  if (is_wide_uint(a) || is_wide_uint(b)) {
    if (is_flt(a)) return a;
    if (is_flt(b)) return b;
    fail_arg(op, "tensors",
             std::string("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote ") +
                 dtype_name(a) + " and " + dtype_name(b));
  }
  if (a == kBool) return b;
  if (b == kBool) return a;
  if (is_cpx(a) || is_cpx(b)) {
    const bool wide = a == kComplex128 || b == kComplex128 || a == kFloat64 || b == kFloat64;
    return wide ? kComplex128 : kComplex64;
  }
  if (is_flt(a) && is_flt(b)) {
    if (a == kFloat64 || b == kFloat64) return kFloat64;
    return kFloat32;  // float16 with bfloat16, or either with float32
  }
  if (is_flt(a)) return a;
  if (is_flt(b)) return b;
  if ((a == kUInt8 && is_sint(b)) || (b == kUInt8 && is_sint(a))) {
    const int32_t s = a == kUInt8 ? b : a;
    return s == kInt8 ? kInt16 : s;
  }
  return int_width(a) >= int_width(b) ? a : b;
}

}  // namespace aotrun::shim::kernels
