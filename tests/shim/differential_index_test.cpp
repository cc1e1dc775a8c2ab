// The differential suite for aoti_torch_cpu_index_Tensor (x[mask],
// x[:, idx], ...) and aoti_torch_cpu_masked_scatter (image embeddings merged
// into token embeddings), since aotrun-shim 1.7.
// Each case makes the same calls on real libtorch (AOTRUN_LIBTORCH) and on
// the shim and compares return codes, result sizes, strides and dtypes, and
// the result's elements byte for byte (both ops only move values). Covered:
// bool and uint8 masks of 1-3 dims at the front, middle and end, null
// entries, int64 and int32 indices, broadcast index tensors, adjacent and
// separated indexed dims, negative indices, empty masks and empty dims,
// every dtype, transposed, gapped, offset and broadcast (stride-0) inputs,
// random cases of all of these (AOTRUN_INDEX_FUZZ_CASES of each op, 400 by
// default, fixed seeds), and the calls both refuse. Skips, saying
// why, without libtorch; the ShimReference tests check the shim alone
// against naive loops, and its refusals' messages, and need no libtorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "differential.hpp"
#include "dtypes.hpp"

namespace {

using aotrun_shim_test::code;
using aotrun_shim_test::Dt;
using aotrun_shim_test::dt_name;
using aotrun_shim_test::encode;
using aotrun_shim_test::is_complex;
using aotrun_shim_test::is_float;
using aotrun_shim_test::providers;
using aotrun_shim_test::Side;

const std::vector<Dt> kAllDtypes = {Dt::F32, Dt::F64, Dt::BF16, Dt::F16,  Dt::I64, Dt::I32,
                                    Dt::I16, Dt::I8,  Dt::U8,   Dt::Bool, Dt::C64, Dt::C128};

struct Layout {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

std::vector<int64_t> row_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

Layout dense(const std::vector<int64_t>& sizes) { return {sizes, row_major(sizes)}; }

// Elements a view spans in its storage.
int64_t span_of(const Layout& l) {
  int64_t s = 1 + l.offset;
  for (size_t i = 0; i < l.sizes.size(); ++i) {
    if (l.sizes[i] == 0) return l.offset + 1;
    s += (l.sizes[i] - 1) * l.strides[i];
  }
  return s;
}

int64_t numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Distinct-ish values, exact in every dtype (integers in [-100, 99], halves
// for the floating ones).
std::vector<double> pattern(int64_t n, uint32_t seed, Dt d) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = static_cast<double>((i * 37 + seed * 11) % 200) - 100;
    if (is_float(d) || is_complex(d)) v[i] += (i % 2) * 0.5;
  }
  return v;
}

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint32_t>(hi - lo + 1)); }
  bool chance(double p) { return (next() & 0xffffff) < p * 0x1000000; }
};

// 0/1 values, about `density` of them 1.
std::vector<double> bits(int64_t n, Rng& g, double density) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = g.chance(density) ? 1 : 0;
  return v;
}

AtenTensorHandle make(Side& sd, const std::vector<double>& storage, Dt d, const Layout& l) {
  return sd.blob(encode(storage, d), l.sizes, l.strides, code(sd.a, d), l.offset);
}

// A handle's logical elements in row-major order, raw bytes.
std::string elements(const ShimApi& a, AtenTensorHandle h) {
  const TensorDesc d = describe(a, h);
  const size_t item = a.aoti_torch_dtype_element_size(d.dtype);
  void* data = nullptr;
  a.aoti_torch_get_data_ptr(h, &data);
  std::string out;
  out.reserve(static_cast<size_t>(d.numel) * item);
  for (int64_t i = 0; i < d.numel; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = d.dim - 1; k >= 0; --k) {
      off += (rem % d.sizes[k]) * d.strides[k];
      rem /= d.sizes[k];
    }
    out.append(static_cast<const char*>(data) + off * static_cast<int64_t>(item), item);
  }
  return out;
}

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string layout_str(const Layout& l) {
  return shape_str(l.sizes) + "/" + shape_str(l.strides) + (l.offset ? "+" + std::to_string(l.offset) : "");
}

using Call = std::function<AtenTensorHandle(Side&, int*)>;

// Runs `f` on both providers: the same return code and, on success, the
// same sizes, strides, dtype and elements.
void expect_agree(const Call& f, const std::string& what) {
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  int rt = -1, rs = -1;
  AtenTensorHandle ht = t.keep(f(t, &rt)), hs = s.keep(f(s, &rs));
  ASSERT_EQ(rs, rt) << what;
  if (rt != 0) return;
  ASSERT_NE(ht, nullptr) << what;
  ASSERT_NE(hs, nullptr) << what;
  const TensorDesc dt = describe(t.a, ht), ds = describe(s.a, hs);
  EXPECT_EQ(ds.sizes, dt.sizes) << what;
  EXPECT_EQ(ds.strides, dt.strides) << what;
  EXPECT_EQ(ds.dtype, dt.dtype) << what;
  if (ds.sizes == dt.sizes && ds.dtype == dt.dtype) {
    EXPECT_TRUE(elements(s.a, hs) == elements(t.a, ht)) << what << ": elements differ";
  }
}

// One entry of `indices`: none, a mask or an integer index tensor over the
// given view of `data`.
struct Ix {
  enum Kind { kNone, kMask, kInt } kind = kNone;
  Dt dt = Dt::I64;
  Layout view;
  std::vector<double> data;
};

