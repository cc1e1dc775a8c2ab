// aoti_torch_cpu_mm_out: out = self @ mat2.
#include "../error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {

void mm(const Tensor& out, const Tensor& self, const Tensor& mat2) {
  gemm(out, self, mat2, 1.0, 0.0, "aoti_torch_cpu_mm_out");
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  using namespace aotrun::shim;
  return guard(__func__, [&] { kernels::mm(as_tensor(out, "out"), as_tensor(self, "self"), as_tensor(mat2, "mat2")); });
}
