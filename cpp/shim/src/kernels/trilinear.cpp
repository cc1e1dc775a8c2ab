// aoti_torch_cpu__trilinear (since aotrun-shim 1.8): aten::_trilinear, what
// nn.Bilinear (F.bilinear) lowers to: the sum over `sumdim` of
// i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3),
// size-1 dims broadcast. libtorch's rules, followed step by step:
//  - total = i1.dim() + len(expand1); every list's dims are wrapped into
//    [0, total) and may not repeat; unroll_dim must lie in [0, total); each
//    input must reach `total` dims through its unsqueezes.
//  - a dim's size is the last non-expanded input's there (i3, then i2, then
//    i1); sizes other than 1 must agree; the output is zeros of those sizes
//    (1 where summed) in i1's dtype, the three dtypes equal.
//  - for each k along unroll_dim (the inputs that have it narrowed to k):
//    buf = pair(i1, i2) over the summed dims i3 lacks, then pair(buf, i3)
//    over the summed dims i3 has; the buf is added into output's slice k,
//    or into all of output when unroll_dim is summed. A pair sums first the
//    dims only one side has, then multiplies as one batched GEMM (batch: dims
//    both keep; rows: left's own; columns: right's own); with no summed dim
//    it is a broadcast product. Intermediates are rounded to the dtype
//    (bfloat16, float16: computed in float, rounded per step as libtorch's
//    tensors are).
//  - summed dims are squeezed; the result is contiguous. Any empty input
//    gives zeros.
// dtypes: float32, float64, bfloat16, float16 and the signed/unsigned 8-64
// bit integers (integer arithmetic wraps as libtorch's). Refused as libtorch
// refuses them: bool and uint16-64 (bmm has no kernel), an integer dtype
// other than int64 when a summed dim only one side of a pair has (libtorch's
// sum promotes it to int64 and bmm then refuses the mixed pair). Complex
// dtypes, which libtorch takes, are refused (docs/SHIM.md).
// float32 and float64 GEMMs run on the shim's BLAS (sgemm / dgemm) reading
// the inputs in place where their strides allow; sums may be ordered
// differently from libtorch's, so float results agree within
// torch.testing.assert_close's tolerances, not bit for bit.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {
namespace {

// A strided array of A values: a view of an input's memory or of a buffer it
// owns.
template <typename A>
struct Arr {
  std::shared_ptr<std::vector<A>> own;
  const A* data = nullptr;
  std::vector<int64_t> sizes, strides;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
};

template <typename A>
Arr<A> dense(const std::vector<int64_t>& sizes) {
  Arr<A> a;
  a.sizes = sizes;
  a.strides = contiguous_strides(sizes);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  a.own = std::make_shared<std::vector<A>>(static_cast<size_t>(n), A(0));
  a.data = a.own->data();
  return a;
}

// Rounds a compute value to what the dtype S holds.
template <typename S, typename A>
A round_to(A v) {
  if constexpr (std::is_same_v<S, BF16> || std::is_same_v<S, F16>) {
    return Elem<S>::key(Elem<S>::from(v));
  } else {
    return v;
  }
}

// Calls f(pos) for every position of `sizes` (nothing when one is 0).
template <typename F>
void each(const std::vector<int64_t>& sizes, F&& f) {
  for_each_index(sizes, -1, f);
}

// Sums `a` over dim d, keeping it as size 1 (libtorch's sum(d, true)).
template <typename S, typename A>
Arr<A> sum_dim(const Arr<A>& a, int64_t d) {
  std::vector<int64_t> sizes = a.sizes;
  sizes[d] = 1;
  Arr<A> r = dense<A>(sizes);
  A* out = r.own->data();
  each(sizes, [&](const std::vector<int64_t>& pos) {
    const A* p = a.data + offset_of(pos, a.strides);
    A acc = A(0);
    for (int64_t i = 0; i < a.sizes[d]; ++i) acc += p[i * a.strides[d]];
    out[offset_of(pos, r.strides)] = round_to<S>(acc);
  });
  return r;
}

// dims of `a` grouped as one (size, stride) when they can be, skipping size-1
// dims; false when they cannot.
template <typename A>
bool merged(const Arr<A>& a, const std::vector<int64_t>& dims, int64_t* size, int64_t* stride) {
  int64_t n = 1, st = 0;
  bool any = false;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const int64_t s = a.sizes[*it];
    if (s == 1) continue;
    if (!any) {
      st = a.strides[*it];
      any = true;
    } else if (a.strides[*it] != st * n) {
      return false;
    }
    n *= s;
  }
  *size = n;
  *stride = any ? st : 0;
  return true;
}

