// aoti_torch_cpu_bmm_out: out[i] = self[i] @ mat2[i] for each batch i.
#include <string>

#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {
// The 2-d view of batch `i` of a 3-d tensor.
Tensor batch(const Tensor& t, int64_t i) {
  Tensor v = t;
  v.sizes = {t.sizes[1], t.sizes[2]};
  v.strides = {t.strides[1], t.strides[2]};
  v.storage_offset = t.storage_offset + i * t.strides[0];
  return v;
}
}  // namespace

void bmm(Tensor& out, const Tensor& self, const Tensor& mat2) {
  const char* op = "aoti_torch_cpu_bmm_out";
  expect_dim(self, 3, op, "self");
  expect_dim(mat2, 3, op, "mat2");
  expect_dim(out, 3, op, "out");
  resize_output(out, {self.sizes[0], self.sizes[1], mat2.sizes[2]}, op);
  const int64_t b = self.sizes[0];
  if (mat2.sizes[0] != b || out.sizes[0] != b) {
    fail_arg(op, "mat2",
             "batch sizes differ: self " + std::to_string(b) + ", mat2 " + std::to_string(mat2.sizes[0]) + ", out " +
                 std::to_string(out.sizes[0]));
  }
  for (int64_t i = 0; i < b; ++i) gemm(batch(out, i), batch(self, i), batch(mat2, i), 1.0, 0.0, op);
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  using namespace aotrun::shim;
  return guard(__func__,
               [&] { kernels::bmm(as_tensor(out, "out"), as_tensor(self, "self"), as_tensor(mat2, "mat2")); });
}