Ix none() { return {}; }
Ix ints(std::vector<double> values, std::vector<int64_t> sizes, Dt dt = Dt::I64) {
  return {Ix::kInt, dt, dense(sizes), std::move(values)};
}
Ix ints_view(std::vector<double> storage, Layout view, Dt dt = Dt::I64) {
  return {Ix::kInt, dt, std::move(view), std::move(storage)};
}
Ix mask(const std::vector<int64_t>& sizes, Rng& g, double density = 0.5, Dt dt = Dt::Bool) {
  return {Ix::kMask, dt, dense(sizes), bits(numel(sizes), g, density)};
}

// self[indices] as Inductor calls it: an array of pointers to handles, null
// for None.
int call_index(Side& sd, AtenTensorHandle self, const std::vector<Ix>& ix, AtenTensorHandle* out) {
  std::vector<AtenTensorHandle> hs;
  for (const Ix& e : ix) hs.push_back(e.kind == Ix::kNone ? nullptr : make(sd, e.data, e.dt, e.view));
  std::vector<const AtenTensorHandle*> ptrs;
  for (const auto& h : hs) ptrs.push_back(h == nullptr ? nullptr : &h);
  return sd.a.aoti_torch_cpu_index_Tensor(self, ptrs.data(), static_cast<int64_t>(ptrs.size()), out);
}

std::string ix_str(const std::vector<Ix>& ix) {
  std::string s = "[";
  for (size_t i = 0; i < ix.size(); ++i) {
    s += i ? ", " : "";
    if (ix[i].kind == Ix::kNone) {
      s += "None";
    } else {
      s += std::string(ix[i].kind == Ix::kMask ? "mask " : "") + dt_name(ix[i].dt) + " " + layout_str(ix[i].view);
    }
  }
  return s + "]";
}

void check_index(const std::string& what, Dt dt, const Layout& self, const std::vector<Ix>& ix, uint32_t seed = 1) {
  const auto sdata = pattern(span_of(self), seed, dt);
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, sdata, dt, self);
        AtenTensorHandle out = nullptr;
        *rc = call_index(sd, x, ix, &out);
        return out;
      },
      what + ": " + dt_name(dt) + " self " + layout_str(self) + " indices " + ix_str(ix));
}

// --- index_Tensor against libtorch ------------------------------------------

TEST(DifferentialIndex, BoolMasksAtFrontMiddleAndEnd) {
  NEED_LIBTORCH();
  Rng g(1);
  const std::vector<int64_t> sizes = {3, 4, 5, 2};
  for (int64_t k = 1; k <= 3; ++k) {
    for (int64_t at = 0; at + k <= 4; ++at) {
      for (double density : {0.5, 0.0, 1.0}) {
        std::vector<Ix> ix;
        for (int64_t d = 0; d < at; ++d) ix.push_back(none());
        ix.push_back(mask(std::vector<int64_t>(sizes.begin() + at, sizes.begin() + at + k), g, density));
        // With and without trailing None entries (the same meaning).
        check_index("mask", Dt::F32, dense(sizes), ix);
        if (at + k < 4) {
          ix.push_back(none());
          check_index("mask, None", Dt::F32, dense(sizes), ix);
        }
      }
    }
  }
  // uint8 masks (deprecated by libtorch, still taken), a mask with an
  // integer index after it and before it.
  check_index("uint8 mask", Dt::F32, dense({4, 5}), {mask({4}, g, 0.5, Dt::U8)});
  check_index("uint8 2-d mask", Dt::I64, dense({4, 5, 3}), {none(), mask({5, 3}, g, 0.5, Dt::U8)});
  Rng g2(7);
  Ix m4 = mask({4}, g2, 1.0);  // 4 true: broadcasts with a [4] index
  check_index("mask then ints", Dt::F32, dense({4, 5, 3}), {m4, ints({0, -1, 2, 4}, {4})});
  check_index("ints then mask", Dt::F32, dense({5, 4, 3}), {ints({1, 0, -2, 3}, {4}), m4});
  check_index("mask, None, ints (separated)", Dt::F32, dense({4, 5, 3}), {m4, none(), ints({2, 1, 0, -3}, {4})});
  // Masked rows of a [tokens, hidden] matrix, as x[valid] selects tokens.
  check_index("token mask", Dt::BF16, dense({64, 32}), {mask({64}, g, 0.3)});
  check_index("batched token mask", Dt::F32, dense({2, 16, 8}), {mask({2, 16}, g, 0.6)});
}

