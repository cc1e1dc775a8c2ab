#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "describe.hpp"
#include "error.hpp"

namespace aotrun::cli {

namespace {

constexpr size_t kAlignment = 64;

bool is(DLDataType d, uint8_t code, uint8_t bits) { return d.code == code && d.bits == bits && d.lanes == 1; }

// SplitMix64: tiny, fast and fully specified, so the same seed gives the same
// inputs with every compiler and standard library (std:: distributions do not
// promise that).
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
void fill_ints(void* data, size_t n, uint64_t& state) {
  T* out = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(splitmix64(state) % 10);
}

template <typename T>
void fill_floats(void* data, size_t n, uint64_t& state) {
  T* out = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) {
    const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    out[i] = static_cast<T>(unit * 2.0 - 1.0);
  }
}

}  // namespace

bool dtype_supported(DLDataType d) {
  return is(d, kDLFloat, 32) || is(d, kDLFloat, 64) || is(d, kDLInt, 8) || is(d, kDLInt, 16) || is(d, kDLInt, 32) ||
         is(d, kDLInt, 64) || is(d, kDLUInt, 8) || is_bool(d);
}

bool is_complex_dtype(DLDataType d) { return is(d, kDLComplex, 64) || is(d, kDLComplex, 128); }

std::complex<double> HostTensor::complex_element(size_t i) const {
  if (is(dtype_, kDLComplex, 64)) {
    const std::complex<float> z = static_cast<const std::complex<float>*>(data())[i];
    return {z.real(), z.imag()};
  }
  if (is(dtype_, kDLComplex, 128)) return static_cast<const std::complex<double>*>(data())[i];
  return {element(i), 0.0};
}

void HostTensor::Free::operator()(void* p) const { std::free(p); }

HostTensor::HostTensor(std::string name, DLDataType dtype, std::vector<int64_t> shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {
  const size_t elem = dtype_size(dtype_);
  if (elem == 0) {
    throw Failure(AOTRUN_ERR_UNSUPPORTED, "tensor '" + name_ + "': dtype " + dtype_name(dtype_) + " has no byte size");
  }
  numel_ = 1;
  for (int64_t d : shape_) {
    if (d < 0) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT,
                    "tensor '" + name_ + "': negative dimension in shape " + shape_text(shape_));
    }
    if (d != 0 && numel_ > std::numeric_limits<size_t>::max() / static_cast<size_t>(d) / elem) {
      throw Failure(AOTRUN_ERR_OUT_OF_MEMORY, "tensor '" + name_ + "': shape " + shape_text(shape_) + " is too large");
    }
    numel_ *= static_cast<size_t>(d);
  }
  nbytes_ = numel_ * elem;
  // aligned_alloc wants a multiple of the alignment and a non-zero size.
  const size_t alloc = (nbytes_ + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
  void* p = std::aligned_alloc(kAlignment, alloc);
  if (p == nullptr) {
    throw Failure(AOTRUN_ERR_OUT_OF_MEMORY,
                  "tensor '" + name_ + "': cannot allocate " + std::to_string(nbytes_) + " bytes");
  }
  std::memset(p, 0, alloc);
  data_.reset(p);
}

DLTensor HostTensor::view() {
  DLTensor t{};
  t.data = data_.get();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape_.size());
  t.dtype = dtype_;
  t.shape = shape_.data();
  t.strides = strides_.empty() ? nullptr : strides_.data();
  t.byte_offset = 0;
  return t;
}

