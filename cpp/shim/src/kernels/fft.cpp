// torch.fft's CPU fallback ops (since aotrun-shim 1.4): aoti_torch_cpu__fft_r2c,
// aoti_torch_cpu__fft_c2c (and the older aoti_torch__fft_c2c), the
// complex-aware aoti_torch_cpu_abs and the views aoti_torch_cpu_view_as_real
// (and the older aoti_torch_view_as_real) / aoti_torch_cpu_view_as_complex;
// aten::_fft_c2r, which has no C shim function, runs through the proxy
// executor (proxy/fft_op.cpp) on fft_c2r below.
//
// The transforms run on KISS FFT (Debian's libkissfft-dev, BSD-3-Clause):
// float32 on its C library (libkissfft-float), float64 on its C++ template
// (kissfft.hh, kissfft<double>), both mixed radix with a generic butterfly
// for any prime factor, so every length is exact-size (no padding). A
// multi-dim transform is the 1-d transform along each dim in turn, each
// line gathered into a contiguous buffer; the normalization (0: none, 1:
// 1/sqrt(n), 2: 1/n, n the product of the signal sizes, torch's
// fft_norm_mode) is applied once at the end. Results are laid out as
// libtorch's MKL path lays them out (_exec_fft): the batch dims outermost,
// ordered by the input's strides, then the transformed dims in the order
// given (c2c: all of them sorted by the input's strides; r2c/c2r: all but
// the last), densely; an empty result is contiguous.
#include <kiss_fft.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <kissfft.hh>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "fft.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

// One 1-d complex transform of length n, forward (e^{-2πi jk/n}) or inverse
// (e^{+2πi jk/n}, unscaled).
template <typename T>
class Plan;

template <>
class Plan<float> {
 public:
  Plan(int64_t n, bool inverse) : cfg_(kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr)) {
    if (cfg_ == nullptr) throw ShimError("kiss_fft_alloc failed for a transform of length " + std::to_string(n));
  }
  ~Plan() { kiss_fft_free(cfg_); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  void run(const std::complex<float>* in, std::complex<float>* out) const {
    // kiss_fft_cpx is {float r, i}: the layout of std::complex<float>.
    kiss_fft(cfg_, reinterpret_cast<const kiss_fft_cpx*>(in), reinterpret_cast<kiss_fft_cpx*>(out));
  }

 private:
  kiss_fft_cfg cfg_;
};

template <>
class Plan<double> {
 public:
  Plan(int64_t n, bool inverse) : fft_(static_cast<std::size_t>(n), inverse) {}
  void run(const std::complex<double>* in, std::complex<double>* out) const { fft_.transform(in, out); }

 private:
  kissfft<double> fft_;
};

static_assert(sizeof(kiss_fft_cpx) == sizeof(std::complex<float>), "kiss_fft_cpx must be two floats");

int32_t complex_of(int32_t real) { return real == kFloat64 ? kComplex128 : kComplex64; }
int32_t real_of(int32_t cplx) { return cplx == kComplex128 ? kFloat64 : kFloat32; }

// The transformed dims, wrapped; empty, repeated or out-of-range dims are refused.
std::vector<int64_t> wrap_dims(const Tensor& self, const int64_t* dim, int64_t dim_len, bool allow_empty,
                               const char* op) {
  if (dim_len < 0 || (dim_len > 0 && dim == nullptr)) fail_arg(op, "dim", "is null or has a negative length");
  if (dim_len == 0 && !allow_empty) fail_arg(op, "dim", "is empty (at least one dim must be transformed)");
  if (dim_len > 0 && self.dim() == 0) fail_arg(op, "self", "is 0-d (a transform needs at least one dim)");
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < dim_len; ++i) {
    const int64_t d = wrap_dim(dim[i], self.dim(), op);
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      fail_arg(op, "dim", "names dim " + std::to_string(d) + " twice");
    }
    dims.push_back(d);
  }
  return dims;
}

void check_norm(int64_t normalization, const char* op) {
  if (normalization < 0 || normalization > 2) {
    fail_arg(op, "normalization", std::to_string(normalization) + " is not 0 (none), 1 (1/sqrt(n)) or 2 (1/n)");
  }
}