TEST(DifferentialIndex, IntegerIndices) {
  NEED_LIBTORCH();
  const Layout x3 = dense({4, 5, 6});
  for (Dt it : {Dt::I64, Dt::I32}) {
    const std::string t = dt_name(it);
    check_index(t + " first dim", Dt::F32, x3, {ints({3, 0, -1, 2, 3}, {5}, it)});
    check_index(t + " middle dim", Dt::F32, x3, {none(), ints({4, -5, 1}, {3}, it)});
    check_index(t + " last dim", Dt::F32, x3, {none(), none(), ints({5, 0, -6, 2}, {2, 2}, it)});
    check_index(t + " 0-d index", Dt::F32, x3, {none(), ints({-2}, {}, it)});
    check_index(t + " two 0-d indices", Dt::F32, x3, {ints({1}, {}, it), ints({2}, {}, it)});
    check_index(t + " all dims", Dt::F32, x3, {ints({0, 3}, {2}, it), ints({4, 1}, {2}, it), ints({5, -1}, {2}, it)});
    check_index(t + " adjacent, broadcast [2,1] [3]", Dt::F32, x3,
                {none(), ints({0, 4}, {2, 1}, it), ints({5, 1, -2}, {3}, it)});
    check_index(t + " separated, broadcast [2,1] [3]", Dt::F32, x3,
                {ints({0, 3}, {2, 1}, it), none(), ints({5, 1, -2}, {3}, it)});
    check_index(t + " separated 0-d and [3]", Dt::F32, x3, {ints({1}, {}, it), none(), ints({0, 2, 4}, {3}, it)});
    check_index(t + " 2-d index", Dt::F32, x3, {none(), ints({0, 1, 2, 3, 4, 0}, {2, 3}, it)});
    check_index(t + " empty index", Dt::F32, x3, {none(), ints({}, {0}, it)});
    check_index(t + " empty 2-d index", Dt::F32, x3, {ints({}, {2, 0}, it), none(), ints({1}, {1}, it)});
    // Index tensors that are views: transposed, gapped, offset, expanded.
    const std::vector<double> st = {0, 1, 2, 3, 4, -1, -2, -3, -4, -5, 3, 2};
    check_index(t + " transposed index", Dt::F32, x3, {none(), ints_view(st, {{3, 2}, {1, 3}}, it)});
    check_index(t + " gapped offset index", Dt::F32, x3, {none(), ints_view(st, {{2, 3}, {6, 2}, 1}, it)});
    check_index(t + " expanded index", Dt::F32, x3, {none(), ints_view(st, {{3, 4}, {0, 1}}, it)});
    check_index(t + " expanded index broadcast with another", Dt::F32, x3,
                {ints_view(st, {{3, 1}, {0, 1}}, it), ints_view(st, {{1, 4}, {4, 1}, 1}, it)});
    check_index(t + " expanded 0-stride separated", Dt::F32, dense({3, 4, 5, 6}),
                {none(), ints_view(st, {{2, 3}, {0, 1}}, it), none(), ints_view(st, {{2, 3}, {1, 0}}, it)});
    check_index(t + " transposed pair, separated", Dt::F32, dense({6, 3, 6}),
                {ints_view(st, {{3, 2}, {1, 3}}, it), none(), ints_view(st, {{3, 2}, {1, 3}, 1}, it)});
    check_index(t + " size-1 dims with odd strides", Dt::F32, dense({4, 5, 6}),
                {none(), ints_view(st, {{1, 3, 1}, {7, 2, 5}}, it)});
  }
  // self as views: transposed, permuted, gapped and offset, expanded.
  const auto idx = ints({2, 0, -1}, {3});
  for (const Layout& self : std::vector<Layout>{{{4, 5}, {1, 4}},
                                                {{4, 5, 6}, {1, 24, 4}},
                                                {{4, 5, 6}, {60, 12, 2}, 3},
                                                {{4, 5, 6}, {0, 6, 1}},
                                                {{4, 5, 6}, {6, 0, 1}},
                                                {{4, 5, 6}, {1, 0, 0}}}) {
    check_index("view self, first", Dt::F32, self, {idx});
    check_index("view self, second", Dt::F32, self, {none(), idx});
    check_index("view self, last", Dt::F32, self, {none(), none(), idx});
    check_index("view self, separated", Dt::F32, self, {idx, none(), idx});
    Rng g(3);
    std::vector<Ix> m = {none(), mask({self.sizes[1]}, g, 0.5)};
    check_index("view self, mask", Dt::F32, self, m);
  }
}

TEST(DifferentialIndex, EveryDtype) {
  NEED_LIBTORCH();
  Rng g(5);
  std::vector<Dt> dts = kAllDtypes;
  dts.push_back(Dt::U16);
  for (Dt dt : dts) {
    check_index("dtype, mask", dt, dense({6, 4}), {mask({6}, g, 0.5)});
    check_index("dtype, 2-d mask", dt, {{6, 4}, {1, 6}}, {mask({6, 4}, g, 0.5)});
    check_index("dtype, separated ints", dt, dense({3, 4, 5}), {ints({0, -1}, {2}), none(), ints({4, 2}, {2})});
    check_index("dtype, middle ints", dt, {{3, 4, 5}, {40, 10, 2}, 1}, {none(), ints({3, 1, 0}, {3})});
  }
}

TEST(DifferentialIndex, EmptySelfAndEmptyResults) {
  NEED_LIBTORCH();
  Rng g(9);
  check_index("empty mask", Dt::F32, dense({4, 5}), {mask({4}, g, 0.0)});
  check_index("empty 2-d mask", Dt::F32, dense({4, 5, 2}), {none(), mask({5, 2}, g, 0.0)});
  check_index("mask over a size-0 dim", Dt::F32, dense({0, 5}), {mask({0}, g, 0.5)});
  check_index("ints into a non-indexed empty dim", Dt::F32, dense({0, 5}), {none(), ints({1, 4}, {2})});
  // libtorch checks indices as it reads them: none read, none refused.
  check_index("out of range, nothing read", Dt::F32, dense({0, 5}), {none(), ints({7}, {1})});
  check_index("empty index on size-0 dim", Dt::F32, dense({0, 5}), {ints({}, {0})});
  check_index("ints into a size-0 dim (refused)", Dt::F32, dense({0, 5}), {ints({0}, {1})});
  check_index("empty self 3-d", Dt::I32, dense({2, 0, 3}), {none(), none(), ints({2, 0}, {2})});
  check_index("empty self 3-d, separated", Dt::I32, dense({2, 0, 3}), {ints({1}, {1}), none(), ints({2, 0}, {2})});
  // No index tensor: refused for a non-empty self (below), an empty one
  // comes back in libtorch's iterator layout. No entries at all: refused.
  check_index("no index tensor, empty self", Dt::F32, {{5, 0, 2}, {1, 10, 5}}, {none()});
  check_index("no index tensor, empty self 2-d", Dt::F32, dense({4, 0}), {none(), none()});
  check_index("no entries, empty self (refused)", Dt::F32, dense({4, 0}), {});
}

