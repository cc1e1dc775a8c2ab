// Float64 GEMM on OpenBLAS's cblas_dgemm (openblas.hpp: loaded when first
// used).
#include <cblas.h>

#include "kernels/kernels.hpp"
#include "openblas.hpp"

namespace aotrun::shim::kernels {

void dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  const auto fn =
      reinterpret_cast<decltype(&cblas_dgemm)>(openblas_symbol("cblas_dgemm", "float64 matrix multiplication"));
  fn(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
     static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
     static_cast<int>(ldc));
}

}  // namespace aotrun::shim::kernels