// A [rows, cols] matrix of `a` for BLAS: its pointer, transpose flag and
// leading dimension, packed into `buf` when its strides do not allow it.
template <typename A>
struct Mat {
  const A* p;
  bool t;
  int64_t ld;
};

template <typename A>
void pack3(const Arr<A>& a, const std::vector<int64_t>& g0, const std::vector<int64_t>& g1,
           const std::vector<int64_t>& g2, std::vector<A>& buf) {
  std::vector<int64_t> order = g0;
  order.insert(order.end(), g1.begin(), g1.end());
  order.insert(order.end(), g2.begin(), g2.end());
  std::vector<int64_t> sizes, strides;
  for (int64_t d : order) {
    sizes.push_back(a.sizes[d]);
    strides.push_back(a.strides[d]);
  }
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  buf.resize(static_cast<size_t>(n));
  int64_t i = 0;
  each(sizes, [&](const std::vector<int64_t>& pos) { buf[i++] = a.data[offset_of(pos, strides)]; });
}

// c[b] = l[b] @ r[b] for b < nb, l [nb, m, k] and r [nb, k, n] given by dims
// of the two arrays, c dense [nb, m, n].
template <typename A>
void batched_product(const Arr<A>& l, const Arr<A>& r, const std::vector<int64_t>& lro, const std::vector<int64_t>& lo,
                     const std::vector<int64_t>& sum, const std::vector<int64_t>& ro, int64_t nb, int64_t m, int64_t k,
                     int64_t n, A* c) {
  if constexpr (std::is_floating_point_v<A>) {
    int64_t lb = 0, lm = 0, lk = 0, rb = 0, rk = 0, rn = 0, s = 0;
    std::vector<A> lbuf, rbuf;
    const A* lp = l.data;
    const A* rp = r.data;
    // A matrix of strides (row, col) in BLAS form, or packed.
    auto blas_form = [](int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool* t, int64_t* ld) {
      if (cols == 1 || cs == 1) {
        *t = false;
        *ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
        return *ld >= std::max<int64_t>(cols, 1);
      }
      if (rows == 1 || rs == 1) {
        *t = true;
        *ld = cs;
        return *ld >= std::max<int64_t>(rows, 1);
      }
      return false;
    };
    bool lt = false, rt = false;
    int64_t lld = 0, rld = 0;
    const bool l_ok = merged(l, lro, &s, &lb) && merged(l, lo, &s, &lm) && merged(l, sum, &s, &lk) &&
                      blas_form(m, k, lm, lk, &lt, &lld);
    if (!l_ok) {
      pack3(l, lro, lo, sum, lbuf);
      lp = lbuf.data();
      lb = m * k;
      lt = false;
      lld = std::max<int64_t>(k, 1);
    }
    const bool r_ok = merged(r, lro, &s, &rb) && merged(r, sum, &s, &rk) && merged(r, ro, &s, &rn) &&
                      blas_form(k, n, rk, rn, &rt, &rld);
    if (!r_ok) {
      pack3(r, lro, sum, ro, rbuf);
      rp = rbuf.data();
      rb = k * n;
      rt = false;
      rld = std::max<int64_t>(n, 1);
    }
    for (int64_t b = 0; b < nb; ++b) {
      blas_gemm(lt, rt, m, n, k, A(1), lp + b * lb, lld, rp + b * rb, rld, A(0), c + b * m * n,
                std::max<int64_t>(n, 1));
    }
  } else {
    std::vector<A> lbuf, rbuf;
    pack3(l, lro, lo, sum, lbuf);
    pack3(r, lro, sum, ro, rbuf);
    for (int64_t b = 0; b < nb; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          A acc = A(0);
          for (int64_t q = 0; q < k; ++q) acc += lbuf[(b * m + i) * k + q] * rbuf[(b * k + q) * n + j];
          c[(b * m + i) * n + j] = acc;
        }
      }
    }
  }
}