TEST(DifferentialIndex, CallsBothRefuse) {
  NEED_LIBTORCH();
  Rng g(11);
  const Layout x = dense({4, 5});
  check_index("out of range", Dt::F32, x, {ints({0, 4}, {2})});
  check_index("out of range negative", Dt::F32, x, {ints({-5}, {1})});
  check_index("out of range, dim 1", Dt::F32, x, {none(), ints({5}, {1})});
  check_index("out of range, int32", Dt::F32, x, {none(), ints({1, -6}, {2}, Dt::I32)});
  check_index("mask of the wrong size", Dt::F32, x, {mask({5}, g)});
  check_index("2-d mask of the wrong shape", Dt::F32, x, {mask({4, 4}, g)});
  check_index("mask of the wrong size, second dim", Dt::F32, x, {none(), mask({4}, g)});
  check_index("mask past the last dim", Dt::F32, x, {none(), mask({5, 2}, g)});
  check_index("too many indices", Dt::F32, x, {ints({0}, {1}), ints({0}, {1}), ints({0}, {1})});
  check_index("float index", Dt::F32, x, {{Ix::kInt, Dt::F32, dense({2}), {0, 1}}});
  check_index("int16 index", Dt::F32, x, {{Ix::kInt, Dt::I16, dense({2}), {0, 1}}});
  check_index("shapes that do not broadcast", Dt::F32, x, {ints({0, 1}, {2}), ints({0, 1, 2}, {3})});
  check_index("no index tensor", Dt::F32, x, {none(), none()});
  check_index("no entries", Dt::F32, x, {});
  check_index("0-d self", Dt::F32, dense({}), {ints({0}, {1})});
}

// Random selves, masks and index tensors in random layouts (the layout of
// libtorch's result depends on all their strides).
Layout random_view(Rng& g, const std::vector<int64_t>& sizes) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  Layout l{sizes, row_major(sizes)};
  switch (g.in(0, 4)) {
    case 0: break;
    case 1: {  // a permutation of a dense layout
      std::vector<int64_t> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[g.in(0, i)]);
      int64_t acc = 1;
      for (int64_t i = n - 1; i >= 0; --i) {
        l.strides[perm[i]] = acc;
        acc *= std::max<int64_t>(sizes[perm[i]], 1);
      }
      break;
    }
    case 2: {  // every other element, offset
      std::vector<int64_t> doubled(sizes);
      for (auto& s : doubled) s *= 2;
      l.strides = row_major(doubled);
      for (auto& s : l.strides) s *= 2;
      l.offset = 1;
      break;
    }
    case 3:  // broadcast dims (stride 0)
      for (int64_t i = 0; i < n; ++i)
        if (g.chance(0.5)) l.strides[i] = 0;
      break;
    default:  // size-1 dims with arbitrary strides
      for (int64_t i = 0; i < n; ++i)
        if (sizes[i] == 1) l.strides[i] = g.in(1, 9);
      break;
  }
  return l;
}

// How many random cases (AOTRUN_INDEX_FUZZ_CASES, else `fallback`); the
// seeds are fixed.
int fuzz_cases(int fallback) {
  const char* env = std::getenv("AOTRUN_INDEX_FUZZ_CASES");
  return env != nullptr && *env != '\0' ? std::atoi(env) : fallback;
}

TEST(DifferentialIndex, RandomCases) {
  NEED_LIBTORCH();
  Rng g(2024);
  for (int c = 0, n = fuzz_cases(400); c < n; ++c) {
    const int64_t nd = g.in(1, 4);
    std::vector<int64_t> sizes(nd);
    for (auto& s : sizes) s = g.chance(0.05) ? 0 : g.in(1, 5);
    const Layout self = random_view(g, sizes);
    std::vector<Ix> ix;
    const int64_t entries = g.in(1, nd);
    for (int64_t d = 0; d < entries;) {
      const int64_t r = g.in(0, 9);
      if (r < 3) {
        ix.push_back(none());
        ++d;
      } else if (r < 6) {
        const int64_t k = g.in(1, std::min<int64_t>(3, entries - d));
        const std::vector<int64_t> ms(sizes.begin() + d, sizes.begin() + d + k);
        const Layout v = random_view(g, ms);
        ix.push_back({Ix::kMask, g.chance(0.2) ? Dt::U8 : Dt::Bool, v, bits(span_of(v), g, 0.5)});
        d += k;
      } else {
        std::vector<int64_t> is(static_cast<size_t>(g.in(0, 3)));
        for (auto& s : is) s = g.in(1, 3);
        const Layout v = random_view(g, is);
        std::vector<double> vals(static_cast<size_t>(span_of(v)));
        for (auto& x : vals) x = sizes[d] > 0 ? static_cast<double>(g.in(-sizes[d], sizes[d] - 1)) : 0;
        ix.push_back({Ix::kInt, g.chance(0.5) ? Dt::I32 : Dt::I64, v, vals});
        ++d;
      }
    }
    check_index("random case " + std::to_string(c), c % 3 == 0 ? Dt::BF16 : Dt::F32, self, ix, c);
  }
}

