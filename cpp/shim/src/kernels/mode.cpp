// aoti_torch_cpu_mode (since aotrun-shim 1.8): the most frequent value along
// dim and an int64 index of it, as libtorch 2.15's CPU kernel
// (mode_kernel_impl) gives them: each line's (value, index) pairs are
// sorted by value with std::sort (not stable), runs of equal values counted
// in that order, and the first longest run wins (so the smallest of equally
// frequent values); its index is that of the pair ending the run, which is
// where libtorch's std::sort leaves it, reproduced by making the same sort.
// NaN equals nothing: each NaN is a run of one. Every real dtype and bool;
// complex and the unsigned 16-64-bit dtypes are refused, as libtorch's
// dispatch refuses them. A 0-d self is its own mode (index 0); a dim of
// size 0 is refused (the result would have no identity); results are
// contiguous with dim kept as size 1, then squeezed unless keepdim.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

template <typename S>
void mode_lines(const Tensor& self, int64_t d, const std::vector<int64_t>& kept_strides, Tensor& values,
                Tensor& indices) {
  using K = typename Elem<S>::Key;
  const int64_t nd = self.dim();
  const int64_t len = nd > 0 ? self.sizes[d] : 1;
  const int64_t step = nd > 0 ? self.strides[d] : 0;
  std::vector<std::pair<K, int64_t>> line(static_cast<size_t>(len));
  auto* idx_out = static_cast<int64_t*>(indices.data());
  for_each_index(self.sizes, nd > 0 ? d : -1, [&](const std::vector<int64_t>& pos) {
    const int64_t base = nd > 0 ? offset_of(pos, self.strides) : 0;
    for (int64_t i = 0; i < len; ++i) line[i] = {load_key<S>(self.data(), base + i * step), i};
    std::sort(line.begin(), line.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    K best{};
    int64_t best_at = 0, run = 0, best_run = 0;
    for (int64_t i = 0; i < len; ++i) {
      ++run;
      if (i == len - 1 || line[i].first != line[i + 1].first) {
        if (run > best_run) {
          best = line[i].first;
          best_at = line[i].second;
          best_run = run;
        }
        run = 0;
      }
    }
    const int64_t out = nd > 0 ? offset_of(pos, kept_strides) : 0;
    store<S>(values.data(), out, Elem<S>::from(best));
    idx_out[out] = best_at;
  });
}

}  // namespace

void mode(const Tensor& self, int64_t dim, bool keepdim, Tensor* values, Tensor* indices, const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd, op);
  if (nd > 0 && self.sizes[d] == 0) {
    fail_arg(op, "self", "has size 0 along dim " + std::to_string(d) + " (mode has no identity)");
  }
  std::vector<int64_t> kept = self.sizes;
  if (nd > 0) kept[d] = 1;
  const std::vector<int64_t> kept_strides = contiguous_strides(kept);
  std::vector<int64_t> out_sizes = kept, out_strides = kept_strides;
  if (!keepdim && nd > 0) {
    out_sizes.erase(out_sizes.begin() + d);
    out_strides.erase(out_strides.begin() + d);
  }
  dispatch_real(self.dtype, true, op, "self", [&](auto tag) {
    using S = decltype(tag);
    *values = empty_tensor(out_sizes, out_strides, self.dtype);
    *indices = empty_tensor(out_sizes, out_strides, kInt64);
    if (values->numel() > 0) mode_lines<S>(self, d, kept_strides, *values, *indices);
  });
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim,
                                              AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out0 = out_arg(ret0, "ret0");
    AtenTensorHandle* out1 = out_arg(ret1, "ret1");
    Tensor values, indices;
    kernels::mode(s, dim, keepdim != 0, &values, &indices, "aoti_torch_cpu_mode");
    *out0 = new_handle(std::move(values));
    *out1 = new_handle(std::move(indices));
  });
}