// (left * right).sum(sum_dims, keepdim=true) as libtorch's sumproduct_pair.
template <typename S, typename A>
Arr<A> pair(Arr<A> left, Arr<A> right, const std::vector<int64_t>& sum_dims, const char* op) {
  const int64_t nd = left.dim();
  if (right.dim() != nd) fail_arg(op, "i2", "number of dimensions must match");
  if (sum_dims.empty()) {
    std::vector<int64_t> sizes(nd);
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t a = left.sizes[d], b = right.sizes[d];
      if (a != b && a != 1 && b != 1)
        fail_arg(op, "i2", "non-broadcast dimensions must match at dim " + std::to_string(d));
      sizes[d] = a == 1 ? b : a;
    }
    Arr<A> r = dense<A>(sizes);
    std::vector<int64_t> ls(nd), rs(nd);
    for (int64_t d = 0; d < nd; ++d) {
      ls[d] = left.sizes[d] == 1 ? 0 : left.strides[d];
      rs[d] = right.sizes[d] == 1 ? 0 : right.strides[d];
    }
    A* out = r.own->data();
    int64_t i = 0;
    each(sizes, [&](const std::vector<int64_t>& pos) {
      out[i++] = round_to<S>(left.data[offset_of(pos, ls)] * right.data[offset_of(pos, rs)]);
    });
    return r;
  }
  std::vector<bool> summed(nd, false);
  for (int64_t d : sum_dims) summed[d] = true;
  std::vector<int64_t> lro, lo, ro, sum;
  int64_t nb = 1, m = 1, n = 1, k = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const bool sl = left.sizes[d] != 1, sr = right.sizes[d] != 1;
    if (summed[d]) {
      if (sl && sr) {
        if (left.sizes[d] != right.sizes[d]) {
          fail_arg(op, "i2", "non-broadcast dimensions must match at dim " + std::to_string(d));
        }
        k *= left.sizes[d];
      } else if (sl || sr) {
        if constexpr (std::is_integral_v<A> && !std::is_same_v<S, int64_t>) {
          fail_arg(op, "i1",
                   "sums dim " + std::to_string(d) +
                       " of one operand only, which libtorch promotes to int64 and then refuses to multiply");
        }
        if (sl) left = sum_dim<S>(left, d);
        if (sr) right = sum_dim<S>(right, d);
      }
      sum.push_back(d);  // libtorch's order of sum_dims is the list's; only the set matters here
    } else if (sl && sr) {
      if (left.sizes[d] != right.sizes[d]) {
        fail_arg(op, "i2", "non-broadcast dimensions must match at dim " + std::to_string(d));
      }
      lro.push_back(d);
      nb *= left.sizes[d];
    } else if (sl) {
      lo.push_back(d);
      m *= left.sizes[d];
    } else {
      ro.push_back(d);
      n *= right.sizes[d];
    }
  }
  // Summed dims that are 1 on both sides take no part in the product.
  std::vector<int64_t> ksum;
  for (int64_t d : sum) {
    if (left.sizes[d] != 1) ksum.push_back(d);
  }
  std::vector<A> c(static_cast<size_t>(nb * m * n));
  if (nb * m * n > 0) {
    if (k == 0) {
      std::fill(c.begin(), c.end(), A(0));
    } else {
      batched_product(left, right, lro, lo, ksum, ro, nb, m, k, n, c.data());
    }
  }
  Arr<A> r;
  r.own = std::make_shared<std::vector<A>>(std::move(c));
  for (auto& v : *r.own) v = round_to<S>(v);
  r.data = r.own->data();
  r.sizes.assign(nd, 1);
  r.strides.assign(nd, 0);
  // The product's layout: [lro..., lo..., ro...] row-major.
  std::vector<int64_t> order = lro;
  order.insert(order.end(), lo.begin(), lo.end());
  order.insert(order.end(), ro.begin(), ro.end());
  int64_t st = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int64_t s =
        lro.end() != std::find(lro.begin(), lro.end(), *it) || lo.end() != std::find(lo.begin(), lo.end(), *it)
            ? left.sizes[*it]
            : right.sizes[*it];
    r.sizes[*it] = s;
    r.strides[*it] = st;
    st *= s;
  }
  return r;
}