TEST(DifferentialIndex, LargeMasksAndIndicesSplitOverThreads) {
  NEED_LIBTORCH();
  Rng g(13);
  check_index("rows of a large matrix", Dt::F32, dense({4096, 96}), {mask({4096}, g, 0.5)});
  check_index("elements of a large matrix", Dt::F32, dense({512, 512}), {mask({512, 512}, g, 0.3)});
  check_index("columns of a transposed matrix", Dt::F32, {{512, 700}, {1, 512}}, {none(), mask({700}, g, 0.4)});
  std::vector<double> rows(3000);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<double>((i * 7919) % 2048) - 1024;
  check_index("gather rows", Dt::BF16, dense({2048, 128}), {ints(rows, {3000})});
}

// --- masked_scatter against libtorch ----------------------------------------

struct Ms {
  Dt dt = Dt::F32;
  Layout self, mask, source;
  double density = 0.5;
  Dt mask_dt = Dt::Bool;
  Dt source_dt = Dt::F32;  // set to dt unless a test says otherwise
  bool source_dt_set = false;
};

void check_scatter(const std::string& what, const Ms& c, uint32_t seed = 1) {
  Rng g(seed);
  const auto sdata = pattern(span_of(c.self), seed, c.dt);
  const auto mdata = bits(span_of(c.mask), g, c.density);
  const Dt sdt = c.source_dt_set ? c.source_dt : c.dt;
  const auto srcdata = pattern(span_of(c.source), seed + 5, sdt);
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, sdata, c.dt, c.self);
        AtenTensorHandle m = make(sd, mdata, c.mask_dt, c.mask);
        AtenTensorHandle s = make(sd, srcdata, sdt, c.source);
        AtenTensorHandle out = nullptr;
        *rc = sd.a.aoti_torch_cpu_masked_scatter(x, m, s, &out);
        return out;
      },
      what + ": " + dt_name(c.dt) + " self " + layout_str(c.self) + " mask " + dt_name(c.mask_dt) + " " +
          layout_str(c.mask) + " source " + dt_name(sdt) + " " + layout_str(c.source));
}

TEST(DifferentialMaskedScatter, BroadcastMasksAndLayouts) {
  NEED_LIBTORCH();
  const Layout src = dense({64});
  std::vector<std::pair<std::string, Ms>> cases = {
      {"same shape", {Dt::F32, dense({3, 4}), dense({3, 4}), src}},
      {"mask broadcast over rows", {Dt::F32, dense({3, 4}), dense({4}), src}},
      {"mask broadcast over columns", {Dt::F32, dense({3, 4}), dense({3, 1}), src}},
      {"mask larger than self", {Dt::F32, dense({4}), dense({3, 4}), src}},
      {"both broadcast", {Dt::F32, dense({3, 1}), dense({1, 4}), src}},
      {"transposed self", {Dt::F32, {{3, 4}, {1, 3}}, dense({3, 4}), src}},
      {"gapped offset self, transposed mask", {Dt::F32, {{3, 4}, {12, 2}, 1}, {{3, 4}, {1, 3}}, src}},
      {"expanded self", {Dt::F32, {{3, 4}, {0, 1}}, dense({3, 4}), src}},
      {"expanded mask", {Dt::F32, dense({3, 4}), {{3, 4}, {1, 0}}, src}},
      {"permuted 3-d", {Dt::F32, {{2, 3, 4}, {1, 8, 2}}, {{2, 3, 4}, {12, 1, 3}}, src}},
      {"embeddings [1, 6, 4], mask [1, 6, 1] expanded", {Dt::F32, dense({1, 6, 4}), {{1, 6, 4}, {6, 1, 0}}, src}},
      {"0-d", {Dt::F32, dense({}), dense({}), dense({1})}},
      {"0-d source", {Dt::F32, dense({}), dense({}), dense({})}},
      {"0-d self, 1-d mask", {Dt::F32, dense({}), dense({5}), src}},
      {"empty", {Dt::F32, dense({0, 4}), dense({4}), dense({0})}},
      {"empty source, no true", {Dt::F32, dense({3, 4}), dense({3, 4}), dense({0}), 0.0}},
      {"source exactly as large", {Dt::F32, dense({2, 3}), dense({2, 3}), dense({6}), 1.0}},
      {"source 2-d transposed", {Dt::F32, dense({3, 4}), dense({3, 4}), {{4, 4}, {1, 4}}}},
      {"source gapped", {Dt::F32, dense({3, 4}), dense({3, 4}), {{16}, {3}, 2}}},
      {"source expanded", {Dt::F32, dense({3, 4}), dense({3, 4}), {{4, 4}, {0, 1}}}},
  };
  for (auto& [what, c] : cases) {
    for (double density : {c.density, 0.0, 1.0}) {
      Ms d = c;
      d.density = density;
      check_scatter(what + " density " + std::to_string(density), d);
    }
  }
}

TEST(DifferentialMaskedScatter, EveryDtype) {
  NEED_LIBTORCH();
  for (Dt dt : kAllDtypes) {
    check_scatter("dtype", {dt, dense({4, 5}), dense({5}), dense({20})});
    check_scatter("dtype, transposed self", {dt, {{4, 5}, {1, 4}}, dense({4, 5}), dense({20})}, 3);
  }
}