// dims in the order libtorch transforms them: sorted by the input's strides,
// outermost first (all of them, or all but the last).
std::vector<int64_t> sort_dims(const Tensor& in, std::vector<int64_t> dims, bool exclude_last) {
  // std::sort, as libtorch (with libstdc++, stable for these few elements).
  std::sort(dims.begin(), dims.end() - (exclude_last ? 1 : 0),
            [&](int64_t a, int64_t b) { return in.strides[a] > in.strides[b]; });
  return dims;
}

// Strides of the result of a transform of `in` over `dims` (in transform
// order) with sizes `out_sizes`, as libtorch's _exec_fft gives them.
std::vector<int64_t> result_strides(const Tensor& in, const std::vector<int64_t>& out_sizes,
                                    const std::vector<int64_t>& dims) {
  const int64_t nd = in.dim();
  int64_t numel = 1;
  for (int64_t s : out_sizes) numel *= s;
  if (numel == 0 || in.numel() == 0) return contiguous_strides(out_sizes);
  std::vector<bool> transformed(static_cast<size_t>(nd), false);
  for (int64_t d : dims) transformed[d] = true;
  std::vector<int64_t> perm(static_cast<size_t>(nd));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  auto batch_end = std::partition(perm.begin(), perm.end(), [&](int64_t d) { return !transformed[d]; });
  std::sort(perm.begin(), batch_end, [&](int64_t a, int64_t b) { return in.strides[a] > in.strides[b]; });
  std::copy(dims.begin(), dims.end(), batch_end);
  const int64_t batch_dims = nd - static_cast<int64_t>(dims.size());
  // [batch, signal...] laid out contiguously.
  std::vector<int64_t> batched(dims.size() + 1, 1);
  for (size_t i = 0; i < dims.size(); ++i) batched[i + 1] = out_sizes[dims[i]];
  const std::vector<int64_t> bstrides = contiguous_strides(batched);
  std::vector<int64_t> out(static_cast<size_t>(nd));
  int64_t batch_numel = 1;
  for (int64_t i = batch_dims - 1; i >= 0; --i) {
    out[perm[i]] = batch_numel * bstrides[0];
    batch_numel *= out_sizes[perm[i]];
  }
  for (int64_t i = batch_dims; i < nd; ++i) out[perm[i]] = bstrides[1 + (i - batch_dims)];
  return out;
}

template <typename T>
using Cpx = std::complex<T>;

// In place along dim d of the complex tensor t: each line transformed.
template <typename T>
void transform_dim(const Tensor& t, int64_t d, bool inverse) {
  const int64_t n = t.sizes[d];
  if (n <= 1) return;  // the DFT of one point is itself
  Plan<T> plan(n, inverse);
  std::vector<Cpx<T>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  auto* base = static_cast<Cpx<T>*>(t.data());
  const int64_t st = t.strides[d];
  for_each_index(t.sizes, d, [&](const std::vector<int64_t>& pos) {
    Cpx<T>* line = base + offset_of(pos, t.strides);
    for (int64_t j = 0; j < n; ++j) a[j] = line[j * st];
    plan.run(a.data(), b.data());
    for (int64_t j = 0; j < n; ++j) line[j * st] = b[j];
  });
}

// t *= scale elementwise (complex or real elements of T).
template <typename E, typename T>
void scale_all(const Tensor& t, T scale) {
  if (scale == T(1)) return;
  auto* base = static_cast<E*>(t.data());
  for_each_index(t.sizes, -1, [&](const std::vector<int64_t>& pos) { base[offset_of(pos, t.strides)] *= scale; });
}

template <typename T>
T norm_scale(int64_t normalization, double n) {
  if (normalization == 1) return static_cast<T>(1.0 / std::sqrt(n));
  if (normalization == 2) return static_cast<T>(1.0 / n);
  return T(1);
}

template <typename T>
Tensor c2c_typed(const Tensor& self, const std::vector<int64_t>& dims, int64_t normalization, bool forward) {
  const std::vector<int64_t> sorted = sort_dims(self, dims, false);
  Tensor out = empty_tensor(self.sizes, result_strides(self, self.sizes, sorted), self.dtype);
  if (out.numel() == 0) return out;
  auto* dst = static_cast<Cpx<T>*>(out.data());
  const auto* src = static_cast<const Cpx<T>*>(self.data());
  for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& pos) {
    dst[offset_of(pos, out.strides)] = src[offset_of(pos, self.strides)];
  });
  double n = 1;
  for (int64_t d : sorted) {
    transform_dim<T>(out, d, !forward);
    n *= static_cast<double>(self.sizes[d]);
  }
  scale_all<Cpx<T>>(out, norm_scale<T>(normalization, n));
  return out;
}