// The view of `a` with dim d narrowed to [start, start + 1).
template <typename A>
Arr<A> narrow1(const Arr<A>& a, int64_t d, int64_t start) {
  Arr<A> r = a;
  r.data = a.data + start * a.strides[d];
  r.sizes[d] = 1;
  return r;
}

// An input as an Arr: in place for float32 / float64, else converted.
template <typename S, typename A>
Arr<A> input_arr(const Tensor& t) {
  Arr<A> a;
  if constexpr (std::is_same_v<S, A>) {
    a.data = static_cast<const A*>(t.data());
    a.sizes = t.sizes;
    a.strides = t.strides;
  } else {
    a = dense<A>(t.sizes);
    A* out = a.own->data();
    const void* base = t.data();
    int64_t i = 0;
    each(t.sizes, [&](const std::vector<int64_t>& pos) {
      if constexpr (std::is_integral_v<A>) {
        out[i++] = static_cast<A>(static_cast<int64_t>(load<S>(base, offset_of(pos, t.strides))));
      } else {
        out[i++] = static_cast<A>(load_key<S>(base, offset_of(pos, t.strides)));
      }
    });
  }
  return a;
}

template <typename A>
void unsqueeze(Arr<A>& a, int64_t d) {
  a.sizes.insert(a.sizes.begin() + d, 1);
  a.strides.insert(a.strides.begin() + d, 0);
}

std::vector<bool> dim_set(IntList l, int64_t total, const char* op, const char* arg) {
  if (l.len > 0 && l.data == nullptr) fail_arg(op, arg, "is null with a length of " + std::to_string(l.len));
  std::vector<bool> set(static_cast<size_t>(std::max<int64_t>(total, 0)), false);
  for (int64_t i = 0; i < l.len; ++i) {
    const int64_t d = wrap_dim(l.data[i], total, op, arg);
    if (set[d]) fail_arg(op, arg, "dim " + std::to_string(d) + " appears multiple times in the list of dims");
    set[d] = true;
  }
  return set;
}

