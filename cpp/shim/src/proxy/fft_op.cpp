// aten::_fft_c2r (torch.fft.irfft, irfftn, hfft, ...), which has no C shim
// function in torch 2.15: AOTInductor calls it through the proxy executor,
// its dim list, normalization and last_dim_size in flatten_int_args (in the
// node's order, the list as its elements). The transform is fft.cpp's.
#include <string>
#include <vector>

#include "error.hpp"
#include "kernels/fft.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {

void fft_c2r(const ExternCall& c) {
  const std::string& op = c.node.target;
  if (c.inputs.size() != 1) throw ShimError(op + ": expected one tensor input (self)");
  if (c.outputs.size() != 1) throw ShimError(op + ": expected one output");
  // The int arguments, by name, from the flattened values.
  std::vector<int64_t> dim;
  int64_t normalization = -1, last_dim_size = -1;
  bool has_dim = false, has_norm = false, has_size = false;
  size_t k = 0;
  for (const ExternArg& a : c.node.inputs) {
    if (a.kind == ExternArg::kInts) {
      if (k + a.ints.size() > c.ints.size()) throw ShimError(op + ": too few int arguments were passed");
      if (a.name == "dim") {
        dim.assign(c.ints.begin() + static_cast<std::ptrdiff_t>(k),
                   c.ints.begin() + static_cast<std::ptrdiff_t>(k + a.ints.size()));
        has_dim = true;
      }
      k += a.ints.size();
    } else if (a.kind == ExternArg::kInt) {
      if (k + 1 > c.ints.size()) throw ShimError(op + ": too few int arguments were passed");
      if (a.name == "normalization") normalization = c.ints[k], has_norm = true;
      if (a.name == "last_dim_size") last_dim_size = c.ints[k], has_size = true;
      ++k;
    }
  }
  if (!has_dim || !has_norm || !has_size) {
    throw ShimError(op + ": the node lacks one of the arguments dim, normalization, last_dim_size");
  }
  const Tensor& self = *c.inputs[0];
  set_output(
      c, 0,
      kernels::fft_c2r(self, dim.data(), static_cast<int64_t>(dim.size()), normalization, last_dim_size, op.c_str()));
}

}  // namespace aotrun::shim::proxy
