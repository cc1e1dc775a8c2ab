// aoti_torch_cpu_mm_out: out = self @ mat2.
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

void mm(Tensor& out, const Tensor& self, const Tensor& mat2) {
  const char* op = "aoti_torch_cpu_mm_out";
  expect_dim(self, 2, op, "self");
  expect_dim(mat2, 2, op, "mat2");
  expect_dim(out, 2, op, "out");
  resize_output(out, {self.sizes[0], mat2.sizes[1]}, op);
  gemm(out, self, mat2, 1.0, 0.0, op);
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  using namespace aotrun::shim;
  return guard(__func__, [&] { kernels::mm(as_tensor(out, "out"), as_tensor(self, "self"), as_tensor(mat2, "mat2")); });
}
