// aten::_unique2 (torch.unique without dim), which AOTInductor leaves to the
// proxy executor: its output sizes are known only after the run. As
// libtorch's CPU kernel: the unique values sorted ascending whatever
// `sorted` says, each NaN its own value, after every number, in the order
// the NaNs appear; inverse_indices (self's shape) and counts are int64 and
// empty ([0]) unless asked for. Every real dtype and bool.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "error.hpp"
#include "compute/typed.hpp"
#include "proxy/extern_ops.hpp"

namespace aotrun::shim::proxy {
namespace {

bool flag(const ExternNode& n, const char* name, bool fallback) {
  const ExternArg* a = n.input(name);
  return a != nullptr && a->kind == ExternArg::kBool ? a->b : fallback;
}

template <typename S>
void unique_of(const ExternCall& c, const Tensor& self, bool want_inverse, bool want_counts) {
  using kernels::Elem;
  using Key = typename Elem<S>::Key;
  // Self's elements in row-major order.
  Tensor view = self;
  if (!self.is_contiguous()) {
    Tensor dense = empty_contiguous(self.sizes, self.dtype);
    copy_host_elements(dense, self);
    view = dense;
  }
  const int64_t n = self.numel();
  std::vector<Key> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = kernels::load_key<S>(view.data(), i);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // NaN after every number; NaNs keep their order (stable).
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const bool na = kernels::is_nan(keys[a]), nb = kernels::is_nan(keys[b]);
    if (na || nb) return !na && nb;
    return keys[a] < keys[b];
  });
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = order[k];
    if (first.empty() || !(keys[first.back()] == keys[i])) {  // NaN != NaN: a new value
      first.push_back(i);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[i] = static_cast<int64_t>(first.size()) - 1;
  }
  const int64_t u = static_cast<int64_t>(first.size());
  Tensor out = empty_contiguous({u}, self.dtype);
  for (int64_t k = 0; k < u; ++k) kernels::store<S>(out.data(), k, kernels::load<S>(view.data(), first[k]));
  Tensor inv = empty_contiguous(want_inverse ? self.sizes : std::vector<int64_t>{0}, kInt64);
  if (want_inverse) std::copy(inverse.begin(), inverse.end(), static_cast<int64_t*>(inv.data()));
  Tensor cnt = empty_contiguous({want_counts ? u : 0}, kInt64);
  if (want_counts) std::copy(counts.begin(), counts.end(), static_cast<int64_t*>(cnt.data()));
  set_output(c, 0, out);
  set_output(c, 1, inv);
  set_output(c, 2, cnt);
}

}  // namespace

void unique2(const ExternCall& c) {
  if (c.inputs.empty()) throw ShimError(c.node.target + ": argument 'self' was not passed");
  if (c.outputs.size() != 3) throw ShimError(c.node.target + ": expected 3 outputs (output, inverse_indices, counts)");
  const Tensor& self = *c.inputs[0];
  if (self.device_type != kCPU) throw ShimError(c.node.target + ": argument 'self' is not a CPU tensor");
  const bool inverse = flag(c.node, "return_inverse", false), counts = flag(c.node, "return_counts", false);
  kernels::dispatch_real(self.dtype, true, c.node.target.c_str(), "self",
                         [&](auto s) { unique_of<decltype(s)>(c, self, inverse, counts); });
}

}  // namespace aotrun::shim::proxy
