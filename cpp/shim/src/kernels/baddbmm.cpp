// aoti_torch_cpu_baddbmm_out: out[i] = beta * self[i] + alpha * (batch1[i] @
// batch2[i]), self broadcast to [b, n, p] (beta == 0: self is not read, so
// its NaN and inf do not reach out, as in libtorch). One GEMM per batch
// (gemm.cpp: float32, float64; bfloat16 and float16 through float32).
#include <string>

#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {
// The 2-d view of batch `i` of a 3-d tensor.
Tensor batch_of(const Tensor& t, int64_t i) {
  Tensor v = t;
  v.sizes = {t.sizes[1], t.sizes[2]};
  v.strides = {t.strides[1], t.strides[2]};
  v.storage_offset = t.storage_offset + i * t.strides[0];
  return v;
}
}  // namespace

void baddbmm(Tensor& out, const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta, double alpha) {
  const char* op = "aoti_torch_cpu_baddbmm_out";
  expect_cpu_defined(out, op, "out");
  expect_cpu_defined(self, op, "self");
  expect_dim(batch1, 3, op, "batch1");
  expect_dim(batch2, 3, op, "batch2");
  if (self.dim() > 3) fail_arg(op, "self", "must have at most 3 dims, got " + std::to_string(self.dim()));
  if (self.dtype != out.dtype) fail_arg(op, "self", "must have out's dtype");
  const int64_t b = batch1.sizes[0];
  if (batch2.sizes[0] != b) {
    fail_arg(op, "batch2", "has " + std::to_string(batch2.sizes[0]) + " batches, 'batch1' has " + std::to_string(b));
  }
  if (batch2.sizes[1] != batch1.sizes[2]) {
    fail_arg(op, "batch2",
             "has " + std::to_string(batch2.sizes[1]) + " rows, 'batch1' has " + std::to_string(batch1.sizes[2]) +
                 " columns");
  }
  resize_output(out, {b, batch1.sizes[1], batch2.sizes[2]}, op);
  // Broadcast self into out first (checks the shapes); the products are
  // then accumulated on top with beta.
  if (beta != 0.0) copy_elements(out, self);
  for (int64_t i = 0; i < b; ++i) {
    gemm(batch_of(out, i), batch_of(batch1, i), batch_of(batch2, i), alpha, beta, op);
  }
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                                     AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
                                                     double alpha) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    kernels::baddbmm(as_tensor(out, "out"), as_tensor(self, "self"), as_tensor(batch1, "batch1"),
                     as_tensor(batch2, "batch2"), beta, alpha);
  });
}
