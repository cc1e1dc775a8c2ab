// aoti_torch_cpu_scatter_src_out, _scatter_value_out and
// _scatter_reduce_two_out: out = self, then for each position p of `index`,
// out[p with p[dim] = index[p]] is set to (or combined with) src[p] or a
// value. Reductions "sum", "prod", "mean", "amax", "amin" as PyTorch defines
// them: include_self=false first sets every targeted element to the
// reduction's identity; "mean" divides by the number of contributions (self
// counted when included; floor division for integers); amax/amin propagate
// NaN. Index positions are visited in row-major order, so duplicates along
// `dim` combine (or overwrite) in increasing position, as libtorch's kernel
// does; bfloat16 and float16 targets accumulate in float and are rounded
// once. Every index is checked before anything is written.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {

namespace {

// A 0-d tensor seen as one element of a 1-d one.
Tensor as_1d(const Tensor& t) {
  if (t.dim() != 0) return t;
  Tensor v = t;
  v.sizes = {1};
  v.strides = {1};
  return v;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage == b.storage && a.storage_offset == b.storage_offset && a.sizes == b.sizes &&
         a.strides == b.strides && a.dtype == b.dtype;
}

template <typename K>
K identity(ScatterReduce mode) {
  switch (mode) {
    case ScatterReduce::kProd: return K(1);
    case ScatterReduce::kAmax:
      if constexpr (std::numeric_limits<K>::has_infinity) return -std::numeric_limits<K>::infinity();
      return std::numeric_limits<K>::lowest();
    case ScatterReduce::kAmin:
      if constexpr (std::numeric_limits<K>::has_infinity) return std::numeric_limits<K>::infinity();
      return std::numeric_limits<K>::max();
    default: return K(0);
  }
}

template <typename K>
K combine(ScatterReduce mode, K acc, K v) {
  switch (mode) {
    case ScatterReduce::kSum:
    case ScatterReduce::kMean:
      if constexpr (std::is_integral_v<K> && !std::is_same_v<K, bool>) {
        return static_cast<K>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
      } else if constexpr (std::is_same_v<K, bool>) {
        return acc || v;
      } else {
        return acc + v;
      }
    case ScatterReduce::kProd:
      if constexpr (std::is_integral_v<K> && !std::is_same_v<K, bool>) {
        return static_cast<K>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
      } else if constexpr (std::is_same_v<K, bool>) {
        return acc && v;
      } else {
        return acc * v;
      }
    case ScatterReduce::kAmax:
      if (is_nan(v)) return v;
      return acc < v ? v : acc;  // std::max: keeps a NaN acc
    case ScatterReduce::kAmin:
      if (is_nan(v)) return v;
      return v < acc ? v : acc;  // std::min: keeps a NaN acc
    default: return v;           // assignment
  }
}

}  // namespace