template <typename S, typename A>
Tensor run(const Tensor& t1, const Tensor& t2, const Tensor& t3, const std::vector<bool> exp[3],
           const std::vector<bool>& sumdim, int64_t total, int64_t unroll_dim, const char* op) {
  static const char* names[3] = {"i1", "i2", "i3"};
  const Tensor* ts[3] = {&t1, &t2, &t3};
  Arr<A> in[3];
  for (int j = 0; j < 3; ++j) in[j] = input_arr<S, A>(*ts[j]);
  std::vector<int64_t> out_size;
  std::vector<int64_t> sum12, sum23;
  int64_t unroll_size = -1;
  for (int64_t i = 0; i < total; ++i) {
    int64_t s = 0;
    for (int j = 0; j < 3; ++j) {
      if (exp[j][i]) {
        if (i > in[j].dim()) {
          fail_arg(op, names[j],
                   "cannot be unsqueezed at dim " + std::to_string(i) + ": it has " + std::to_string(in[j].dim()) +
                       " dims there");
        }
        unsqueeze(in[j], i);
      } else {
        if (i >= in[j].dim()) {
          fail_arg(
              op, names[j],
              "has no dim " + std::to_string(i) + " (it has " + std::to_string(in[j].dim()) + " after its unsqueezes)");
        }
        s = in[j].sizes[i];
      }
    }
    if (sumdim[i] && i != unroll_dim) (exp[2][i] ? sum12 : sum23).push_back(i);
    out_size.push_back(sumdim[i] ? 1 : s);
    if (i == unroll_dim) unroll_size = s;
  }
  for (int j = 0; j < 3; ++j) {
    if (in[j].dim() != total) {
      fail_arg(op, names[j],
               "has " + std::to_string(in[j].dim()) + " dims after its unsqueezes, expected " + std::to_string(total) +
                   " (number of dimensions must match)");
    }
  }
  const bool any_empty = in[0].numel() == 0 || in[1].numel() == 0 || in[2].numel() == 0;
  // Sizes other than 1 must agree (libtorch refuses them in its products);
  // along unroll_dim each input that has it is narrowed at every k below the
  // last one's size, so it must reach that far. (With an empty input
  // libtorch multiplies nothing and checks none of this.)
  for (int64_t i = 0; i < total && !any_empty; ++i) {
    if (i == unroll_dim) {
      for (int j = 0; j < 3; ++j) {
        if (!exp[j][i] && in[j].sizes[i] < unroll_size) {
          fail_arg(op, names[j],
                   "has size " + std::to_string(in[j].sizes[i]) + " at unroll_dim " + std::to_string(i) +
                       ", which is unrolled to " + std::to_string(unroll_size));
        }
      }
      continue;
    }
    int64_t seen = 1;
    for (int j = 0; j < 3; ++j) {
      const int64_t s = in[j].sizes[i];
      if (s == 1) continue;
      if (seen != 1 && s != seen) {
        fail_arg(op, names[j],
                 "non-broadcast dimensions must match: size " + std::to_string(s) + " at dim " + std::to_string(i) +
                     ", another input has " + std::to_string(seen));
      }
      seen = s;
    }
  }
  Arr<A> output = dense<A>(out_size);
  A* out = output.own->data();
  if (!any_empty) {
    const int64_t mul[3] = {exp[0][unroll_dim] ? 0 : 1, exp[1][unroll_dim] ? 0 : 1, exp[2][unroll_dim] ? 0 : 1};
    for (int64_t k = 0; k < unroll_size; ++k) {
      Arr<A> buf = pair<S>(narrow1(in[0], unroll_dim, k * mul[0]), narrow1(in[1], unroll_dim, k * mul[1]), sum12, op);
      buf = pair<S>(buf, narrow1(in[2], unroll_dim, k * mul[2]), sum23, op);
      // Added into output's slice k (all of output when unroll_dim is summed),
      // which must hold buf's broadcast shape.
      std::vector<int64_t> slice = out_size;
      int64_t base = 0;
      if (!sumdim[unroll_dim]) {
        slice[unroll_dim] = 1;
        base = k * output.strides[unroll_dim];
      }
      std::vector<int64_t> bs(total);
      for (int64_t i = 0; i < total; ++i) {
        if (buf.sizes[i] != slice[i] && buf.sizes[i] != 1) {
          fail_arg(op, "i3",
                   "gives a product of size " + std::to_string(buf.sizes[i]) + " at dim " + std::to_string(i) +
                       " where the output has " + std::to_string(slice[i]) +
                       " (the output's size there is the last non-expanded input's)");
        }
        bs[i] = buf.sizes[i] == 1 ? 0 : buf.strides[i];
      }
      each(slice, [&](const std::vector<int64_t>& pos) {
        A& o = out[base + offset_of(pos, output.strides)];
        o = round_to<S>(o + buf.data[offset_of(pos, bs)]);
      });
    }
  }
  std::vector<int64_t> sizes, strides;
  for (int64_t i = 0; i < total; ++i) {
    if (sumdim[i]) continue;
    sizes.push_back(out_size[i]);
    strides.push_back(output.strides[i]);
  }
  Tensor result = empty_tensor(sizes, strides, t1.dtype);
  const int64_t n = output.numel();
  void* dst = result.data();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<A>) {
      store<S>(dst, i, static_cast<S>(static_cast<int64_t>(out[i])));
    } else if constexpr (std::is_same_v<S, A>) {
      store<S>(dst, i, out[i]);
    } else {
      store<S>(dst, i, Elem<S>::from(out[i]));
    }
  }
  return result;
}

}  // namespace

