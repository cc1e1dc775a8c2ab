// aoti_torch_cpu__weight_int8pack_mm: int8 weight-only linear,
// out[m, n] = scales[n] * Σ_k self[m, k] * mat2[n, k], with self [M, K]
// float32, bfloat16 or float16, mat2 [N, K] int8 and scales [N] of self's
// dtype. The weight is widened to float32 a block of rows at a time and the
// products run on sgemm (float32 accumulation, as libtorch's kernel); the
// scale is applied to each sum, and a 16-bit result is rounded once.
// libtorch's requirements are kept: self 2-d with unit-stride rows, mat2
// contiguous, scales 1-d (and contiguous: see below).
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "compute/scratch.hpp"
#include "compute/team_split.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// Rows of the weight widened to float32 per block: about 1 MiB of float32,
// between 16 and 128 rows. sgemm packs its other operand again for every
// block: m*k copies against 2*m*k*rows flops, negligible at 16 rows or more.
int64_t block_rows(int64_t k) { return std::clamp<int64_t>((int64_t{1} << 18) / k / 16 * 16, 16, 128); }

// c[m, n] = x[m, k] * w[n, k]^T over int8 w, one block of weight rows at a
// time: widened into this thread's buffer, then one sgemm for the block's
// columns of c. The blocks are split over the calling thread's OpenMP team
// when there is enough work (each sgemm then runs single-threaded inside the
// region). The whole weight is never widened at once: a 4096 x 4096 weight
// would be 64 MiB of float32 on every call. Errors cannot leave the region:
// the first is kept and thrown after it.
//
// With few rows of x (a decoder's step) a block is x * tile^T, which oneDNN
// runs as a GEMV. With more, it is computed transposed, tile * x^T into this
// thread's [rows, m] buffer, with x^T made once per call: oneDNN's sgemm
// runs a long K two to three times faster on that side (measured on Zen 4,
// K = 4096: at m = 16, 37 against 84 GFLOPS; at m = 8, 50 against 39).
void products(const float* x, const int8_t* w, int64_t m, int64_t n, int64_t k, float* c) {
  const int64_t rows = block_rows(k), blocks = (n + rows - 1) / rows;
  const bool parallel = blocks > 1 && m * n * k >= (int64_t{1} << 18);
  const bool transposed = m > 8;
  thread_local Scratch xt_buf;  // the caller's; the team reads it
  float* const xt = transposed ? xt_buf.floats(k * m) : nullptr;
  if (transposed) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) xt[p * m + i] = x[i * k + p];
  }
  std::string failure;
  for_range(parallel, blocks, [&](int64_t b) {
    try {
      const int64_t n0 = b * rows, nb = std::min(rows, n - n0);
      thread_local Scratch tile, block;  // each worker's own
      float* t = tile.floats(nb * k);
      const int8_t* src = w + n0 * k;
      const int64_t count = nb * k;
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) t[i] = static_cast<float>(src[i]);
      if (!transposed) {
        sgemm(false, true, m, nb, k, 1.0f, x, k, t, k, 0.0f, c + n0, n);
      } else {
        float* const bl = block.floats(nb * m);
        sgemm(false, false, nb, m, k, 1.0f, t, k, xt, m, 0.0f, bl, m);
        for (int64_t j = 0; j < nb; ++j)
          for (int64_t i = 0; i < m; ++i) c[i * n + n0 + j] = bl[j * m + i];
      }
    } catch (const std::exception& e) {
#pragma omp critical(aotrun_shim_int8pack_failure)
      if (failure.empty()) failure = e.what();
    }
  });
  if (!failure.empty()) throw ShimError(failure);
}

}  // namespace

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
    Tensor x = empty_contiguous({m, k}, kFloat32);
    copy_elements(x, self);
    products(static_cast<const float*>(x.data()), static_cast<const int8_t*>(mat2.data()), m, n, k, c);
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