void scatter(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, double value,
             ScatterReduce mode, bool include_self, const char* op) {
  expect_cpu_defined(out, op, "out");
  expect_cpu_defined(self, op, "self");
  expect_cpu_defined(index, op, "index");
  if (src != nullptr) expect_cpu_defined(*src, op, "src");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  if (index.dtype != kInt64 && index.dtype != kInt32) {
    fail_arg(op, "index", std::string("must be int64 or int32, got ") + dtype_name(index.dtype));
  }
  if (src != nullptr && src->dtype != self.dtype) {
    fail_arg(op, "src", std::string("has dtype ") + dtype_name(src->dtype) + ", 'self' has " + dtype_name(self.dtype));
  }
  if (out.dtype != self.dtype) {
    fail_arg(op, "out", std::string("has dtype ") + dtype_name(out.dtype) + ", 'self' has " + dtype_name(self.dtype));
  }
  const Tensor s1 = as_1d(self), i1 = as_1d(index);
  const Tensor src1 = src != nullptr ? as_1d(*src) : Tensor{};
  if (index.numel() != 0) {
    if (i1.dim() != s1.dim()) fail_arg(op, "index", "must have as many dims as 'self'");
    if (src != nullptr && src1.dim() != s1.dim()) fail_arg(op, "src", "must have as many dims as 'self'");
    for (int64_t k = 0; k < s1.dim(); ++k) {
      if ((k != d && i1.sizes[k] > s1.sizes[k]) || (src != nullptr && i1.sizes[k] > src1.sizes[k])) {
        fail_arg(
            op, "index",
            "is larger than 'self' (apart from dim " + std::to_string(d) + ") or 'src' at dim " + std::to_string(k));
      }
    }
  }
  dispatch_real(self.dtype, true, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    if (std::is_same_v<S, Bool8> && mode != ScatterReduce::kNone) {
      fail_arg(op, "self", "is bool, which the reductions do not support here");
    }
    const int64_t len = s1.sizes[d];
    const void* ib = index.data();
    // Check every index first: nothing is written for a bad one.
    std::vector<int64_t> targets;
    targets.reserve(static_cast<size_t>(index.numel()));
    for_each_index(i1.sizes, -1, [&](const std::vector<int64_t>& idx) {
      const int64_t at = offset_of(idx, i1.strides);
      const int64_t t = index.dtype == kInt64 ? load<int64_t>(ib, at) : load<int32_t>(ib, at);
      if (t < 0 || t >= len) {
        fail_arg(op, "index",
                 "holds " + std::to_string(t) + ", out of bounds for dim " + std::to_string(d) + " of size " +
                     std::to_string(len));
      }
      targets.push_back(t);
    });
    resize_output(out, self.sizes, op);
    if (!same_view(out, self)) copy_elements(out, self);
    if (targets.empty()) return;
    Tensor o1 = as_1d(out);
    void* ob = o1.data();
    const void* sb = src != nullptr ? src1.data() : nullptr;
    const K fill = static_cast<K>(value);
    // The element of out each index position targets, in visiting order.
    std::vector<int64_t> out_off(targets.size()), src_off(targets.size());
    size_t n = 0;
    for_each_index(i1.sizes, -1, [&](const std::vector<int64_t>& idx) {
      int64_t off = 0;
      for (int64_t k = 0; k < o1.dim(); ++k) off += (k == d ? targets[n] : idx[k]) * o1.strides[k];
      out_off[n] = off;
      if (src != nullptr) src_off[n] = offset_of(idx, src1.strides);
      ++n;
    });
    const bool reducing = mode != ScatterReduce::kNone;
    if (reducing && !include_self) {
      for (int64_t off : out_off) store<S>(ob, off, Elem<S>::from(identity<K>(mode)));
    }
    if (!reducing) {
      for (size_t j = 0; j < n; ++j) {
        store<S>(ob, out_off[j], src != nullptr ? load<S>(sb, src_off[j]) : Elem<S>::from(fill));
      }
    } else {
      // Each target accumulates in the key type (float for bfloat16 and
      // float16, as libtorch's kernel does) and is rounded once at the end.
      std::unordered_map<int64_t, K> acc;
      for (size_t j = 0; j < n; ++j) {
        const K v = src != nullptr ? load_key<S>(sb, src_off[j]) : fill;
        auto it = acc.find(out_off[j]);
        if (it == acc.end()) it = acc.emplace(out_off[j], load_key<S>(ob, out_off[j])).first;
        it->second = combine<K>(mode, it->second, v);
      }
      for (const auto& [off, v] : acc) store<S>(ob, off, Elem<S>::from(v));
    }
    if (mode == ScatterReduce::kMean) {
      if constexpr (!std::is_same_v<S, Bool8>) {
        // Contributions per targeted element (self counted when included).
        std::vector<int64_t> order(out_off);
        std::sort(order.begin(), order.end());
        for (size_t a = 0; a < order.size();) {
          size_t b = a;
          while (b < order.size() && order[b] == order[a]) ++b;
          const int64_t count = static_cast<int64_t>(b - a) + (include_self ? 1 : 0);
          const K sum = load_key<S>(ob, order[a]);
          K mean;
          if constexpr (std::is_floating_point_v<K>) {
            mean = sum / static_cast<K>(count);
          } else {
            const int64_t q = static_cast<int64_t>(sum) / count, r = static_cast<int64_t>(sum) % count;
            mean = static_cast<K>(r != 0 && ((r < 0) != (count < 0)) ? q - 1 : q);  // floor division
          }
          store<S>(ob, order[a], Elem<S>::from(mean));
          a = b;
        }
      }
    }
  });
}

ScatterReduce scatter_reduce_mode(const char* reduce, const char* op) {
  if (reduce == nullptr) fail_arg(op, "reduce", "is null");
  const std::string r = reduce;
  if (r == "sum") return ScatterReduce::kSum;
  if (r == "prod") return ScatterReduce::kProd;
  if (r == "mean") return ScatterReduce::kMean;
  if (r == "amax") return ScatterReduce::kAmax;
  if (r == "amin") return ScatterReduce::kAmin;
  fail_arg(op, "reduce", "is '" + r + "'; expected one of sum, prod, mean, amax, amin");
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                         AtenTensorHandle index, AtenTensorHandle src) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& s = as_tensor(src, "src");
    kernels::scatter(as_tensor(out, "out"), as_tensor(self, "self"), dim, as_tensor(index, "index"), &s, 0,
                     kernels::ScatterReduce::kNone, true, "aoti_torch_cpu_scatter_src_out");
  });
}

extern "C" AOTITorchError aoti_torch_cpu_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                           AtenTensorHandle index, double value) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    kernels::scatter(as_tensor(out, "out"), as_tensor(self, "self"), dim, as_tensor(index, "index"), nullptr, value,
                     kernels::ScatterReduce::kNone, true, "aoti_torch_cpu_scatter_value_out");
  });
}

extern "C" AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                int64_t dim, AtenTensorHandle index,
                                                                AtenTensorHandle src, const char* reduce,
                                                                int32_t include_self) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu_scatter_reduce_two_out";
    const kernels::ScatterReduce mode = kernels::scatter_reduce_mode(reduce, op);
    const Tensor& s = as_tensor(src, "src");
    kernels::scatter(as_tensor(out, "out"), as_tensor(self, "self"), dim, as_tensor(index, "index"), &s, 0, mode,
                     include_self != 0, op);
  });
}
