// A host tensor the CLI owns: a 64-byte aligned buffer plus the DLTensor
// that describes it to the library. Also random filling and summaries.
#pragma once

#include <cstddef>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace aotrun::cli {

// dtypes the CLI can fill, summarise and read/write as .npy.
bool dtype_supported(DLDataType dtype);
// complex64 and complex128, which the CLI also fills, reads and writes,
// compares against a tolerance and summarises (summarize_complex).
bool is_complex_dtype(DLDataType dtype);

class HostTensor {
 public:
  HostTensor() = default;
  // Allocates (zeroed) storage for `shape` of `dtype`. Throws Failure
  // (UNSUPPORTED) for dtypes without a whole byte size, OUT_OF_MEMORY when
  // allocation fails.
  HostTensor(std::string name, DLDataType dtype, std::vector<int64_t> shape);

  const std::string& name() const { return name_; }
  DLDataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t numel() const { return numel_; }
  size_t nbytes() const { return nbytes_; }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }

  // A CPU DLTensor viewing this buffer. It points into this object: the
  // object must outlive it and not move.
  DLTensor view();

  // Element i converted to double (dtype_supported() dtypes only), in
  // row-major order (never call it on an in_layout_of copy).
  double element(size_t i) const;
  // Element i as a complex number: a complex64/complex128 element, or a
  // dtype_supported() one with imaginary part 0.
  std::complex<double> complex_element(size_t i) const;

  // A copy whose elements lie in the order of `compiled` strides (those a
  // model was compiled for, e.g. channels_last [192, 1, 24, 3]): dense,
  // outermost the dim of the largest stride, for this tensor's shape. Its
  // view() carries those strides. Throws Failure (INVALID_ARGUMENT) on a
  // rank mismatch.
  HostTensor in_layout_of(const std::vector<int64_t>& compiled) const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::string name_;
  DLDataType dtype_{};
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;  // empty: compact row-major
  size_t numel_ = 0;
  size_t nbytes_ = 0;
  std::unique_ptr<void, Free> data_;
};

// Fills `tensor` deterministically from `seed`: floats uniform in [-1, 1),
// integers uniform in [0, 10) (small and non-negative, so index-like inputs
// stay in range). Throws Failure (UNSUPPORTED) for other dtypes.
void fill_random(HostTensor& tensor, uint64_t seed);

struct Summary {
  double min = 0, max = 0, mean = 0;
  size_t nan_count = 0;  // NaNs are excluded from min/max/mean
  size_t counted = 0;    // elements that entered min/max/mean
};
Summary summarize(const HostTensor& tensor);

// A complex tensor's: the least and largest modulus and the mean, over the
// elements with no NaN part.
struct ComplexSummary {
  double abs_min = 0, abs_max = 0;
  std::complex<double> mean;
  size_t nan_count = 0;
  size_t counted = 0;
};
ComplexSummary summarize_complex(const HostTensor& tensor);

}  // namespace aotrun::cli