template <typename T>
Tensor r2c_typed(const Tensor& self, const std::vector<int64_t>& dims, int64_t normalization, bool onesided) {
  const int64_t last = dims.back();
  const int64_t n = self.sizes[last];
  std::vector<int64_t> out_sizes = self.sizes;
  if (onesided) out_sizes[last] = n / 2 + 1;
  const std::vector<int64_t> sorted = sort_dims(self, dims, true);
  Tensor out = empty_tensor(out_sizes, result_strides(self, out_sizes, sorted), complex_of(self.dtype));
  if (out.numel() == 0) return out;
  // The last dim: each real line as a complex one, transformed in full, its
  // first out_sizes[last] bins kept.
  const int64_t keep = out_sizes[last];
  std::unique_ptr<Plan<T>> plan = n > 1 ? std::make_unique<Plan<T>>(n, false) : nullptr;
  std::vector<Cpx<T>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  const auto* src = static_cast<const T*>(self.data());
  auto* dst = static_cast<Cpx<T>*>(out.data());
  const int64_t in_st = self.strides[last], out_st = out.strides[last];
  for_each_index(self.sizes, last, [&](const std::vector<int64_t>& pos) {
    const T* in_line = src + offset_of(pos, self.strides);
    Cpx<T>* out_line = dst + offset_of(pos, out.strides);
    for (int64_t j = 0; j < n; ++j) a[j] = Cpx<T>(in_line[j * in_st], T(0));
    if (plan) {
      plan->run(a.data(), b.data());
    } else {
      b = a;
    }
    for (int64_t j = 0; j < keep; ++j) out_line[j * out_st] = b[j];
  });
  double total = static_cast<double>(n);
  for (size_t i = 0; i + 1 < sorted.size(); ++i) {
    transform_dim<T>(out, sorted[i], false);
    total *= static_cast<double>(self.sizes[sorted[i]]);
  }
  scale_all<Cpx<T>>(out, norm_scale<T>(normalization, total));
  return out;
}

template <typename T>
Tensor c2r_typed(const Tensor& self, const std::vector<int64_t>& dims, int64_t normalization, int64_t n,
                 const char* op) {
  // As libtorch: the dims but the last by a backward c2c (normalized by
  // their sizes), then the last by a c2r of length n.
  Tensor input = self;
  std::vector<int64_t> last_only = dims;
  if (dims.size() > 1) {
    input = c2c_typed<T>(self, std::vector<int64_t>(dims.begin(), dims.end() - 1), normalization, false);
    last_only = {dims.back()};
  }
  const int64_t last = dims.back();
  const int64_t half = n / 2 + 1;
  if (input.sizes[last] != half) {
    fail_arg(op, "self",
             "has size " + std::to_string(input.sizes[last]) + " along dim " + std::to_string(last) +
                 ", not last_dim_size / 2 + 1 = " + std::to_string(half));
  }
  std::vector<int64_t> out_sizes = input.sizes;
  out_sizes[last] = n;
  Tensor out = empty_tensor(out_sizes, result_strides(input, out_sizes, last_only), real_of(self.dtype));
  if (out.numel() == 0) return out;
  std::unique_ptr<Plan<T>> plan = n > 1 ? std::make_unique<Plan<T>>(n, true) : nullptr;
  std::vector<Cpx<T>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  const auto* src = static_cast<const Cpx<T>*>(input.data());
  auto* dst = static_cast<T*>(out.data());
  const int64_t in_st = input.strides[last], out_st = out.strides[last];
  for_each_index(input.sizes, last, [&](const std::vector<int64_t>& pos) {
    const Cpx<T>* in_line = src + offset_of(pos, input.strides);
    T* out_line = dst + offset_of(pos, out.strides);
    // The Hermitian-symmetric line the half spectrum stands for; the
    // imaginary parts of bin 0 (and n/2) only add imaginary output, dropped.
    for (int64_t j = 0; j < half; ++j) a[j] = in_line[j * in_st];
    for (int64_t j = half; j < n; ++j) a[j] = std::conj(a[n - j]);
    if (plan) {
      plan->run(a.data(), b.data());
    } else {
      b = a;
    }
    for (int64_t j = 0; j < n; ++j) out_line[j * out_st] = b[j].real();
  });
  scale_all<T>(out, norm_scale<T>(normalization, static_cast<double>(n)));
  return out;
}