TEST(DifferentialMaskedScatter, CallsBothRefuse) {
  NEED_LIBTORCH();
  Ms small{Dt::F32, dense({3, 4}), dense({3, 4}), dense({3}), 1.0};
  check_scatter("source too small", small);
  Ms u8 = {Dt::F32, dense({3, 4}), dense({3, 4}), dense({12})};
  u8.mask_dt = Dt::U8;
  check_scatter("uint8 mask", u8);
  Ms fm = u8;
  fm.mask_dt = Dt::F32;
  check_scatter("float mask", fm);
  Ms mixed = {Dt::F32, dense({3, 4}), dense({3, 4}), dense({12})};
  mixed.source_dt = Dt::F64;
  mixed.source_dt_set = true;
  check_scatter("source of another dtype", mixed);
  check_scatter("mask that does not broadcast", {Dt::F32, dense({3, 4}), dense({3}), dense({12})});
  check_scatter("uint16 (libtorch's masked_scatter has no kernel)", {Dt::U16, dense({3, 4}), dense({4}), dense({12})});
}

TEST(DifferentialMaskedScatter, RandomCases) {
  NEED_LIBTORCH();
  Rng g(77);
  for (int c = 0, n = fuzz_cases(400); c < n; ++c) {
    const int64_t nd = g.in(0, 4);
    std::vector<int64_t> shape(nd);
    for (auto& s : shape) s = g.chance(0.04) ? 0 : g.in(1, 5);
    // self and mask: the shape with some dims 1 or dropped from the front.
    auto part = [&](int64_t drop) {
      std::vector<int64_t> s(shape.begin() + drop, shape.end());
      for (auto& x : s)
        if (g.chance(0.25)) x = 1;
      return s;
    };
    Ms m;
    m.dt = c % 4 == 0 ? Dt::I16 : Dt::F32;
    m.self = random_view(g, part(nd > 0 && g.chance(0.3) ? g.in(1, nd) : 0));
    m.mask = random_view(g, part(nd > 0 && g.chance(0.3) ? g.in(1, nd) : 0));
    const int64_t most = numel(shape);
    const int64_t src_n = g.chance(0.1) ? g.in(0, std::max<int64_t>(most / 2, 0)) : most + g.in(0, 3);
    m.source = g.chance(0.5) ? dense({src_n}) : random_view(g, {src_n});
    m.density = g.in(0, 4) / 4.0;
    check_scatter("random case " + std::to_string(c), m, c);
  }
}

TEST(DifferentialMaskedScatter, LargeSplitOverThreads) {
  NEED_LIBTORCH();
  check_scatter("image embeddings into tokens",
                {Dt::F32, dense({2, 512, 256}), {{2, 512, 256}, {512, 1, 0}}, dense({2 * 512 * 256}), 0.25});
  check_scatter("large, transposed self",
                {Dt::BF16, {{256, 1024}, {1, 256}}, dense({256, 1024}), dense({300000}), 0.5});
}

// --- the shim alone against naive loops (no libtorch needed) ----------------

struct ShimCase {
  const ShimApi& a;
  Side sd;
  ShimCase() : a(aotrun_shim_test::shim_only().api), sd(aotrun_shim_test::shim_only().api, "shim") {}
  std::string last_error() const { return aotrun_shim_test::shim_only().last_error(); }
};

#define NEED_SHIM()                                       \
  do {                                                    \
    ASSERT_EQ(aotrun_shim_test::shim_only().problem, ""); \
  } while (0)

std::vector<double> f64_values(const ShimApi& a, AtenTensorHandle h) { return values(a, h); }