HostTensor HostTensor::in_layout_of(const std::vector<int64_t>& compiled) const {
  const size_t n = shape_.size();
  if (compiled.size() != n) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "input '" + name_ + "': a layout of rank " +
                                                   std::to_string(compiled.size()) + " for a tensor of rank " +
                                                   std::to_string(n));
  }
  // Outermost first: dims by decreasing compiled stride (stable).
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return compiled[a] > compiled[b]; });
  HostTensor out(name_, dtype_, shape_);
  out.strides_.assign(n, 0);
  int64_t stride = 1;
  for (size_t k = n; k-- > 0;) {
    out.strides_[order[k]] = stride;
    stride *= shape_[order[k]];
  }
  const size_t width = numel_ == 0 ? 0 : nbytes_ / numel_;
  const auto* src = static_cast<const char*>(data_.get());
  auto* dst = static_cast<char*>(out.data_.get());
  std::vector<int64_t> index(n, 0);
  for (size_t e = 0; e < numel_; ++e) {  // e walks the source row-major
    int64_t at = 0;
    for (size_t d = 0; d < n; ++d) at += index[d] * out.strides_[d];
    std::memcpy(dst + static_cast<size_t>(at) * width, src + e * width, width);
    for (size_t d = n; d-- > 0;) {
      if (++index[d] < shape_[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

double HostTensor::element(size_t i) const {
  const void* p = data_.get();
  if (is(dtype_, kDLFloat, 32)) return static_cast<const float*>(p)[i];
  if (is(dtype_, kDLFloat, 64)) return static_cast<const double*>(p)[i];
  if (is(dtype_, kDLInt, 8)) return static_cast<const int8_t*>(p)[i];
  if (is(dtype_, kDLInt, 16)) return static_cast<const int16_t*>(p)[i];
  if (is(dtype_, kDLInt, 32)) return static_cast<const int32_t*>(p)[i];
  if (is(dtype_, kDLInt, 64)) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  if (is(dtype_, kDLUInt, 8)) return static_cast<const uint8_t*>(p)[i];
  if (is_bool(dtype_)) return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
  return std::nan("");
}

void fill_random(HostTensor& t, uint64_t seed) {
  uint64_t state = seed;
  const DLDataType d = t.dtype();
  if (is(d, kDLFloat, 32)) return fill_floats<float>(t.data(), t.numel(), state);
  if (is(d, kDLFloat, 64)) return fill_floats<double>(t.data(), t.numel(), state);
  // Complex: (real, imaginary) pairs, each part like a float's.
  if (is(d, kDLComplex, 64)) return fill_floats<float>(t.data(), t.numel() * 2, state);
  if (is(d, kDLComplex, 128)) return fill_floats<double>(t.data(), t.numel() * 2, state);
  if (is(d, kDLInt, 8)) return fill_ints<int8_t>(t.data(), t.numel(), state);
  if (is(d, kDLInt, 16)) return fill_ints<int16_t>(t.data(), t.numel(), state);
  if (is(d, kDLInt, 32)) return fill_ints<int32_t>(t.data(), t.numel(), state);
  if (is(d, kDLInt, 64)) return fill_ints<int64_t>(t.data(), t.numel(), state);
  if (is(d, kDLUInt, 8)) return fill_ints<uint8_t>(t.data(), t.numel(), state);
  if (is_bool(d)) {  // 0 or 1: other byte values are not bools
    auto* b = static_cast<uint8_t*>(t.data());
    for (size_t i = 0; i < t.numel(); ++i) b[i] = static_cast<uint8_t>(splitmix64(state) & 1);
    return;
  }
  throw Failure(AOTRUN_ERR_UNSUPPORTED,
                "input '" + t.name() + "': cannot generate random " + dtype_name(d) + " data; pass it with --input");
}

Summary summarize(const HostTensor& t) {
  Summary s;
  if (!dtype_supported(t.dtype())) return s;
  double sum = 0;
  for (size_t i = 0; i < t.numel(); ++i) {
    const double v = t.element(i);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    if (s.counted == 0 || v < s.min) s.min = v;
    if (s.counted == 0 || v > s.max) s.max = v;
    sum += v;
    ++s.counted;
  }
  if (s.counted != 0) s.mean = sum / static_cast<double>(s.counted);
  return s;
}

ComplexSummary summarize_complex(const HostTensor& t) {
  ComplexSummary s;
  if (!is_complex_dtype(t.dtype())) return s;
  std::complex<double> sum;
  for (size_t i = 0; i < t.numel(); ++i) {
    const std::complex<double> z = t.complex_element(i);
    if (std::isnan(z.real()) || std::isnan(z.imag())) {
      ++s.nan_count;
      continue;
    }
    const double m = std::abs(z);
    if (s.counted == 0 || m < s.abs_min) s.abs_min = m;
    if (s.counted == 0 || m > s.abs_max) s.abs_max = m;
    sum += z;
    ++s.counted;
  }
  if (s.counted != 0) s.mean = sum / static_cast<double>(s.counted);
  return s;
}

}  // namespace aotrun::cli