void refuse_size_zero(const Tensor& self, const std::vector<int64_t>& dims, const char* op) {
  for (int64_t d : dims) {
    if (self.sizes[d] == 0) fail_arg(op, "self", "has size 0 along transformed dim " + std::to_string(d));
  }
}

}  // namespace

Tensor fft_r2c(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, bool onesided,
               const char* op) {
  expect_cpu_defined(self, op, "self");
  if (self.dtype != kFloat32 && self.dtype != kFloat64) {
    fail_arg(op, "self", std::string("has dtype ") + dtype_name(self.dtype) + "; float32 and float64 are supported");
  }
  const std::vector<int64_t> dims = wrap_dims(self, dim, dim_len, false, op);
  check_norm(normalization, op);
  refuse_size_zero(self, dims, op);
  return self.dtype == kFloat32 ? r2c_typed<float>(self, dims, normalization, onesided)
                                : r2c_typed<double>(self, dims, normalization, onesided);
}

Tensor fft_c2c(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, bool forward,
               const char* op) {
  expect_cpu_defined(self, op, "self");
  if (self.dtype != kComplex64 && self.dtype != kComplex128) {
    fail_arg(op, "self",
             std::string("has dtype ") + dtype_name(self.dtype) + "; complex64 and complex128 are supported");
  }
  const std::vector<int64_t> dims = wrap_dims(self, dim, dim_len, true, op);
  check_norm(normalization, op);
  return self.dtype == kComplex64 ? c2c_typed<float>(self, dims, normalization, forward)
                                  : c2c_typed<double>(self, dims, normalization, forward);
}

Tensor fft_c2r(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, int64_t last_dim_size,
               const char* op) {
  expect_cpu_defined(self, op, "self");
  if (self.dtype != kComplex64 && self.dtype != kComplex128) {
    fail_arg(op, "self",
             std::string("has dtype ") + dtype_name(self.dtype) + "; complex64 and complex128 are supported");
  }
  const std::vector<int64_t> dims = wrap_dims(self, dim, dim_len, false, op);
  check_norm(normalization, op);
  if (last_dim_size < 1) fail_arg(op, "last_dim_size", std::to_string(last_dim_size) + " is below 1");
  refuse_size_zero(self, dims, op);
  return self.dtype == kComplex64 ? c2r_typed<float>(self, dims, normalization, last_dim_size, op)
                                  : c2r_typed<double>(self, dims, normalization, last_dim_size, op);
}

Tensor abs(const Tensor& self, const char* op) {
  expect_cpu_defined(self, op, "self");
  const std::vector<int64_t> strides =
      self.is_non_overlapping_and_dense() ? self.strides : dense_strides_like(self.sizes, self.strides);
  if (self.dtype == kComplex64 || self.dtype == kComplex128) {
    Tensor out = empty_tensor(self.sizes, strides, real_of(self.dtype));
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const auto* src = static_cast<const Cpx<T>*>(self.data());
      auto* dst = static_cast<T*>(out.data());
      for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& pos) {
        dst[offset_of(pos, out.strides)] = std::abs(src[offset_of(pos, self.strides)]);
      });
    };
    if (self.dtype == kComplex64) {
      run(float{});
    } else {
      run(double{});
    }
    return out;
  }
  if (self.dtype == kBool) fail_arg(op, "self", "has dtype bool, which abs does not take");
  Tensor out = empty_tensor(self.sizes, strides, self.dtype);
  dispatch_real(self.dtype, false, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    if constexpr (!std::is_same_v<S, Bool8>) {
      for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& pos) {
        const K v = load_key<S>(self.data(), offset_of(pos, self.strides));
        K r;
        if constexpr (std::is_floating_point_v<K>) {
          r = std::fabs(v);
        } else if constexpr (std::is_signed_v<K>) {
          // Wraps for the most negative value, as libtorch's does.
          r = static_cast<K>(v < 0 ? static_cast<K>(0 - static_cast<std::make_unsigned_t<K>>(v)) : v);
        } else {
          r = v;
        }
        store<S>(out.data(), offset_of(pos, out.strides), Elem<S>::from(r));
      });
    }
  });
  return out;
}

