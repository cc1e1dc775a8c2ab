// aoti_torch_cpu_sort_stable and aoti_torch_cpu_topk: values and int64
// indices along one dim, NaN ordered above every number (as PyTorch and
// NumPy). Each line is ordered as (key, index) pairs with the same standard
// algorithms and comparisons PyTorch's CPU kernels use (stable_sort, or sort
// when not stable; topk: partial_sort for small k, else nth_element and a
// sort of the first k - 1), so that ties come out in libtorch's order, which
// the differential suite checks.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {

std::vector<int64_t> dense_strides_like(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  // perm: innermost dim first; starts as the row-major order.
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  // >0: a belongs after b (further out); <0: before; 0: no opinion.
  auto order = [&](int64_t a, int64_t b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] < strides[b] ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t cur = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      const int c = order(perm[j], perm[cur]);
      if (c > 0) {
        std::swap(perm[j], perm[cur]);
        cur = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  std::vector<int64_t> out(nd);
  int64_t acc = 1;
  for (int64_t i = 0; i < nd; ++i) {
    out[perm[i]] = acc;
    if (sizes[perm[i]] > 1) acc *= sizes[perm[i]];
  }
  return out;
}

namespace {

// The length from which libtorch's CPU sort takes its radix sort for 1-d
// integer tensors (its parallel grain size).
constexpr int64_t kRadixSortMinLength = 32768;

template <typename K>
using Pair = std::pair<K, int64_t>;

// NaN above everything: ascending puts it last, descending first.
template <typename K>
bool before_ascending(const Pair<K>& x, const Pair<K>& y) {
  return (!is_nan(x.first) && is_nan(y.first)) || (x.first < y.first);
}
template <typename K>
bool before_descending(const Pair<K>& x, const Pair<K>& y) {
  return (is_nan(x.first) && !is_nan(y.first)) || (x.first > y.first);
}

// The values and indices of one line: elements chosen by `pairs[j].second`.
template <typename S>
void write_line(const std::vector<Pair<typename Elem<S>::Key>>& pairs, int64_t count, const void* in, int64_t in_off,
                int64_t in_stride, void* values, int64_t v_off, void* indices, int64_t i_off, int64_t out_stride,
                int64_t i_stride) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t src = pairs[j].second;
    store<S>(values, v_off + j * out_stride, load<S>(in, in_off + src * in_stride));
    store<int64_t>(indices, i_off + j * i_stride, src);
  }
}

}  // namespace

void sort(const Tensor& self, bool stable, int64_t dim, bool descending, Tensor* values, Tensor* indices,
          const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd, op);
  // Results laid out like self when it is dense, else densely in its order.
  const std::vector<int64_t> strides =
      self.is_non_overlapping_and_dense() ? self.strides : dense_strides_like(self.sizes, self.strides);
  dispatch_real(self.dtype, true, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    *values = empty_tensor(self.sizes, strides, self.dtype);
    *indices = empty_tensor(self.sizes, strides, kInt64);
    if (self.numel() == 0) return;
    const int64_t len = nd > 0 ? self.sizes[d] : 1;
    const int64_t in_stride = nd > 0 ? self.strides[d] : 0;
    const int64_t out_stride = nd > 0 ? strides[d] : 0;
    const void* in = self.data();
    void* vbase = values->data();
    void* ibase = indices->data();
    // libtorch sorts a long 1-d integer tensor ascending with a radix sort,
    // which is stable whatever `stable` says.
    constexpr bool integral = std::is_integral_v<K> && !std::is_same_v<K, bool>;
    const bool radix = integral && nd == 1 && !descending && len >= kRadixSortMinLength;
    std::vector<Pair<K>> pairs(static_cast<size_t>(len));
    for_each_index(self.sizes, d, [&](const std::vector<int64_t>& idx) {
      const int64_t in_off = offset_of(idx, self.strides), out_off = offset_of(idx, strides);
      for (int64_t j = 0; j < len; ++j) pairs[j] = {load_key<S>(in, in_off + j * in_stride), j};
      // A broadcast line (stride 0) holds one value: indices stay in order, as in libtorch.
      if (in_stride != 0) {
        auto cmp = descending ? before_descending<K> : before_ascending<K>;
        if (stable || radix) {
          std::stable_sort(pairs.begin(), pairs.end(), cmp);
        } else {
          std::sort(pairs.begin(), pairs.end(), cmp);
        }
      }
      write_line<S>(pairs, len, in, in_off, in_stride, vbase, out_off, ibase, out_off, out_stride, out_stride);
    });
  });
}

void topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted, Tensor* values, Tensor* indices,
          const char* op) {
  expect_cpu_defined(self, op, "self");
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd, op);
  const int64_t len = nd > 0 ? self.sizes[d] : 1;
  if (k < 0 || k > len) {
    fail_arg(op, "k", std::to_string(k) + " is out of range for a dim of size " + std::to_string(len));
  }
  std::vector<int64_t> out_sizes = self.sizes;
  if (nd > 0) out_sizes[d] = k;
  const std::vector<int64_t> out_strides = contiguous_strides(out_sizes);
  dispatch_real(self.dtype, false, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    *values = empty_tensor(out_sizes, out_strides, self.dtype);
    *indices = empty_tensor(out_sizes, out_strides, kInt64);
    if (values->numel() == 0) return;
    if (k == 0) {  // only a 0-d self: one element nobody writes; libtorch's reads 0
      std::memset(values->data(), 0, values->itemsize());
      std::memset(indices->data(), 0, indices->itemsize());
      return;
    }
    const int64_t in_stride = nd > 0 ? self.strides[d] : 0;
    const int64_t out_stride = nd > 0 ? out_strides[d] : 0;
    const void* in = self.data();
    void* vbase = values->data();
    void* ibase = indices->data();
    auto cmp = largest ? before_descending<K> : before_ascending<K>;
    std::vector<Pair<K>> q(static_cast<size_t>(len));
    for_each_index(self.sizes, d, [&](const std::vector<int64_t>& idx) {
      const int64_t in_off = offset_of(idx, self.strides), out_off = offset_of(idx, out_strides);
      for (int64_t j = 0; j < len; ++j) q[j] = {load_key<S>(in, in_off + j * in_stride), j};
      if (k * 64 <= len) {
        std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
      } else {
        std::nth_element(q.begin(), q.begin() + k - 1, q.end(), cmp);
        if (sorted) std::sort(q.begin(), q.begin() + k - 1, cmp);
      }
      write_line<S>(q, k, in, in_off, in_stride, vbase, out_off, ibase, out_off, out_stride, out_stride);
    });
  });
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim,
                                                     int32_t descending, AtenTensorHandle* ret0,
                                                     AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out0 = out_arg(ret0, "ret0");
    AtenTensorHandle* out1 = out_arg(ret1, "ret1");
    Tensor values, indices;
    kernels::sort(s, stable != nullptr && *stable != 0, dim, descending != 0, &values, &indices,
                  "aoti_torch_cpu_sort_stable");
    *out0 = new_handle(std::move(values));
    *out1 = new_handle(std::move(indices));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
                                              int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(self, "self");
    AtenTensorHandle* out0 = out_arg(ret0, "ret0");
    AtenTensorHandle* out1 = out_arg(ret1, "ret1");
    Tensor values, indices;
    kernels::topk(s, k, dim, largest != 0, sorted != 0, &values, &indices, "aoti_torch_cpu_topk");
    *out0 = new_handle(std::move(values));
    *out1 = new_handle(std::move(indices));
  });
}
