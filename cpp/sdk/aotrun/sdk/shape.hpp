// Non-owning views of tensor shapes, used by a model's output_shapes().
// They point into the caller's DLTensors or into a buffer the SDK owns, so
// computing output shapes allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

#include "aotrun/sdk/error.hpp"

namespace aotrun {
namespace sdk {

// Dimension value that marks a dynamic dimension in a spec.
constexpr int64_t kDynamic = -1;

// "[?, 256]" (dynamic dims as ?), "[]" for a scalar.
inline std::string format_shape(const int64_t* dims, int32_t ndim) {
  std::string s = "[";
  for (int32_t i = 0; i < ndim; ++i) {
    if (i) s += ", ";
    s += dims[i] == kDynamic ? std::string("?") : std::to_string(dims[i]);
  }
  s += "]";
  return s;
}

class Shape {
 public:
  Shape(const int64_t* dims, int32_t ndim) : dims_(dims), ndim_(ndim) {}
  int32_t ndim() const { return ndim_; }
  int64_t operator[](int32_t i) const { return dims_[i]; }
  const int64_t* data() const { return dims_; }
  // Product of the dims (0 if one is 0). A product that overflows int64_t
  // is an INVALID_ARGUMENT error, never a wrapped count (signed overflow is
  // undefined, and a wrap can read as "empty").
  int64_t numel() const {
    for (int32_t i = 0; i < ndim_; ++i) {
      if (dims_[i] == 0) return 0;
    }
    int64_t n = 1;
    for (int32_t i = 0; i < ndim_; ++i) {
      if (__builtin_mul_overflow(n, dims_[i], &n))
        fail_invalid("shape " + str() + " has more elements than int64_t holds");
    }
    return n;
  }
  std::string str() const { return format_shape(dims_, ndim_); }

 private:
  const int64_t* dims_;
  int32_t ndim_;
};

class MutableShape {
 public:
  MutableShape(int64_t* dims, int32_t ndim) : dims_(dims), ndim_(ndim) {}
  int32_t ndim() const { return ndim_; }
  int64_t& operator[](int32_t i) { return dims_[i]; }
  int64_t operator[](int32_t i) const { return dims_[i]; }
  operator Shape() const { return Shape(dims_, ndim_); }

 private:
  int64_t* dims_;
  int32_t ndim_;
};

// The input shapes handed to Model::output_shapes: validated against the
// signature (dtype, ndim, fixed dimensions) before the model sees them.
class InputShapes {
 public:
  InputShapes(const DLTensor* tensors, size_t count) : tensors_(tensors), count_(count) {}
  size_t size() const { return count_; }
  Shape operator[](size_t i) const { return Shape(tensors_[i].shape, tensors_[i].ndim); }

 private:
  const DLTensor* tensors_;
  size_t count_;
};

// Where Model::output_shapes writes: output i has the ndim of its spec and
// starts out with the spec's dims (-1 for the dynamic ones to fill in).
class OutputShapes {
 public:
  OutputShapes(int64_t* flat, const size_t* offsets, const int32_t* ndims, size_t count)
      : flat_(flat), offsets_(offsets), ndims_(ndims), count_(count) {}
  size_t size() const { return count_; }
  MutableShape operator[](size_t i) const { return MutableShape(flat_ + offsets_[i], ndims_[i]); }

 private:
  int64_t* flat_;
  const size_t* offsets_;
  const int32_t* ndims_;
  size_t count_;
};

}  // namespace sdk
}  // namespace aotrun
