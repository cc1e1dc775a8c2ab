// aoti_torch_cpu_kthvalue: the k-th smallest value (k from 1) along dim and
// its int64 index, NaN above every number. Each line is copied with its
// indices and partitioned by the same selection libtorch's CPU kernel runs
// (a median-of-three quickselect on (value, index) pairs, swapping both),
// so that among equal values the same index is returned. Results are laid
// out contiguously with dim kept as size 1, then squeezed unless keepdim.
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

// x above y, NaN above every number.
template <typename K>
bool above(K x, K y) {
  return (is_nan(x) && !is_nan(y)) || x > y;
}

// Rearranges v (and idx alongside) so that v[k] holds the value a full sort
// would put there: partitions around the median of the first, middle and
// last elements of the active range until the range around k is one or two
// elements.
template <typename K>
void quickselect(std::vector<K>& v, std::vector<int64_t>& idx, int64_t k) {
  auto swap_at = [&](int64_t a, int64_t b) {
    std::swap(v[a], v[b]);
    std::swap(idx[a], idx[b]);
  };
  int64_t lo = 0, hi = static_cast<int64_t>(v.size()) - 1;
  while (true) {
    if (hi <= lo) return;
    if (hi == lo + 1) {
      if (above(v[lo], v[hi])) swap_at(lo, hi);
      return;
    }
    const int64_t mid = lo + (hi - lo) / 2;
    swap_at(mid, lo + 1);
    if (above(v[lo + 1], v[hi])) swap_at(lo + 1, hi);
    if (above(v[lo], v[hi])) swap_at(lo, hi);
    if (above(v[lo + 1], v[lo])) swap_at(lo + 1, lo);
    // v[lo] is now the median of the three, v[lo + 1] <= it <= v[hi].
    int64_t i = lo + 1, j = hi;
    const K pivot = v[lo];
    while (true) {
      do {
        ++i;
      } while (above(pivot, v[i]));
      do {
        --j;
      } while (above(v[j], pivot));
      if (j < i) break;
      swap_at(i, j);
    }
    swap_at(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// Writes the k-th value and index of every line along d.
template <typename S>
void kth_lines(const Tensor& self, int64_t k, int64_t d, const std::vector<int64_t>& out_sizes,
               const std::vector<int64_t>& out_strides, const std::vector<int64_t>& kept_strides, Tensor* values,
               Tensor* indices) {
  using K = typename Elem<S>::Key;
  const int64_t nd = self.dim();
  const int64_t len = nd > 0 ? self.sizes[d] : 1;
  *values = empty_tensor(out_sizes, out_strides, self.dtype);
  *indices = empty_tensor(out_sizes, out_strides, kInt64);
  if (values->numel() == 0) return;
  const int64_t in_stride = nd > 0 ? self.strides[d] : 0;
  const void* in = self.data();
  void* vbase = values->data();
  void* ibase = indices->data();
  std::vector<K> line(static_cast<size_t>(len));
  std::vector<int64_t> idx(static_cast<size_t>(len));
  for_each_index(self.sizes, nd > 0 ? d : -1, [&](const std::vector<int64_t>& pos) {
    const int64_t in_off = offset_of(pos, self.strides);
    for (int64_t j = 0; j < len; ++j) {
      line[j] = load_key<S>(in, in_off + j * in_stride);
      idx[j] = j;
    }
    quickselect(line, idx, k - 1);
    const int64_t src = idx[k - 1];
    const int64_t out_off = offset_of(pos, kept_strides);
    store<S>(vbase, out_off, load<S>(in, in_off + src * in_stride));
    store<int64_t>(ibase, out_off, src);
  });
}

}  // namespace

void kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim, Tensor* values, Tensor* indices,
              const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd, op);
  const int64_t len = nd > 0 ? self.sizes[d] : 1;
  if (nd > 0 && len == 0) fail_arg(op, "self", "has size 0 along dim " + std::to_string(d));
  if (k < 1 || k > len) {
    fail_arg(op, "k", std::to_string(k) + " is out of range for a dim of size " + std::to_string(len));
  }
  std::vector<int64_t> kept = self.sizes;
  if (nd > 0) kept[d] = 1;
  const std::vector<int64_t> kept_strides = contiguous_strides(kept);
  std::vector<int64_t> out_sizes = kept, out_strides = kept_strides;
  if (!keepdim && nd > 0) {
    out_sizes.erase(out_sizes.begin() + d);
    out_strides.erase(out_strides.begin() + d);
  }
  dispatch_real(self.dtype, false, op, "self", [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, Bool8>) {  // bool is refused by dispatch_real above
      kth_lines<S>(self, k, d, out_sizes, out_strides, kept_strides, values, indices);
    }
  });
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim, int32_t keepdim,
                                                  AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out0 = out_arg(ret0, "ret0");
    AtenTensorHandle* out1 = out_arg(ret1, "ret1");
    Tensor values, indices;
    kernels::kthvalue(s, k, dim, keepdim != 0, &values, &indices, "aoti_torch_cpu_kthvalue");
    *out0 = new_handle(std::move(values));
    *out1 = new_handle(std::move(indices));
  });
}
