// aoti_torch_cpu_index_Tensor (since aotrun-shim 1.7): self[indices] with
// tensors, as libtorch's aten::index.Tensor computes it on the CPU.
//   - int64 and int32 index tensors broadcast together; a negative index
//     counts from the end; one out of range is refused, checked only when the
//     result has elements (libtorch checks each index as its kernel reads it);
//   - a k-d bool mask (or uint8, which libtorch deprecates but takes) stands
//     for the coordinates of its true elements over k dims whose sizes it
//     must match (its nonzero() columns);
//   - a null entry, and every dim past the list, is taken whole;
//   - indexed dims next to each other put the index shape where they were;
//     separated ones put it first (NumPy's rule).
// The result is laid out as libtorch's TensorIterator allocates it from the
// strides of self and of the index tensors (output_strides below): often
// contiguous, not always, and a model compiled against libtorch reads it by
// those strides. Elements move as bytes, so every dtype is taken.
// Refused where libtorch misbehaves: a 0-d mask (libtorch drops the entry,
// or fails an internal assert), and masks that with the entries after them
// index more dims than self has (libtorch returns a malformed result).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/team_split.hpp"
#include "compute/typed.hpp"
#include "kernels/element_moves.hpp"

namespace aotrun::shim::kernels {

namespace {

// Results of at least this many bytes are copied by the whole OpenMP team.
constexpr int64_t kParallelBytes = int64_t{1} << 18;

struct Geo {
  std::vector<int64_t> sizes, strides;
};

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// c10's contiguity: an empty tensor is contiguous; size-1 dims do not count.
bool geo_contiguous(const Geo& g) {
  if (numel_of(g.sizes) == 0) return true;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(g.sizes.size()) - 1; d >= 0; --d) {
    if (g.sizes[d] == 1) continue;
    if (g.strides[d] != expected) return false;
    expected *= g.sizes[d];
  }
  return true;
}

// c10's is_non_overlapping_and_dense.
bool geo_dense(const Geo& g) {
  const int64_t n = static_cast<int64_t>(g.sizes.size());
  if (n == 1) return g.sizes[0] < 2 || g.strides[0] == 1;
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (g.sizes[a] < 2) return false;
    if (g.sizes[b] < 2) return true;
    return g.strides[a] < g.strides[b];
  });
  int64_t required = 1;
  for (int64_t d : perm) {
    if (g.sizes[d] < 2) return true;
    if (g.strides[d] != required) return false;
    required *= g.sizes[d];
  }
  return true;
}

// g's strides once expanded to `shape` (at::expand): 0 where a dim grows
// from 1, and for new leading dims but those of size 1, which take the
// stride one step out of the dim inside them; a 0-d g expands to all 0.
std::vector<int64_t> expand_strides(const Geo& g, const std::vector<int64_t>& shape) {
  const int64_t nd = static_cast<int64_t>(shape.size()), td = static_cast<int64_t>(g.sizes.size());
  std::vector<int64_t> out(nd, 0);
  if (td == 0) return out;
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t d = td - (nd - i);
    const int64_t size = d >= 0 ? g.sizes[d] : 1;
    const int64_t stride = d >= 0 ? g.strides[d] : shape[i + 1] * out[i + 1];
    out[i] = size == shape[i] ? stride : 0;
  }
  return out;
}