Tensor trilinear(const Tensor& i1, const Tensor& i2, const Tensor& i3, IntList expand1, IntList expand2,
                 IntList expand3, IntList sumdim, int64_t unroll_dim, const char* op) {
  expect_cpu_defined(i1, op, "i1");
  expect_cpu_defined(i2, op, "i2");
  expect_cpu_defined(i3, op, "i3");
  const int64_t total = i1.dim() + expand1.len;
  if (expand1.len < 0 || expand2.len < 0 || expand3.len < 0 || sumdim.len < 0) {
    fail_arg(op,
             expand1.len < 0   ? "expand1"
             : expand2.len < 0 ? "expand2"
             : expand3.len < 0 ? "expand3"
                               : "sumdim",
             "has a negative length");
  }
  if (total > 64) fail_arg(op, "expand1", "gives " + std::to_string(total) + " dims; at most 64 are supported");
  if (unroll_dim < 0 || unroll_dim >= total) {
    fail_arg(op, "unroll_dim",
             "is " + std::to_string(unroll_dim) + "; it must be in [0, " + std::to_string(total - 1) + "]");
  }
  const std::vector<bool> exp[3] = {dim_set(expand1, total, op, "expand1"), dim_set(expand2, total, op, "expand2"),
                                    dim_set(expand3, total, op, "expand3")};
  const std::vector<bool> sums = dim_set(sumdim, total, op, "sumdim");
  const int32_t dt = i1.dtype;
  if (i2.dtype != dt) {
    fail_arg(op, "i2", std::string("has dtype ") + dtype_name(i2.dtype) + ", 'i1' has " + dtype_name(dt));
  }
  if (i3.dtype != dt) {
    fail_arg(op, "i3", std::string("has dtype ") + dtype_name(i3.dtype) + ", 'i1' has " + dtype_name(dt));
  }
  Tensor out;
  dispatch_real(dt, false, op, "i1", [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      out = run<S, S>(i1, i2, i3, exp, sums, total, unroll_dim, op);
    } else if constexpr (std::is_same_v<S, BF16> || std::is_same_v<S, F16>) {
      out = run<S, float>(i1, i2, i3, exp, sums, total, unroll_dim, op);
    } else if constexpr (std::is_integral_v<S>) {
      out = run<S, uint64_t>(i1, i2, i3, exp, sums, total, unroll_dim, op);
    }
  });
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__trilinear(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
                                                    const int64_t* expand1, int64_t expand1_len_,
                                                    const int64_t* expand2, int64_t expand2_len_,
                                                    const int64_t* expand3, int64_t expand3_len_, const int64_t* sumdim,
                                                    int64_t sumdim_len_, int64_t unroll_dim, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& a = as_tensor(i1, "i1");
    const Tensor& b = as_tensor(i2, "i2");
    const Tensor& c = as_tensor(i3, "i3");
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    *out = new_handle(kernels::trilinear(a, b, c, {expand1, expand1_len_}, {expand2, expand2_len_},
                                         {expand3, expand3_len_}, {sumdim, sumdim_len_}, unroll_dim,
                                         "aoti_torch_cpu__trilinear"));
  });
}