Tensor view_as_real(const Tensor& self, const char* op) {
  expect_cpu_defined(self, op, "self");
  int32_t real = -1;
  if (self.dtype == kComplex64) real = kFloat32;
  if (self.dtype == kComplex128) real = kFloat64;
  if (self.dtype == kComplex32) real = kFloat16;
  if (real < 0) {
    fail_arg(op, "self", std::string("has dtype ") + dtype_name(self.dtype) + "; view_as_real takes complex tensors");
  }
  Tensor out = self;  // shares the storage
  out.dtype = real;
  for (int64_t& s : out.strides) s *= 2;
  out.sizes.push_back(2);
  out.strides.push_back(1);
  out.storage_offset = self.storage_offset * 2;
  return out;
}

Tensor view_as_complex(const Tensor& self, const char* op) {
  expect_cpu_defined(self, op, "self");
  int32_t cplx = -1;
  if (self.dtype == kFloat32) cplx = kComplex64;
  if (self.dtype == kFloat64) cplx = kComplex128;
  if (self.dtype == kFloat16) cplx = kComplex32;
  if (cplx < 0) {
    fail_arg(op, "self",
             std::string("has dtype ") + dtype_name(self.dtype) + "; view_as_complex takes float16, float32, float64");
  }
  if (self.dim() == 0 || self.sizes.back() != 2) fail_arg(op, "self", "must have a last dimension of size 2");
  if (self.strides.back() != 1) fail_arg(op, "self", "must have a last dimension with stride 1");
  for (int64_t i = 0; i + 1 < self.dim(); ++i) {
    if (self.strides[i] % 2 != 0) fail_arg(op, "self", "must have a stride divisible by 2 for all but the last dim");
  }
  if (self.storage_offset % 2 != 0) fail_arg(op, "self", "must have a storage offset divisible by 2");
  Tensor out = self;
  out.dtype = cplx;
  out.sizes.pop_back();
  out.strides.pop_back();
  for (int64_t& s : out.strides) s /= 2;
  out.storage_offset = self.storage_offset / 2;
  return out;
}

}  // namespace aotrun::shim::kernels

namespace {

template <typename F>
AOTITorchError unary(const char* fn, AtenTensorHandle self, AtenTensorHandle* ret0, F&& f) {
  using namespace aotrun::shim;
  return guard(fn, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(f(s));
  });
}

}  // namespace

extern "C" AOTITorchError aoti_torch_cpu__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                  int64_t normalization, int32_t onesided, AtenTensorHandle* ret0) {
  return unary(__func__, self, ret0, [&](const aotrun::shim::Tensor& s) {
    return aotrun::shim::kernels::fft_r2c(s, dim, dim_len_, normalization, onesided != 0, "aoti_torch_cpu__fft_r2c");
  });
}

extern "C" AOTITorchError aoti_torch_cpu__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                  int64_t normalization, int32_t forward, AtenTensorHandle* ret0) {
  return unary(__func__, self, ret0, [&](const aotrun::shim::Tensor& s) {
    return aotrun::shim::kernels::fft_c2c(s, dim, dim_len_, normalization, forward != 0, "aoti_torch_cpu__fft_c2c");
  });
}

extern "C" AOTITorchError aoti_torch__fft_c2c(AtenTensorHandle self, const int64_t* dim_ptr, int64_t dim_size,
                                              int64_t normalization, int32_t forward, AtenTensorHandle* ret) {
  return unary(__func__, self, ret, [&](const aotrun::shim::Tensor& s) {
    return aotrun::shim::kernels::fft_c2c(s, dim_ptr, dim_size, normalization, forward != 0, "aoti_torch__fft_c2c");
  });
}

extern "C" AOTITorchError aoti_torch_cpu_abs(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return unary(__func__, self, ret0,
               [&](const aotrun::shim::Tensor& s) { return aotrun::shim::kernels::abs(s, "aoti_torch_cpu_abs"); });
}

extern "C" AOTITorchError aoti_torch_cpu_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return unary(__func__, self, ret0, [&](const aotrun::shim::Tensor& s) {
    return aotrun::shim::kernels::view_as_real(s, "aoti_torch_cpu_view_as_real");
  });
}

extern "C" AOTITorchError aoti_torch_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret) {
  return unary(__func__, self, ret, [&](const aotrun::shim::Tensor& s) {
    return aotrun::shim::kernels::view_as_real(s, "aoti_torch_view_as_real");
  });
}

extern "C" AOTITorchError aoti_torch_cpu_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return unary(__func__, self, ret0, [&](const aotrun::shim::Tensor& s) {
    return aotrun::shim::kernels::view_as_complex(s, "aoti_torch_cpu_view_as_complex");
  });
}