// The strides at::reshape gives g reshaped to `shape` (c10's computeStride
// for a view; contiguous when it cannot view, as reshape then copies). The
// index tensors are only given size-1 dims around them, which always views,
// but the strides of those dims follow this rule, and the layout of the
// result depends on them.
std::vector<int64_t> reshape_strides(const Geo& g, const std::vector<int64_t>& shape) {
  const std::vector<int64_t>& os = g.sizes;
  const std::vector<int64_t>& ost = g.strides;
  const int64_t nn = static_cast<int64_t>(shape.size());
  if (os.empty()) return std::vector<int64_t>(nn, 1);
  const int64_t numel = numel_of(os);
  if (numel == 0 && os == shape) return ost;
  std::vector<int64_t> ns(nn);
  if (numel == 0) {
    for (int64_t v = nn - 1; v >= 0; --v) ns[v] = v == nn - 1 ? 1 : std::max<int64_t>(shape[v + 1], 1) * ns[v + 1];
    return ns;
  }
  int64_t view_d = nn - 1, chunk_base = ost.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(os.size()) - 1; td >= 0; --td) {
    tensor_numel *= os[td];
    if (td == 0 || (os[td - 1] != 1 && ost[td - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        ns[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return contiguous_strides(shape);
      if (td > 0) {
        chunk_base = ost[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1 ? ns : contiguous_strides(shape);
}

// The strides libtorch's TensorIterator gives a new output of `shape` over
// these inputs (each of `shape`'s rank): contiguous when all inputs have the
// shape and are contiguous; their common strides when all have the shape and
// share dense strides; otherwise the dims sorted by the inputs' strides
// (reorder_dimensions: the first input whose strides order two dims decides,
// broadcast dims have no say, ties go to the smaller size) and the output
// dense in that order, contiguous when the order is the row-major one. (Its
// channels-last shortcut cannot arise: the source's indexed dims have stride
// 0, so all inputs are channels-last contiguous only when they are
// contiguous too.)
std::vector<int64_t> output_strides(const std::vector<int64_t>& shape, const std::vector<Geo>& inputs) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  bool same = true, contiguous = true, dense = true;
  for (const Geo& in : inputs) {
    same = same && in.sizes == shape;
    contiguous = contiguous && geo_contiguous(in);
    dense = dense && geo_dense(in) && in.strides == inputs.back().strides;
  }
  if (same && contiguous) return contiguous_strides(shape);
  if (same && dense) return inputs.back().strides;
  std::vector<std::vector<int64_t>> st;  // 0 where an input broadcasts
  for (const Geo& in : inputs) {
    std::vector<int64_t> s(nd, 0);
    const int64_t off = nd - static_cast<int64_t>(in.sizes.size());
    for (size_t i = 0; i < in.sizes.size(); ++i) {
      s[off + i] = in.sizes[i] == 1 && shape[off + i] != 1 ? 0 : in.strides[i];
    }
    st.push_back(std::move(s));
  }
  // perm: innermost dim first.
  std::vector<int64_t> perm(nd);
  for (int64_t j = 0; j < nd; ++j) perm[j] = nd - 1 - j;
  // >0: a belongs further out than b; <0: further in; 0: no input says.
  auto order = [&](int64_t a, int64_t b) {
    for (const auto& s : st) {
      if (s[a] == 0 || s[b] == 0) continue;
      if (s[a] != s[b]) return s[a] < s[b] ? -1 : 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
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
  bool row_major = true;
  for (int64_t j = 0; j < nd; ++j) row_major = row_major && perm[j] == nd - 1 - j;
  if (row_major) return contiguous_strides(shape);
  // Sizes of 0 are multiplied in as they are (TensorIterator's compatible_stride).
  std::vector<int64_t> out(nd);
  int64_t next = 1;
  for (int64_t j = 0; j < nd; ++j) {
    out[perm[j]] = next;
    next *= shape[perm[j]];
  }
  return out;
}

// The coordinates of the mask's true (non-zero) elements in row-major
// order, as nonzero() gives them: [k, n] int64, row j the dim-j coordinate
// of each, so that each row is one contiguous index.
Tensor mask_coordinates(const Tensor& mask) {
  const int64_t k = mask.dim(), total = mask.numel();
  const char* m = static_cast<const char*>(mask.data());
  int64_t n = 0;
  if (total > 0) {
    WalkDims<1> w;
    w.sizes = mask.sizes;
    w.strides[0] = mask.strides;
    for_each_run(merged(w), 0, total, [&](const std::array<int64_t, 1>& off, int64_t len, const auto& step) {
      for (int64_t q = 0; q < len; ++q) n += m[off[0] + q * step[0]] != 0;
    });
  }
  Tensor out = empty_contiguous({k, n}, kInt64);
  if (n == 0) return out;
  int64_t* o = static_cast<int64_t*>(out.data());
  // Row by row along the last dim; idx holds the outer coordinates.
  const int64_t last = k - 1, len = mask.sizes[last], step = mask.strides[last];
  std::vector<int64_t> idx(k, 0);
  int64_t base = 0, w = 0;
  for (int64_t row = 0, rows = total / len; row < rows; ++row) {
    for (int64_t c = 0; c < len; ++c) {
      if (m[base + c * step] == 0) continue;
      for (int64_t j = 0; j < last; ++j) o[j * n + w] = idx[j];
      o[last * n + w] = c;
      ++w;
    }
    for (int64_t j = last - 1; j >= 0; --j) {
      base += mask.strides[j];
      if (++idx[j] < mask.sizes[j]) break;
      base -= idx[j] * mask.strides[j];
      idx[j] = 0;
    }
  }
  return out;
}

// One index into one dim of self, as libtorch holds it after expanding
// masks and broadcasting.
struct Entry {
  bool defined = false;
  int64_t arg = -1;       // its place in `indices` (messages)
  int64_t self_dim = -1;  // the dim of self it indexes (messages)
  std::vector<int64_t> sizes, strides;
  const char* data = nullptr;
  bool int32 = false;
};

// Row-major offsets (elements) of every position of `sizes` under each
// operand's strides.
template <size_t K>
std::array<std::vector<int64_t>, K> offsets_of(const std::vector<int64_t>& sizes,
                                               const std::array<std::vector<int64_t>, K>& strides) {
  std::array<std::vector<int64_t>, K> out;
  const int64_t n = numel_of(sizes);
  for (auto& o : out) o.resize(static_cast<size_t>(n));
  WalkDims<K> w;
  w.sizes = sizes;
  w.strides = strides;
  int64_t at = 0;
  for_each_run(merged(w), 0, n, [&](const std::array<int64_t, K>& off, int64_t len, const auto& step) {
    for (int64_t q = 0; q < len; ++q, ++at) {
      for (size_t k = 0; k < K; ++k) out[k][at] = off[k] + q * step[k];
    }
  });
  return out;
}

// Copies one block of the dims after the indexed ones: src from element s0
// by a.strides[0], dst from d0 by a.strides[1].
template <typename T>
void copy_block(char* dst, int64_t d0, const char* src, int64_t s0, const WalkDims<2>& a, int64_t count) {
  const size_t nd = a.sizes.size();
  if (nd == 0) {
    store_elem<T>(dst, d0, load_elem<T>(src, s0));
    return;
  }
  if (nd == 1) {
    const int64_t ss = a.strides[0][0], ds = a.strides[1][0];
    if (ss == 1 && ds == 1) {
      std::memcpy(dst + d0 * static_cast<int64_t>(sizeof(T)), src + s0 * static_cast<int64_t>(sizeof(T)),
                  static_cast<size_t>(count) * sizeof(T));
      return;
    }
    for (int64_t q = 0; q < count; ++q) store_elem<T>(dst, d0 + q * ds, load_elem<T>(src, s0 + q * ss));
    return;
  }
  for_each_run(a, 0, count, [&](const std::array<int64_t, 2>& off, int64_t len, const std::array<int64_t, 2>& step) {
    for (int64_t q = 0; q < len; ++q) {
      store_elem<T>(dst, d0 + off[1] + q * step[1], load_elem<T>(src, s0 + off[0] + q * step[0]));
    }
  });
}

}  // namespace

Tensor index_tensor(const Tensor& self, const std::vector<const Tensor*>& indices, const char* op) {
  expect_cpu_defined(self, op, "self");
  const size_t item = self.itemsize();
  if (item == 0) fail_arg(op, "self", std::string("has unknown dtype ") + dtype_name(self.dtype));
  const int64_t nd = self.dim(), nlist = static_cast<int64_t>(indices.size());
  if (nlist > nd) {
    fail_arg(op, "indices",
             "has " + std::to_string(nlist) + " entries: too many indices for a " + std::to_string(nd) + "-d 'self'");
  }
  if (nlist == 0) fail_arg(op, "indices", "is empty: at least one index must be given");
  std::vector<Entry> entries;
  std::vector<Tensor> coords;  // the masks' coordinates, read by their entries
  for (int64_t i = 0; i < nlist; ++i) {
    const Tensor* t = indices[static_cast<size_t>(i)];
    const std::string at = "entry " + std::to_string(i);
    Entry e;
    e.arg = i;
    if (t == nullptr) {
      entries.push_back(e);
      continue;
    }
    if (!t->defined()) fail_arg(op, "indices", at + " is an undefined tensor");
    if (t->device_type != kCPU) fail_arg(op, "indices", at + " is not a CPU tensor");
    if (t->dtype == kBool || t->dtype == kUInt8) {
      const int64_t k = t->dim(), first = static_cast<int64_t>(entries.size());
      if (k == 0) fail_arg(op, "indices", at + " is a 0-d mask, which libtorch's index does not index with");
      if (first + k > nd) {
        fail_arg(op, "indices",
                 at + " is a " + std::to_string(k) + "-d mask from dim " + std::to_string(first) +
                     ": too many indices for a " + std::to_string(nd) + "-d 'self'");
      }
      for (int64_t j = 0; j < k; ++j) {
        if (t->sizes[j] != self.sizes[first + j]) {
          fail_arg(op, "indices",
                   at + ": the shape of the mask " + shape_str(t->sizes) + " at index " + std::to_string(j) +
                       " does not match the shape of 'self' " + shape_str(self.sizes) + " at index " +
                       std::to_string(first + j));
        }
      }
      coords.push_back(mask_coordinates(*t));
      const int64_t n = coords.back().sizes[1];
      const char* base = static_cast<const char*>(coords.back().data());
      for (int64_t j = 0; j < k; ++j) {
        e.defined = true;
        e.sizes = {n};
        e.strides = {1};
        e.data = n > 0 ? base + j * n * static_cast<int64_t>(sizeof(int64_t)) : nullptr;
        entries.push_back(e);
      }
    } else if (t->dtype == kInt64 || t->dtype == kInt32) {
      e.defined = true;
      e.sizes = t->sizes;
      e.strides = t->strides;
      e.data = t->numel() > 0 ? static_cast<const char*>(t->data()) : nullptr;
      e.int32 = t->dtype == kInt32;
      entries.push_back(e);
    } else {
      fail_arg(op, "indices",
               at + " has dtype " + dtype_name(t->dtype) + "; index tensors must be int64, int32, bool or uint8");
    }
  }
  // A mask followed by entries can reach past the last dim (libtorch then
  // returns a malformed result).
  if (static_cast<int64_t>(entries.size()) > nd) {
    fail_arg(op, "indices",
             "stands for " + std::to_string(entries.size()) + " dims with its masks expanded: too many indices for a " +
                 std::to_string(nd) + "-d 'self'");
  }
  // The index shape: every index tensor broadcast with the others.
  std::vector<int64_t> shape;
  std::string shapes;
  bool any = false;
  for (const Entry& e : entries) {
    if (!e.defined) continue;
    shapes += (any ? ", " : "") + shape_str(e.sizes);
    if (!any) {
      shape = e.sizes;
      any = true;
      continue;
    }
    const int64_t n = std::max(shape.size(), e.sizes.size());
    std::vector<int64_t> b(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ai = i - (n - static_cast<int64_t>(shape.size()));
      const int64_t ei = i - (n - static_cast<int64_t>(e.sizes.size()));
      const int64_t as = ai >= 0 ? shape[ai] : 1, es = ei >= 0 ? e.sizes[ei] : 1;
      if (as != es && as != 1 && es != 1) {
        fail_arg(op, "indices", "holds index tensors whose shapes do not broadcast together: " + shapes);
      }
      b[i] = as == 1 ? es : as;
    }
    shape = std::move(b);
  }
  if (!any) {
    // libtorch's kernel asserts at least one index tensor, but runs only when
    // there is something to copy: an empty self comes back as it is, in the
    // iterator's layout.
    if (self.numel() != 0) fail_arg(op, "indices", "holds no tensor: at least one dim must be indexed");
    return empty_tensor(self.sizes, output_strides(self.sizes, {Geo{self.sizes, self.strides}}), self.dtype);
  }
  for (Entry& e : entries) {
    if (e.defined && e.sizes != shape) {
      e.strides = expand_strides({e.sizes, e.strides}, shape);
      e.sizes = shape;
    }
  }
  entries.resize(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) entries[d].self_dim = d;
  // Separated indexed dims: self viewed with them first, in their order.
  Geo src{self.sizes, self.strides};
  int64_t first = -1, last = -1, count = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (!entries[d].defined) continue;
    if (first < 0) first = d;
    last = d;
    ++count;
  }
  if (last - first + 1 != count) {
    std::vector<int64_t> order;
    for (int64_t d = 0; d < nd; ++d)
      if (entries[d].defined) order.push_back(d);
    for (int64_t d = 0; d < nd; ++d)
      if (!entries[d].defined) order.push_back(d);
    Geo p;
    std::vector<Entry> pe;
    for (int64_t d : order) {
      p.sizes.push_back(src.sizes[d]);
      p.strides.push_back(src.strides[d]);
      pe.push_back(entries[d]);
    }
    src = std::move(p);
    entries = std::move(pe);
    first = 0;
  }
  const int64_t before = first, after = nd - first - count, nrep = static_cast<int64_t>(shape.size());
  const int64_t R = numel_of(shape);
  for (int64_t j = 0; j < count; ++j) {
    if (src.sizes[before + j] == 0 && R != 0) {
      fail_arg(op, "indices",
               "entry " + std::to_string(entries[before + j].arg) + " indexes dim " +
                   std::to_string(entries[before + j].self_dim) +
                   " of size 0 with a non-empty index: index is out of bounds for dimension with size 0");
    }
  }
  // The result: [dims before, index shape, dims after] of the (viewed) self.
  std::vector<int64_t> out_sizes(src.sizes.begin(), src.sizes.begin() + before);
  out_sizes.insert(out_sizes.end(), shape.begin(), shape.end());
  out_sizes.insert(out_sizes.end(), src.sizes.begin() + before + count, src.sizes.end());
  // Its layout: libtorch's iterator over self restrided to the result's
  // shape (stride 0 over the index dims) and each index with size-1 dims
  // around it, int32 ones first converted to int64 by .to(), which keeps
  // dense strides and makes others dense in their order.
  std::vector<Geo> inputs;
  {
    Geo rs;
    rs.sizes = out_sizes;
    rs.strides.assign(src.strides.begin(), src.strides.begin() + before);
    rs.strides.insert(rs.strides.end(), static_cast<size_t>(nrep), 0);
    rs.strides.insert(rs.strides.end(), src.strides.begin() + before + count, src.strides.end());
    inputs.push_back(std::move(rs));
  }
  for (int64_t j = 0; j < count; ++j) {
    const Entry& e = entries[before + j];
    Geo g{e.sizes, e.strides};
    if (e.int32 && !geo_dense(g)) g.strides = dense_strides_like(g.sizes, g.strides);
    Geo v;
    v.sizes.assign(static_cast<size_t>(before), 1);
    v.sizes.insert(v.sizes.end(), shape.begin(), shape.end());
    v.sizes.insert(v.sizes.end(), static_cast<size_t>(after), 1);
    v.strides = reshape_strides(g, v.sizes);
    inputs.push_back(std::move(v));
  }
  Tensor out = empty_tensor(out_sizes, output_strides(out_sizes, inputs), self.dtype);
  if (out.numel() == 0) return out;

  // Element offset into self of each index position, every index checked.
  std::vector<int64_t> goff(static_cast<size_t>(R), 0);
  for (int64_t j = 0; j < count; ++j) {
    const Entry& e = entries[before + j];
    const int64_t size = src.sizes[before + j], stride = src.strides[before + j];
    WalkDims<1> w;
    w.sizes = shape;
    w.strides[0] = e.strides;
    int64_t r = 0;
    for_each_run(merged(w), 0, R, [&](const std::array<int64_t, 1>& off, int64_t len, const auto& step) {
      for (int64_t q = 0; q < len; ++q, ++r) {
        const int64_t at = off[0] + q * step[0];
        const int64_t v = e.int32 ? load_elem<int32_t>(e.data, at) : load_elem<int64_t>(e.data, at);
        if (v < -size || v >= size) {
          fail_arg(op, "indices",
                   "entry " + std::to_string(e.arg) + ": index " + std::to_string(v) +
                       " is out of bounds for dimension " + std::to_string(e.self_dim) + " with size " +
                       std::to_string(size));
        }
        goff[r] += (v < 0 ? v + size : v) * stride;
      }
    });
  }
  const std::vector<int64_t> before_sizes(out_sizes.begin(), out_sizes.begin() + before);
  const auto b_off =
      offsets_of<2>(before_sizes, {std::vector<int64_t>(src.strides.begin(), src.strides.begin() + before),
                                   std::vector<int64_t>(out.strides.begin(), out.strides.begin() + before)});
  const auto r_off =
      offsets_of<1>(shape, {std::vector<int64_t>(out.strides.begin() + before, out.strides.begin() + before + nrep)});
  WalkDims<2> a;
  a.sizes.assign(out_sizes.begin() + before + nrep, out_sizes.end());
  a.strides[0].assign(src.strides.begin() + before + count, src.strides.end());
  a.strides[1].assign(out.strides.begin() + before + nrep, out.strides.end());
  const int64_t block = numel_of(a.sizes);
  a = merged(a);

  const char* sb = static_cast<const char*>(self.data());
  char* ob = static_cast<char*>(out.data());
  const int64_t total = numel_of(before_sizes) * R;
  const bool split = out.numel() * static_cast<int64_t>(item) >= kParallelBytes;
  const int64_t chunks = split ? std::min<int64_t>(total, int64_t{omp_get_max_threads()} * 4) : 1;
  with_element_bytes(item, [&](auto tag) {
    using T = decltype(tag);
    for_range(chunks > 1, chunks, [&](int64_t c) {
      const int64_t lo = total * c / chunks, hi = total * (c + 1) / chunks;
      int64_t b = lo / R, r = lo % R;
      for (int64_t p = lo; p < hi; ++p) {
        copy_block<T>(ob, b_off[1][b] + r_off[0][r], sb, b_off[0][b] + goff[r], a, block);
        if (++r == R) {
          r = 0;
          ++b;
        }
      }
    });
  });
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                      int64_t indices_len_, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu_index_Tensor";
    if (ret0 == nullptr) kernels::fail_arg(op, "ret0", "is null");
    if (self == nullptr) kernels::fail_arg(op, "self", "is a null tensor handle");
    if (indices_len_ < 0) kernels::fail_arg(op, "indices_len_", "is negative (" + std::to_string(indices_len_) + ")");
    if (indices_len_ > 0 && indices == nullptr) kernels::fail_arg(op, "indices", "is null");
    std::vector<const Tensor*> list;
    for (int64_t i = 0; i < indices_len_; ++i) {
      if (indices[i] == nullptr) {
        list.push_back(nullptr);  // None: the dim taken whole
        continue;
      }
      if (*indices[i] == nullptr) {
        kernels::fail_arg(op, "indices", "entry " + std::to_string(i) + " points to a null tensor handle");
      }
      list.push_back(&as_tensor(*indices[i], "indices"));
    }
    *ret0 = new_handle(kernels::index_tensor(as_tensor(self, "self"), list, op));
  });
}
