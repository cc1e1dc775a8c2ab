// The linear-algebra ops AOTInductor leaves to the proxy executor (they have
// no C shim function): linalg_inv_ex, _linalg_solve_ex and the
// _linalg_check_errors that follows them, on LAPACK (OpenBLAS's, loaded when
// first used: compute/openblas.hpp). Matrices are factored in column-major
// copies, as libtorch does, so the LU factors, the pivots (1-based, int32)
// and the info codes are LAPACK's, the same as libtorch's; float32 and
// float64, batched over the leading dims.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "compute/openblas.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

template <typename T>
struct Lapack;
template <>
struct Lapack<float> {
  static constexpr const char* getrf = "sgetrf_";
  static constexpr const char* getri = "sgetri_";
  static constexpr const char* gesv = "sgesv_";
};
template <>
struct Lapack<double> {
  static constexpr const char* getrf = "dgetrf_";
  static constexpr const char* getri = "dgetri_";
  static constexpr const char* gesv = "dgesv_";
};
// Fortran signatures (every argument by address).
template <typename T>
using Getrf = void (*)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
template <typename T>
using Getri = void (*)(const int* n, T* a, const int* lda, const int* ipiv, T* work, const int* lwork, int* info);
template <typename T>
using Gesv = void (*)(const int* n, const int* nrhs, T* a, const int* lda, int* ipiv, T* b, const int* ldb, int* info);

template <typename F>
F lapack(const char* symbol, const std::string& op) {
  return reinterpret_cast<F>(kernels::openblas_symbol(symbol, op));
}

const Tensor& square_matrices(const ExternCall& c, size_t k, const char* name) {
  if (c.inputs.size() <= k) throw ShimError(c.node.target + ": argument '" + name + "' was not passed");
  const Tensor& a = *c.inputs[k];
  if (a.device_type != kCPU) throw ShimError(c.node.target + ": argument '" + name + "' is not a CPU tensor");
  if (a.dtype != kFloat32 && a.dtype != kFloat64) {
    throw ShimError(c.node.target + ": argument '" + name + "' has dtype " + dtype_name(a.dtype) +
                    "; aotrun's shim runs float32 and float64");
  }
  if (a.dim() < 2 || a.sizes[a.dim() - 1] != a.sizes[a.dim() - 2]) {
    throw ShimError(c.node.target + ": argument '" + name + "' must be a batch of square matrices");
  }
  return a;
}

// Strides of a batch of column-major [rows, cols] matrices.
std::vector<int64_t> column_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  const size_t d = sizes.size();
  int64_t acc = 1;
  if (d >= 2) {
    st[d - 2] = 1;
    st[d - 1] = std::max<int64_t>(sizes[d - 2], 1);
    acc = st[d - 1] * std::max<int64_t>(sizes[d - 1], 1);
  }
  for (size_t i = d >= 2 ? d - 2 : d; i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

std::vector<int64_t> batch_of(const Tensor& a, int64_t trailing) {
  return std::vector<int64_t>(a.sizes.begin(), a.sizes.end() - trailing);
}

int64_t count(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

template <typename T>
void invert(const ExternCall& c, const Tensor& a) {
  const int n = static_cast<int>(a.sizes.back());
  Tensor inv = empty_tensor(a.sizes, column_major(a.sizes), a.dtype);
  copy_host_elements(inv, a);
  const std::vector<int64_t> batch = batch_of(a, 2);
  Tensor info = empty_contiguous(batch, kInt32);
  const auto getrf = lapack<Getrf<T>>(Lapack<T>::getrf, c.node.target);
  const auto getri = lapack<Getri<T>>(Lapack<T>::getri, c.node.target);
  std::vector<int> ipiv(static_cast<size_t>(std::max(n, 1)));
  const int lda = std::max(n, 1);
  std::vector<T> work;
  int32_t* ip = static_cast<int32_t*>(info.data());
  for (int64_t b = 0, nb = count(batch); b < nb; ++b) {
    T* m = static_cast<T*>(inv.data()) + b * n * n;
    int rc = 0;
    if (n > 0) getrf(&n, &n, m, &lda, ipiv.data(), &rc);
    if (rc == 0 && n > 0) {
      int lwork = -1;
      T query = 0;
      getri(&n, m, &lda, ipiv.data(), &query, &lwork, &rc);
      lwork = std::max(static_cast<int>(query), n);
      work.resize(static_cast<size_t>(lwork));
      getri(&n, m, &lda, ipiv.data(), work.data(), &lwork, &rc);
    }
    ip[b] = rc;
  }
  set_output(c, 0, inv);
  set_output(c, 1, info);
}

template <typename T>
void solve(const ExternCall& c, const Tensor& a, const Tensor& rhs) {
  const int n = static_cast<int>(a.sizes.back());
  const bool vector = rhs.dim() == a.dim() - 1;
  const std::vector<int64_t> batch = batch_of(a, 2);
  if (batch_of(rhs, vector ? 1 : 2) != batch || rhs.sizes[rhs.dim() - (vector ? 1 : 2)] != n) {
    throw ShimError(c.node.target + ": argument 'B' must have A's batch dims and " + std::to_string(n) +
                    " rows (aotrun's shim does not broadcast them)");
  }
  const int nrhs = vector ? 1 : static_cast<int>(rhs.sizes.back());
  Tensor lu = empty_tensor(a.sizes, column_major(a.sizes), a.dtype);
  copy_host_elements(lu, a);
  // The result as column-major matrices [n, nrhs] (a vector is one column).
  Tensor x = empty_tensor(rhs.sizes, vector ? contiguous_strides(rhs.sizes) : column_major(rhs.sizes), a.dtype);
  copy_host_elements(x, rhs);
  std::vector<int64_t> piv_sizes = batch;
  piv_sizes.push_back(n);
  Tensor pivots = empty_contiguous(piv_sizes, kInt32);
  Tensor info = empty_contiguous(batch, kInt32);
  const auto gesv = lapack<Gesv<T>>(Lapack<T>::gesv, c.node.target);
  const int lda = std::max(n, 1);
  std::vector<int> ipiv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0, nb = count(batch); b < nb; ++b) {
    int rc = 0;
    if (n > 0 && nrhs > 0) {
      gesv(&n, &nrhs, static_cast<T*>(lu.data()) + b * n * n, &lda, ipiv.data(),
           static_cast<T*>(x.data()) + b * n * nrhs, &lda, &rc);
    }
    static_cast<int32_t*>(info.data())[b] = rc;
    for (int i = 0; i < n; ++i) static_cast<int32_t*>(pivots.data())[b * n + i] = ipiv[static_cast<size_t>(i)];
  }
  set_output(c, 0, x);
  set_output(c, 1, lu);
  set_output(c, 2, pivots);
  set_output(c, 3, info);
}

}  // namespace

