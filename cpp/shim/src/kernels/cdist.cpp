// aoti_torch_cpu__cdist_forward: p-norm distances between the rows of x1
// [..., P, M] and x2 [..., R, M] (batch dims broadcast), a contiguous
// [..., P, R] result of their dtype (float32 or float64). Two paths, chosen
// as libtorch chooses them (compute_mode NULL or 0: the matrix path for
// p = 2 when P > 25 or R > 25; 1: always for p = 2; 2: never):
//  - direct: Σ|d|^p per pair, with p = 0 (count of d ≠ 0), 1, 2 (sqrt of
//    Σd²), inf (max |d|) and any other p ≥ 0 ((Σ|d|^p)^(1/p));
//  - matrix (Euclidean): ‖a‖² + ‖b‖² − 2a·b by one GEMM per batch over
//    [−2a, ‖a‖², 1] and [b, 1, ‖b‖²], clamped at 0, then sqrt.
// M = 0 gives zeros. bfloat16 and float16 are refused (libtorch's direct
// path refuses them too; its matrix path takes them).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

template <typename T>
T pair_distance(const T* a, const T* b, int64_t m, double p) {
  T acc = T(0);
  if (p == 0.0) {
    for (int64_t k = 0; k < m; ++k) acc += (a[k] != b[k]) ? T(1) : T(0);
    return acc;
  }
  if (p == 1.0) {
    for (int64_t k = 0; k < m; ++k) acc += std::abs(a[k] - b[k]);
    return acc;
  }
  if (p == 2.0) {
    for (int64_t k = 0; k < m; ++k) {
      const T d = a[k] - b[k];
      acc += d * d;
    }
    return std::sqrt(acc);
  }
  if (std::isinf(p)) {
    for (int64_t k = 0; k < m; ++k) acc = std::max(acc, std::abs(a[k] - b[k]));
    return acc;
  }
  const T pp = static_cast<T>(p);
  for (int64_t k = 0; k < m; ++k) acc += std::pow(std::abs(a[k] - b[k]), pp);
  return std::pow(acc, T(1) / pp);
}

// One batch: a [P, M], b [R, M] contiguous; d [P, R].
template <typename T>
void batch_distances(const T* a, const T* b, int64_t np, int64_t nr, int64_t m, double p, bool matrix, T* d) {
  if (!matrix) {
    for (int64_t i = 0; i < np; ++i)
      for (int64_t j = 0; j < nr; ++j) d[i * nr + j] = pair_distance(a + i * m, b + j * m, m, p);
    return;
  }
  const int64_t w = m + 2;
  std::vector<T> xa(static_cast<size_t>(np * w)), xb(static_cast<size_t>(nr * w));
  for (int64_t i = 0; i < np; ++i) {
    T norm = T(0);
    for (int64_t k = 0; k < m; ++k) {
      xa[i * w + k] = T(-2) * a[i * m + k];
      norm += a[i * m + k] * a[i * m + k];
    }
    xa[i * w + m] = norm;
    xa[i * w + m + 1] = T(1);
  }
  for (int64_t j = 0; j < nr; ++j) {
    T norm = T(0);
    for (int64_t k = 0; k < m; ++k) {
      xb[j * w + k] = b[j * m + k];
      norm += b[j * m + k] * b[j * m + k];
    }
    xb[j * w + m] = T(1);
    xb[j * w + m + 1] = norm;
  }
  blas_gemm(false, true, np, nr, w, T(1), xa.data(), w, xb.data(), w, T(0), d, nr);
  for (int64_t i = 0; i < np * nr; ++i) d[i] = std::sqrt(std::max(d[i], T(0)));
}

}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, const int64_t* compute_mode, const char* op) {
  expect_cpu_defined(x1, op, "x1");
  expect_cpu_defined(x2, op, "x2");
  if (x1.dim() < 2) fail_arg(op, "x1", "must have at least 2 dims, got " + std::to_string(x1.dim()));
  if (x2.dim() < 2) fail_arg(op, "x2", "must have at least 2 dims, got " + std::to_string(x2.dim()));
  const int32_t dt = x1.dtype;
  if (dt != kFloat32 && dt != kFloat64) {
    fail_arg(op, "x1", std::string("has dtype ") + dtype_name(dt) + "; expected float32 or float64");
  }
  if (x2.dtype != dt) {
    fail_arg(op, "x2", std::string("has dtype ") + dtype_name(x2.dtype) + ", 'x1' has " + dtype_name(dt));
  }
  const int64_t m = x1.sizes.back();
  if (x2.sizes.back() != m) {
    fail_arg(op, "x2", "has " + std::to_string(x2.sizes.back()) + " columns, 'x1' has " + std::to_string(m));
  }
  if (!(p >= 0)) fail_arg(op, "p", "is " + std::to_string(p) + "; it must be non-negative");
  const int64_t mode = compute_mode != nullptr ? *compute_mode : 0;
  if (mode < 0 || mode > 2) fail_arg(op, "compute_mode", "is " + std::to_string(mode) + "; expected 0, 1 or 2");
  const int64_t np = x1.sizes[x1.dim() - 2], nr = x2.sizes[x2.dim() - 2];
  // Broadcast batch dims.
  const int64_t b1 = x1.dim() - 2, b2 = x2.dim() - 2, nb = std::max(b1, b2);
  std::vector<int64_t> batch(nb);
  for (int64_t i = 0; i < nb; ++i) {
    const int64_t s1 = i - (nb - b1) >= 0 ? x1.sizes[i - (nb - b1)] : 1;
    const int64_t s2 = i - (nb - b2) >= 0 ? x2.sizes[i - (nb - b2)] : 1;
    if (s1 != s2 && s1 != 1 && s2 != 1) {
      fail_arg(op, "x2", "has batch dims that do not broadcast with 'x1''s at dim " + std::to_string(i));
    }
    batch[i] = s1 == 1 ? s2 : s1;
  }
  std::vector<int64_t> out_sizes = batch;
  out_sizes.push_back(np);
  out_sizes.push_back(nr);
  Tensor out = empty_contiguous(out_sizes, dt);
  if (out.numel() == 0) return out;
  std::vector<int64_t> s1 = batch, s2 = batch;
  s1.push_back(np);
  s1.push_back(m);
  s2.push_back(nr);
  s2.push_back(m);
  Tensor a = empty_contiguous(s1, dt), b = empty_contiguous(s2, dt);
  copy_elements(a, x1);
  copy_elements(b, x2);
  int64_t batches = 1;
  for (int64_t s : batch) batches *= s;
  const bool matrix = p == 2.0 && (mode == 1 || (mode == 0 && (np > 25 || nr > 25)));
  auto go = [&](auto tag) {
    using T = decltype(tag);
    const T* ap = static_cast<const T*>(a.data());
    const T* bp = static_cast<const T*>(b.data());
    T* dp = static_cast<T*>(out.data());
    for (int64_t i = 0; i < batches; ++i) {
      if (m == 0) {
        for (int64_t k = 0; k < np * nr; ++k) dp[i * np * nr + k] = T(0);
        continue;
      }
      batch_distances<T>(ap + i * np * m, bp + i * nr * m, np, nr, m, p, matrix, dp + i * np * nr);
    }
  };
  if (dt == kFloat64) {
    go(double{});
  } else {
    go(float{});
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
                                                        int64_t* compute_mode, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& a = as_tensor(x1, "x1");
    const Tensor& b = as_tensor(x2, "x2");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::cdist(a, b, p, compute_mode, "aoti_torch_cpu__cdist_forward"));
  });
}
