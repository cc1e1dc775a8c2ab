// aten::median.dim (torch.median(x, dim, keepdim) -> values, indices) and,
// since aotrun-shim 1.8, its twin aten::nanmedian.dim, which have no C shim
// function in torch 2.15: AOTInductor calls them through the proxy
// executor, dim in flatten_int_args and keepdim in the node. As libtorch's
// CPU kernel (median_with_indices_impl), each line in order partitioned by
// std::nth_element over (value, index):
//  - median.dim: a line holding a NaN gives that NaN and the index of its
//    first NaN; otherwise the element of rank (size - 1) / 2 (the lower
//    median for even sizes) when the line is ordered by (value, index), so
//    that among equal values (-0.0 == 0.0 included) the same index as
//    libtorch's comes out.
//  - nanmedian.dim: NaN ignored: the element of rank (size - nans - 1) / 2
//    among the numbers, ordered the same way with every NaN after them; a
//    line of NaN only gives NaN and the index libtorch's std::nth_element
//    leaves at the front (the same call, so the same index).
// Floating (bfloat16 and float16 compared as float) and integer dtypes;
// bool, complex and the unsigned 16-64-bit dtypes are refused, as
// libtorch's dispatch refuses them. Results are contiguous, dim kept as
// size 1 when keepdim; a reduced dim of size 0 is refused.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "error.hpp"
#include "kernels/kernels.hpp"
#include "compute/typed.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

template <typename S>
void median_lines(const Tensor& self, int64_t d, bool ignore_nan, Tensor& values, Tensor& indices) {
  using kernels::Elem;
  using K = typename Elem<S>::Key;
  const int64_t nd = self.dim();
  const int64_t len = nd > 0 ? self.sizes[d] : 1;
  const int64_t step = nd > 0 ? self.strides[d] : 0;
  // Results viewed with dim d kept (size 1), so one position walks both.
  std::vector<int64_t> kept = self.sizes;
  if (nd > 0) kept[d] = 1;
  const std::vector<int64_t> kept_strides = contiguous_strides(kept);
  std::vector<K> line(static_cast<size_t>(len));
  std::vector<int64_t> order(static_cast<size_t>(len));
  auto* idx_out = static_cast<int64_t*>(indices.data());
  kernels::for_each_index(self.sizes, nd > 0 ? d : -1, [&](const std::vector<int64_t>& pos) {
    const int64_t base = kernels::offset_of(pos, self.strides);
    const int64_t out = kernels::offset_of(pos, kept_strides);
    int64_t nan_at = -1, nans = 0;
    for (int64_t i = 0; i < len; ++i) {
      line[i] = kernels::load_key<S>(self.data(), base + i * step);
      if (kernels::is_nan(line[i])) {
        if (nan_at < 0) nan_at = i;
        ++nans;
      }
    }
    int64_t pick = ignore_nan ? -1 : nan_at;
    if (pick < 0) {
      std::iota(order.begin(), order.end(), 0);
      if (ignore_nan) {
        const auto nth = order.begin() + (len - nans - 1) / 2;
        std::nth_element(order.begin(), nth, order.end(), [&](int64_t a, int64_t b) {
          return line[a] < line[b] || (line[a] == line[b] && a < b) ||
                 (kernels::is_nan(line[b]) && !kernels::is_nan(line[a]));
        });
        pick = *nth;
      } else {
        const auto nth = order.begin() + (len - 1) / 2;
        std::nth_element(order.begin(), nth, order.end(),
                         [&](int64_t a, int64_t b) { return line[a] < line[b] || (line[a] == line[b] && a < b); });
        pick = *nth;
      }
    }
    kernels::store<S>(values.data(), out, kernels::load<S>(self.data(), base + pick * step));
    idx_out[out] = pick;
  });
}

void median_or_nanmedian(const ExternCall& c, bool ignore_nan) {
  const std::string& op = c.node.target;
  if (c.inputs.size() != 1) throw ShimError(op + ": expected one tensor input (self)");
  if (c.outputs.size() != 2) throw ShimError(op + ": expected 2 outputs (values, indices)");
  const ExternArg* dim_arg = c.node.input("dim");
  if (dim_arg == nullptr || dim_arg->kind != ExternArg::kInt || c.ints.size() != 1) {
    throw ShimError(op + ": argument 'dim' must be one int");
  }
  const ExternArg* keep_arg = c.node.input("keepdim");
  const bool keepdim = keep_arg != nullptr && keep_arg->kind == ExternArg::kBool && keep_arg->b;
  const Tensor& self = *c.inputs[0];
  kernels::expect_cpu_defined(self, op.c_str(), "self");
  const int64_t d = kernels::wrap_dim(c.ints[0], self.dim(), op.c_str(), "dim");
  if (self.dim() > 0 && self.sizes[d] == 0) {
    kernels::fail_arg(op.c_str(), "self",
                      "median() Expected reduction dim " + std::to_string(d) + " to have non-zero size.");
  }
  std::vector<int64_t> out_sizes = self.sizes;
  if (self.dim() > 0) {
    if (keepdim) {
      out_sizes[d] = 1;
    } else {
      out_sizes.erase(out_sizes.begin() + d);
    }
  }
  kernels::dispatch_real(self.dtype, false, op.c_str(), "self", [&](auto s) {
    Tensor values = empty_contiguous(out_sizes, self.dtype);
    Tensor indices = empty_contiguous(out_sizes, kInt64);
    if (values.numel() > 0) median_lines<decltype(s)>(self, d, ignore_nan, values, indices);
    set_output(c, 0, values);
    set_output(c, 1, indices);
  });
}

}  // namespace

void median_dim(const ExternCall& c) { median_or_nanmedian(c, false); }
void nanmedian_dim(const ExternCall& c) { median_or_nanmedian(c, true); }

}  // namespace aotrun::shim::proxy