void linalg_inv_ex(const ExternCall& c) {
  const Tensor& a = square_matrices(c, 0, "A");
  if (c.outputs.size() != 2) throw ShimError(c.node.target + ": expected 2 outputs (inverse, info)");
  a.dtype == kFloat64 ? invert<double>(c, a) : invert<float>(c, a);
}

void linalg_solve_ex(const ExternCall& c) {
  const Tensor& a = square_matrices(c, 0, "A");
  if (c.inputs.size() < 2) throw ShimError(c.node.target + ": argument 'B' was not passed");
  const Tensor& b = *c.inputs[1];
  if (b.dtype != a.dtype || b.device_type != kCPU || b.dim() < 1) {
    throw ShimError(c.node.target + ": argument 'B' must be a CPU tensor of A's dtype");
  }
  const ExternArg* left = c.node.input("left");
  if (left != nullptr && left->kind == ExternArg::kBool && !left->b) {
    throw ShimError(c.node.target + ": argument 'left' is False (X A = B); aotrun's shim solves A X = B only");
  }
  if (c.outputs.size() != 4) throw ShimError(c.node.target + ": expected 4 outputs (result, LU, pivots, info)");
  a.dtype == kFloat64 ? solve<double>(c, a, b) : solve<float>(c, a, b);
}

// Raises libtorch's error for the first non-zero info, with its wording.
void linalg_check_errors(const ExternCall& c) {
  if (c.inputs.empty() || c.inputs[0]->dtype != kInt32) {
    throw ShimError(c.node.target + ": argument 'info' must be an int32 tensor");
  }
  const Tensor& info = *c.inputs[0];
  const ExternArg* api = c.node.input("api_name");
  const std::string name = api != nullptr && api->kind == ExternArg::kString ? api->s : "linalg";
  Tensor flat = empty_contiguous(info.sizes, kInt32);
  copy_host_elements(flat, info);
  const int32_t* v = static_cast<const int32_t*>(flat.data());
  for (int64_t b = 0, n = flat.numel(); b < n; ++b) {
    if (v[b] == 0) continue;
    const std::string batch = info.dim() > 0 ? "(Batch element " + std::to_string(b) + "): " : "";
    const std::string i = std::to_string(v[b]);
    if (v[b] < 0) {
      throw ShimError(name + ": " + batch + "Argument " + std::to_string(-v[b]) + " has illegal value");
    }
    if (name.find("inv") != std::string::npos) {
      throw ShimError(name + ": " + batch + "The diagonal element " + i +
                      " is zero, the inversion could not be completed because the input matrix is singular.");
    }
    if (name.find("solve") != std::string::npos) {
      throw ShimError(name + ": " + batch + "The solver failed because the input matrix is singular.");
    }
    throw ShimError(name + ": " + batch + "U(" + i + "," + i + ") is zero, singular U.");
  }
}

}  // namespace aotrun::shim::proxy