TEST(ShimReference, IndexMatchesLoops) {
  NEED_SHIM();
  ShimCase c;
  // x [4, 5, 6] float64, x[i][j][k] = 100 i + 10 j + k, as a transposed view.
  std::vector<double> store(120);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 6; ++k) store[k * 20 + j * 4 + i] = 100 * i + 10 * j + k;
  const Layout xv{{4, 5, 6}, {1, 4, 20}};
  auto x = [&] { return make(c.sd, store, Dt::F64, xv); };
  auto run = [&](const std::vector<Ix>& ix, std::vector<int64_t> want_sizes, const std::vector<double>& want) {
    AtenTensorHandle out = nullptr;
    ASSERT_EQ(call_index(c.sd, x(), ix, &out), 0) << c.last_error();
    c.sd.keep(out);
    EXPECT_EQ(describe(c.a, out).sizes, want_sizes) << ix_str(ix);
    EXPECT_EQ(f64_values(c.a, out), want) << ix_str(ix);
  };
  // x[:, mask]: mask over dim 1.
  const std::vector<double> m1 = {1, 0, 1, 1, 0};
  {
    std::vector<double> want;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        if (m1[j] != 0)
          for (int k = 0; k < 6; ++k) want.push_back(100 * i + 10 * j + k);
    run({none(), {Ix::kMask, Dt::Bool, dense({5}), m1}}, {4, 3, 6}, want);
  }
  // x[:, mask2d] over dims 1 and 2.
  std::vector<double> m2(30);
  for (int q = 0; q < 30; ++q) m2[q] = (q * 7) % 3 == 0;
  {
    std::vector<double> want;
    int n = 0;
    for (int q = 0; q < 30; ++q) n += m2[q] != 0;
    for (int i = 0; i < 4; ++i)
      for (int q = 0; q < 30; ++q)
        if (m2[q] != 0) want.push_back(100 * i + 10 * (q / 6) + q % 6);
    run({none(), {Ix::kMask, Dt::Bool, dense({5, 6}), m2}}, {4, n}, want);
  }
  // Separated: x[a, :, b] with a int32 [2, 3] (negative values), b [3]:
  // the index dims first, [2, 3, 5].
  const std::vector<double> a = {0, -1, 2, 3, -4, 1}, b = {5, -6, 2};
  {
    std::vector<double> want;
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 3; ++q)
        for (int j = 0; j < 5; ++j) {
          const int i = static_cast<int>(a[p * 3 + q] < 0 ? a[p * 3 + q] + 4 : a[p * 3 + q]);
          const int k = static_cast<int>(b[q] < 0 ? b[q] + 6 : b[q]);
          want.push_back(100 * i + 10 * j + k);
        }
    run({ints(a, {2, 3}, Dt::I32), none(), ints(b, {3})}, {2, 3, 5}, want);
  }
  // Adjacent: x[:, c, d] with c [2, 1], d [3]: in place, [4, 2, 3].
  const std::vector<double> cc = {4, -5}, dd = {0, 5, 3};
  {
    std::vector<double> want;
    for (int i = 0; i < 4; ++i)
      for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 3; ++q) want.push_back(100 * i + 10 * (cc[p] < 0 ? cc[p] + 5 : cc[p]) + dd[q]);
    run({none(), ints(cc, {2, 1}), ints(dd, {3})}, {4, 2, 3}, want);
  }
  // Large, split over the team: x [8192, 64] float32 with a [8192] mask.
  {
    const int64_t rows = 8192, cols = 64;
    std::vector<double> big(static_cast<size_t>(rows * cols));
    for (size_t q = 0; q < big.size(); ++q) big[q] = static_cast<double>(q % 4096);
    Rng g(17);
    const auto mb = bits(rows, g, 0.5);
    AtenTensorHandle bx = make(c.sd, big, Dt::F32, dense({rows, cols}));
    AtenTensorHandle mh = make(c.sd, mb, Dt::Bool, dense({rows}));
    AtenTensorHandle out = nullptr;
    const AtenTensorHandle* p = &mh;
    ASSERT_EQ(c.a.aoti_torch_cpu_index_Tensor(bx, &p, 1, &out), 0) << c.last_error();
    c.sd.keep(out);
    std::vector<double> want;
    for (int64_t r = 0; r < rows; ++r)
      if (mb[r] != 0)
        for (int64_t k = 0; k < cols; ++k) want.push_back(big[r * cols + k]);
    EXPECT_TRUE(values(c.a, out) == want);
    EXPECT_EQ(describe(c.a, out).sizes, (std::vector<int64_t>{static_cast<int64_t>(want.size()) / cols, cols}));
  }
}

