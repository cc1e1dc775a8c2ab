// GEMM for 2-d strided views: float32 (and half types, through float32) on
// oneDNN's sgemm, which picks its kernels by the CPU's features (Debian's
// OpenBLAS 0.3.21 falls back to SSE3 kernels on CPUs newer than it), float64
// on OpenBLAS (loaded when first used). Operands whose rows or columns are
// unit-stride go as they are (transposed if need be); others are packed first.
// A float32 mat2 that nothing writes (read-only storage) is packed once and
// kept (packed_gemm.hpp).
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compute/packed_gemm.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// How BLAS can read a rows x cols view: row-major with leading dim ld
// (trans=false) or column-major (trans=true). False if neither.
bool blas_view(int64_t rows, int64_t cols, int64_t s0, int64_t s1, bool* trans, int64_t* ld) {
  if (rows <= 1) s0 = std::max<int64_t>(cols, 1);  // a single row: any stride works
  if (cols <= 1) s1 = 1;
  if (s1 == 1 && s0 >= std::max<int64_t>(cols, 1)) {
    *trans = false;
    *ld = s0;
    return true;
  }
  if (rows <= 1 || cols <= 1) return false;
  if (s0 == 1 && s1 >= std::max<int64_t>(rows, 1)) {
    *trans = true;
    *ld = s1;
    return true;
  }
  return false;
}

// A view BLAS can read: the tensor itself, or a packed row-major copy of it
// (in dtype `as`).
struct Operand {
  Tensor t;
  bool trans = false;
  int64_t ld = 1;
};

Operand prepare(const Tensor& x, int32_t as) {
  Operand o;
  if (x.dtype == as && blas_view(x.sizes[0], x.sizes[1], x.strides[0], x.strides[1], &o.trans, &o.ld)) {
    o.t = x;
    return o;
  }
  o.t = empty_contiguous(x.sizes, as);
  copy_elements(o.t, x);
  o.trans = false;
  o.ld = std::max<int64_t>(x.sizes[1], 1);
  return o;
}

template <typename T>
void run(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta, int32_t as) {
  const int64_t m = a.sizes[0], k = a.sizes[1], n = b.sizes[1];
  Operand pa = prepare(a, as), pb = prepare(b, as);
  bool ct = false;
  int64_t ldc = 1;
  const bool direct = c.dtype == as && blas_view(m, n, c.strides[0], c.strides[1], &ct, &ldc);
  Tensor out = c;
  if (!direct) {
    out = empty_contiguous(c.sizes, as);
    if (beta != 0.0) copy_elements(out, c);
    ldc = std::max<int64_t>(n, 1);
    ct = false;
  }
  const T* ap = static_cast<const T*>(pa.t.data());
  const T* bp = static_cast<const T*>(pb.t.data());
  T* cp = static_cast<T*>(out.data());
  if (!ct) {
    blas_gemm(pa.trans, pb.trans, m, n, k, static_cast<T>(alpha), ap, pa.ld, bp, pb.ld, static_cast<T>(beta), cp, ldc);
  } else {  // c is column-major: compute c^T = b^T a^T in row-major terms
    blas_gemm(!pb.trans, !pa.trans, n, m, k, static_cast<T>(alpha), bp, pb.ld, ap, pa.ld, static_cast<T>(beta), cp,
              ldc);
  }
  if (!direct) copy_elements(c, out);
}

}  // namespace

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc) {
  const dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (st != dnnl_success) throw ShimError("oneDNN's sgemm failed with status " + std::to_string(static_cast<int>(st)));
}

void gemm(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta, const char* op) {
  expect_dim(a, 2, op, "mat1");
  expect_dim(b, 2, op, "mat2");
  expect_dim(c, 2, op, "out");
  if (a.sizes[1] != b.sizes[0]) {
    fail_arg(op, "mat2",
             "has " + std::to_string(b.sizes[0]) + " rows, mat1 has " + std::to_string(a.sizes[1]) + " columns");
  }
  if (c.sizes[0] != a.sizes[0] || c.sizes[1] != b.sizes[1]) {
    fail_arg(op, "out",
             "has shape [" + std::to_string(c.sizes[0]) + ", " + std::to_string(c.sizes[1]) + "], expected [" +
                 std::to_string(a.sizes[0]) + ", " + std::to_string(b.sizes[1]) + "]");
  }
  if (a.dtype != b.dtype || a.dtype != c.dtype) {
    fail_arg(op, "mat2",
             std::string("dtypes differ: mat1 ") + dtype_name(a.dtype) + ", mat2 " + dtype_name(b.dtype) + ", out " +
                 dtype_name(c.dtype));
  }
  const int64_t m = a.sizes[0], k = a.sizes[1], n = b.sizes[1];
  if (m == 0 || n == 0) return;
  if (std::max({m, n, k}) > 0x7fffffff) fail_arg(op, "mat1", "is too large for BLAS (dims beyond 2^31)");
  if (k == 0) {  // no products: c = beta * c
    Tensor zero = empty_contiguous({}, kFloat64);
    *static_cast<double*>(zero.data()) = 0.0;
    if (beta == 0.0) {
      copy_elements(c, zero);
    } else if (beta != 1.0) {
      Tensor tmp = empty_contiguous(c.sizes, kFloat64);
      copy_elements(tmp, c);
      double* p = static_cast<double*>(tmp.data());
      for (int64_t i = 0; i < m * n; ++i) p[i] *= beta;
      copy_elements(c, tmp);
    }
    return;
  }
  // mat2 a weight nothing writes (a declared or frozen constant): its packed
  // copy, made on the first call, serves every call (packed_gemm.hpp).
  if (a.dtype == kFloat32 && alpha == 1.0 && b.storage != nullptr && b.storage->read_only()) {
    Tensor w = b;  // mat2 [K, N] seen as the weight [N, K] it transposes
    std::swap(w.sizes[0], w.sizes[1]);
    std::swap(w.strides[0], w.strides[1]);
    if (packed_linear(c, a, w, static_cast<float>(beta), op)) return;
  }
  switch (a.dtype) {
    case kFloat32: run<float>(c, a, b, alpha, beta, kFloat32); break;
    case kFloat64: run<double>(c, a, b, alpha, beta, kFloat64); break;
    case kBFloat16:
    case kFloat16: run<float>(c, a, b, alpha, beta, kFloat32); break;  // float32 accumulation, one rounding
    default: fail_arg(op, "mat1", std::string("has dtype ") + dtype_name(a.dtype) + ", which is not supported");
  }
}

}  // namespace aotrun::shim::kernels
