// aoti_torch_cpu__pdist_forward (since aotrun-shim 1.8): torch.pdist, the
// p-norm distance between every pair of rows i < j of self [N, M], as a
// contiguous 1-d result of N(N-1)/2 values in row-major pair order (i, then
// j), in self's dtype. libtorch 2.15's CPU rules:
//  - self must be contiguous, float32 or float64 and 2-d (libtorch refuses
//    0-d and 1-d; it takes more dims but pairs rows past size(0) then, in
//    chunks that depend on its thread count, so the shim refuses those:
//    docs/SHIM.md); N <= 1 gives an empty result, M = 0 zeros;
//  - p is taken in self's dtype, then 0 (count of d != 0, as
//    min(ceil(|d|), 1): a NaN difference gives NaN), 1 (Σ|d|), 2 (sqrt of
//    Σd²), ±inf (max |d|, NaN kept), any other p (including negative and NaN,
//    which torch.pdist refuses but this op does not) (Σ|d|^p)^(1/p).
// Sums run in libtorch's vector order (8 partial sums across the columns,
// then combined), so results agree closely but not always bit for bit with
// libtorch's, whose lane count depends on the CPU.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

enum class Norm { kZero, kOne, kTwo, kInf, kP };

template <typename T>
T term(T d, Norm kind, T p) {
  const T a = std::abs(d);
  switch (kind) {
    case Norm::kZero: return std::isnan(a) ? a : std::min(std::ceil(a), T(1));
    case Norm::kOne:
    case Norm::kInf: return a;
    case Norm::kTwo: return d * d;
    case Norm::kP: return std::pow(a, p);
  }
  return a;
}

template <typename T>
T combine(T x, T y, Norm kind) {
  if (kind == Norm::kInf) return (std::isnan(x) || std::isnan(y)) ? x + y : std::max(x, y);
  return x + y;
}

template <typename T>
T distance(const T* a, const T* b, int64_t m, Norm kind, T p) {
  constexpr int64_t kLanes = 8;
  T acc;
  if (m < kLanes) {
    acc = term(a[0] - b[0], kind, p);
    for (int64_t k = 1; k < m; ++k) acc = combine(acc, term(a[k] - b[k], kind, p), kind);
  } else {
    T lane[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = term(a[l] - b[l], kind, p);
    int64_t k = kLanes;
    for (; k + kLanes <= m; k += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) lane[l] = combine(lane[l], term(a[k + l] - b[k + l], kind, p), kind);
    }
    for (int64_t l = 0; k + l < m; ++l) lane[l] = combine(lane[l], term(a[k + l] - b[k + l], kind, p), kind);
    acc = lane[0];
    for (int64_t l = 1; l < kLanes; ++l) acc = combine(acc, lane[l], kind);
  }
  switch (kind) {
    case Norm::kTwo: return std::sqrt(acc);
    case Norm::kP: return std::pow(acc, T(1) / p);
    default: return acc;
  }
}

template <typename T>
void pdist_rows(const T* x, int64_t n, int64_t m, double p_in, T* out) {
  const T p = static_cast<T>(p_in);
  const Norm kind = p == T(0)       ? Norm::kZero
                    : p == T(1)     ? Norm::kOne
                    : p == T(2)     ? Norm::kTwo
                    : std::isinf(p) ? Norm::kInf
                                    : Norm::kP;
  int64_t o = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) out[o++] = distance(x + i * m, x + j * m, m, kind, p);
}

}  // namespace

Tensor pdist_forward(const Tensor& self, double p, const char* op) {
  expect_cpu_defined(self, op, "self");
  if (!self.is_contiguous()) fail_arg(op, "self", "must be contiguous");
  if (self.dim() != 2) {
    // libtorch's kernel takes more dims but then pairs rows past size(0), in
    // chunks that depend on its thread count; torch.pdist refuses them.
    fail_arg(op, "self", "has " + std::to_string(self.dim()) + " dims; pdist needs rows and columns (2-d)");
  }
  const int32_t dt = self.dtype;
  if (dt != kFloat32 && dt != kFloat64) {
    fail_arg(op, "self", std::string("has dtype ") + dtype_name(dt) + "; expected float32 or float64");
  }
  const int64_t n = self.sizes[0], m = self.sizes[1];
  const int64_t c = n <= 1 ? 0 : n * (n - 1) / 2;
  Tensor out = empty_contiguous({c}, dt);
  if (c == 0) return out;
  if (dt == kFloat64) {
    double* o = static_cast<double*>(out.data());
    if (m == 0) {
      std::fill(o, o + c, 0.0);
    } else {
      pdist_rows(static_cast<const double*>(self.data()), n, m, p, o);
    }
  } else {
    float* o = static_cast<float*>(out.data());
    if (m == 0) {
      std::fill(o, o + c, 0.0f);
    } else {
      pdist_rows(static_cast<const float*>(self.data()), n, m, p, o);
    }
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::pdist_forward(s, p, "aoti_torch_cpu__pdist_forward"));
  });
}
