// aoti_torch_cpu_addmm_out: out = beta * self + alpha * (mat1 @ mat2).
#include <string>
#include <utility>

#include "compute/packed_gemm.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

void addmm(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2, double beta, double alpha) {
  const char* op = "aoti_torch_cpu_addmm_out";
  expect_cpu_defined(self, op, "self");
  if (self.dim() > 2) fail_arg(op, "self", "must be 1-d or 2-d, got " + std::to_string(self.dim()) + "-d");
  if (self.dtype != out.dtype) fail_arg(op, "self", "must have out's dtype");
  expect_dim(out, 2, op, "out");
  expect_dim(mat1, 2, op, "mat1");
  expect_dim(mat2, 2, op, "mat2");
  resize_output(out, {mat1.sizes[0], mat2.sizes[1]}, op);
  // A linear layer with a constant weight (Inductor's addmm of a bias row):
  // the bias goes into the packed GEMM's accumulators, not through out
  // first (packed_gemm.hpp). Declines, having done nothing, otherwise.
  if (beta == 1.0 && alpha == 1.0 && self.dim() == 1 && self.storage != out.storage && mat2.dim() == 2) {
    Tensor w = mat2;  // mat2 [K, N] seen as the weight [N, K] it transposes
    std::swap(w.sizes[0], w.sizes[1]);
    std::swap(w.strides[0], w.strides[1]);
    if (packed_linear(out, mat1, w, 0.0f, op, &self)) return;
  }
  if (beta != 0.0) {
    // Broadcast self into out, then accumulate the product on top. When self
    // and out are the same view this is a no-op copy.
    copy_elements(out, self);
  }
  gemm(out, mat1, mat2, alpha, beta, op);
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                                   AtenTensorHandle mat2, double beta, double alpha) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    kernels::addmm(as_tensor(out, "out"), as_tensor(self, "self"), as_tensor(mat1, "mat1"), as_tensor(mat2, "mat2"),
                   beta, alpha);
  });
}
