// aoti_torch_cpu__weight_int8pack_mm: int8 weight-only linear,
// out[m, n] = scales[n] * Σ_k self[m, k] * mat2[n, k], with self [M, K]
// float32, bfloat16 or float16, mat2 [N, K] int8 and scales [N] of self's
// dtype. The weight is widened to float32 once per call and the products run
// on sgemm (float32 accumulation, as libtorch's kernel); the scale is applied
// to each sum, and a 16-bit result is rounded once. libtorch's requirements
// are kept: self 2-d with unit-stride rows, mat2 contiguous, scales 1-d
// (and contiguous: see below).
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

Tensor weight_int8pack_mm(const Tensor& self, const Tensor& mat2, const Tensor& scales, const char* op) {
  expect_cpu_defined(self, op, "self");
  expect_cpu_defined(mat2, op, "mat2");
  expect_cpu_defined(scales, op, "scales");
  const int32_t dt = self.dtype;
  if (dt != kFloat32 && dt != kBFloat16 && dt != kFloat16) {
    fail_arg(op, "self", std::string("has dtype ") + dtype_name(dt) + "; expected float32, bfloat16 or float16");
  }
  expect_dim(self, 2, op, "self");
  expect_dim(mat2, 2, op, "mat2");
  expect_dim(scales, 1, op, "scales");
  if (mat2.dtype != kInt8) fail_arg(op, "mat2", std::string("has dtype ") + dtype_name(mat2.dtype) + "; expected int8");
  if (scales.dtype != dt) {
    fail_arg(op, "scales", std::string("has dtype ") + dtype_name(scales.dtype) + ", 'self' has " + dtype_name(dt));
  }
  const int64_t m = self.sizes[0], k = self.sizes[1], n = mat2.sizes[0];
  if (self.strides[1] != 1) fail_arg(op, "self", "must be contiguous in its last dim");
  if (!mat2.is_contiguous()) fail_arg(op, "mat2", "must be contiguous");
  if (mat2.sizes[1] != k) {
    fail_arg(op, "mat2", "has " + std::to_string(mat2.sizes[1]) + " columns, 'self' has " + std::to_string(k));
  }
  // libtorch reads scales as if contiguous whatever their stride (its
  // results are wrong for strided scales): refused rather than differ.
  if (scales.strides[0] != 1 && n > 1) fail_arg(op, "scales", "must be contiguous");
  if (scales.sizes[0] != n) {
    fail_arg(op, "scales", "has " + std::to_string(scales.sizes[0]) + " elements, expected " + std::to_string(n));
  }
  Tensor out = empty_contiguous({m, n}, dt);
  if (m == 0 || n == 0) return out;
  Tensor acc = empty_contiguous({m, n}, kFloat32);
  float* c = static_cast<float*>(acc.data());
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = 0.0f;
  } else {
    Tensor x = empty_contiguous({m, k}, kFloat32), w = empty_contiguous({n, k}, kFloat32);
    copy_elements(x, self);
    copy_elements(w, mat2);
    blas_gemm(false, true, m, n, k, 1.0f, static_cast<const float*>(x.data()), k, static_cast<const float*>(w.data()),
              k, 0.0f, c, n);
  }
  Tensor s = empty_contiguous({n}, kFloat32);
  copy_elements(s, scales);
  const float* sp = static_cast<const float*>(s.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * n + j] *= sp[j];
  copy_elements(out, acc);
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                             AtenTensorHandle scales, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    const Tensor& w = as_tensor(mat2, "mat2");
    const Tensor& sc = as_tensor(scales, "scales");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::weight_int8pack_mm(s, w, sc, "aoti_torch_cpu__weight_int8pack_mm"));
  });
}