TEST(ShimReference, MaskedScatterMatchesLoops) {
  NEED_SHIM();
  ShimCase c;
  // self [3, 1, 4] transposed-ish view broadcast with mask [2, 4] -> [3, 2, 4].
  std::vector<double> s(12);
  for (int q = 0; q < 12; ++q) s[q] = q + 1;
  const Layout sv{{3, 1, 4}, {1, 7, 3}};
  const std::vector<double> m = {1, 0, 0, 1, 0, 1, 1, 0};
  std::vector<double> src(40);
  for (int q = 0; q < 40; ++q) src[q] = -(q + 1);
  AtenTensorHandle out = nullptr;
  ASSERT_EQ(c.a.aoti_torch_cpu_masked_scatter(make(c.sd, s, Dt::F64, sv), make(c.sd, m, Dt::Bool, dense({2, 4})),
                                              make(c.sd, src, Dt::F64, {{5, 8}, {1, 5}}), &out),
            0)
      << c.last_error();
  c.sd.keep(out);
  // The source view {{5, 8}, {1, 5}}: element (r, q) at storage r + 5 q, read
  // in row-major order.
  std::vector<double> want;
  int k = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int l = 0; l < 4; ++l) {
        if (m[j * 4 + l] != 0) {
          const int r = k / 8, q = k % 8;
          want.push_back(src[r + 5 * q]);
          ++k;
        } else {
          want.push_back(s[i + l * 3]);
        }
      }
  const TensorDesc d = describe(c.a, out);
  EXPECT_EQ(d.sizes, (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(d.strides, (std::vector<int64_t>{8, 4, 1}));
  EXPECT_EQ(values(c.a, out), want);
  // Large, split over the team: [2, 1024, 256] float32, a quarter masked.
  {
    const std::vector<int64_t> shape = {2, 1024, 256};
    const int64_t n = numel(shape);
    std::vector<double> base(static_cast<size_t>(n)), source(static_cast<size_t>(n));
    for (int64_t q = 0; q < n; ++q) base[q] = static_cast<double>(q % 1000), source[q] = -static_cast<double>(q % 999);
    Rng g(23);
    const auto mb = bits(n, g, 0.25);
    AtenTensorHandle big = nullptr;
    ASSERT_EQ(c.a.aoti_torch_cpu_masked_scatter(make(c.sd, base, Dt::F32, dense(shape)),
                                                make(c.sd, mb, Dt::Bool, dense(shape)),
                                                make(c.sd, source, Dt::F32, dense({n})), &big),
              0)
        << c.last_error();
    c.sd.keep(big);
    std::vector<double> expect(static_cast<size_t>(n));
    int64_t at = 0;
    for (int64_t q = 0; q < n; ++q) expect[q] = mb[q] != 0 ? source[at++] : base[q];
    EXPECT_TRUE(values(c.a, big) == expect);
  }
}

// A call refused with code 1 and a message naming the op and the argument
// (and `also`, when given).
void expect_refused(const ShimCase& c, int rc, const std::string& op, const std::string& arg,
                    const std::string& also = "") {
  const std::string msg = c.last_error();
  EXPECT_EQ(rc, 1) << op << " " << arg << " " << also << " (last error: " << msg << ")";
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument '" + arg + "'"), std::string::npos) << msg;
  if (!also.empty()) {
    EXPECT_NE(msg.find(also), std::string::npos) << msg;
  }
}

TEST(ShimReference, IndexAndMaskedScatterRefusalsNameOpAndArgument) {
  NEED_SHIM();
  ShimCase c;
  const std::string op = "aoti_torch_cpu_index_Tensor";
  Rng g(31);
  AtenTensorHandle x = make(c.sd, pattern(20, 1, Dt::F32), Dt::F32, dense({4, 5}));
  AtenTensorHandle out = nullptr;
  auto idx = [&](const std::vector<Ix>& ix) { return call_index(c.sd, x, ix, &out); };
  expect_refused(c, idx({ints({0, 7}, {2})}), op, "indices", "index 7 is out of bounds for dimension 0 with size 4");
  expect_refused(c, idx({none(), ints({-6}, {1})}), op, "indices",
                 "index -6 is out of bounds for dimension 1 with size 5");
  expect_refused(c, idx({mask({5}, g)}), op, "indices", "does not match");
  expect_refused(c, idx({none(), mask({5, 2}, g)}), op, "indices", "too many indices");
  expect_refused(c, idx({mask({4, 5}, g), none()}), op, "indices", "too many indices");  // libtorch: a malformed result
  expect_refused(c, idx({ints({0}, {1}), ints({0}, {1}), ints({0}, {1})}), op, "indices", "too many indices");
  expect_refused(c, idx({{Ix::kMask, Dt::Bool, dense({}), {1}}}), op, "indices", "0-d mask");
  expect_refused(c, idx({{Ix::kInt, Dt::F32, dense({1}), {0}}}), op, "indices", "float32");
  expect_refused(c, idx({ints({0, 1}, {2}), ints({0, 1, 2}, {3})}), op, "indices", "broadcast");
  expect_refused(c, idx({none(), none()}), op, "indices");
  expect_refused(c, idx({}), op, "indices");
  expect_refused(c, call_index(c.sd, make(c.sd, {0}, Dt::F32, dense({0, 5})), {ints({0}, {1})}, &out), op, "indices",
                 "size 0");
  // Null arguments.
  AtenTensorHandle i0 = make(c.sd, {0}, Dt::I64, dense({1}));
  const AtenTensorHandle* one[1] = {&i0};
  expect_refused(c, c.a.aoti_torch_cpu_index_Tensor(nullptr, one, 1, &out), op, "self");
  expect_refused(c, c.a.aoti_torch_cpu_index_Tensor(x, one, 1, nullptr), op, "ret0");
  expect_refused(c, c.a.aoti_torch_cpu_index_Tensor(x, nullptr, 1, &out), op, "indices");
  expect_refused(c, c.a.aoti_torch_cpu_index_Tensor(x, one, -1, &out), op, "indices_len_");
  AtenTensorHandle null_handle = nullptr;
  const AtenTensorHandle* bad[1] = {&null_handle};
  expect_refused(c, c.a.aoti_torch_cpu_index_Tensor(x, bad, 1, &out), op, "indices", "null tensor handle");
  EXPECT_EQ(out, nullptr);  // nothing made by a refused call

  const std::string ms = "aoti_torch_cpu_masked_scatter";
  AtenTensorHandle m = make(c.sd, bits(20, g, 1.0), Dt::Bool, dense({4, 5}));
  AtenTensorHandle src = make(c.sd, pattern(30, 2, Dt::F32), Dt::F32, dense({30}));
  expect_refused(
      c, c.a.aoti_torch_cpu_masked_scatter(x, m, make(c.sd, pattern(19, 2, Dt::F32), Dt::F32, dense({19})), &out), ms,
      "source", "fewer than the 20 true");
  expect_refused(c,
                 c.a.aoti_torch_cpu_masked_scatter(x, make(c.sd, bits(20, g, 1.0), Dt::U8, dense({4, 5})), src, &out),
                 ms, "mask", "bool");
  expect_refused(
      c, c.a.aoti_torch_cpu_masked_scatter(x, m, make(c.sd, pattern(30, 2, Dt::F64), Dt::F64, dense({30})), &out), ms,
      "source", "float64");
  expect_refused(c, c.a.aoti_torch_cpu_masked_scatter(x, make(c.sd, bits(4, g, 1.0), Dt::Bool, dense({4})), src, &out),
                 ms, "mask", "broadcast");
  AtenTensorHandle u16 = make(c.sd, pattern(20, 1, Dt::U16), Dt::U16, dense({4, 5}));
  expect_refused(
      c, c.a.aoti_torch_cpu_masked_scatter(u16, m, make(c.sd, pattern(30, 2, Dt::U16), Dt::U16, dense({30})), &out), ms,
      "self", "uint16");
  expect_refused(c, c.a.aoti_torch_cpu_masked_scatter(nullptr, m, src, &out), ms, "self");
  expect_refused(c, c.a.aoti_torch_cpu_masked_scatter(x, nullptr, src, &out), ms, "mask");
  expect_refused(c, c.a.aoti_torch_cpu_masked_scatter(x, m, nullptr, &out), ms, "source");
  expect_refused(c, c.a.aoti_torch_cpu_masked_scatter(x, m, src, nullptr), ms, "ret0");
  EXPECT_EQ(out, nullptr);
}

}  // namespace
