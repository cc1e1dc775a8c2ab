// The differential suite for the shim's fallback kernels: sort_stable, topk,
// cumprod, searchsorted/bucketize, nonzero, masked_select,
// repeat_interleave, scatter (src, value, reduce); since aotrun-shim 1.3
// also _weight_int8pack_mm, transposed convolution, baddbmm_out,
// _cdist_forward, kthvalue and _embedding_bag; since 1.4 mkldnn_rnn_layer
// (LSTM).
// Each case makes the same calls on real libtorch (AOTRUN_LIBTORCH) and on
// the shim and compares return codes, sizes, strides, dtypes and values
// (exactly, NaN equal to NaN, for everything but floating products, sums
// and means, which get assert_close's tolerances). Ties, NaN, descending
// orders, negative dims, empty and 0-d tensors and non-contiguous inputs are
// covered. Skips, saying why, without libtorch; the ShimReference tests
// check the shim alone against naive loops and need no libtorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
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
using aotrun_shim_test::is_float;
using aotrun_shim_test::providers;
using aotrun_shim_test::Side;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A blob tensor of dtype d over `storage` (elements as doubles; NaN and ±inf
// become 0 for integer dtypes).
AtenTensorHandle make(Side& sd, std::vector<double> storage, Dt d, std::vector<int64_t> sizes,
                      std::vector<int64_t> strides, int64_t offset = 0) {
  if (!is_float(d)) {
    for (double& x : storage) {
      if (std::isnan(x) || std::isinf(x)) x = 0;
    }
  }
  return sd.blob(encode(storage, d), std::move(sizes), std::move(strides), code(sd.a, d), offset);
}

std::vector<int64_t> row_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

// Elements a view of these sizes/strides/offset spans in its storage.
int64_t span_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset = 0) {
  int64_t s = 1 + offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return offset + 1;
    s += (sizes[i] - 1) * strides[i];
  }
  return s;
}

// n values from a small set (many ties), with NaN at every `nan_every`-th
// position when > 0; deterministic in `seed`.
std::vector<double> tied(int64_t n, uint32_t seed, int levels, int nan_every = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = static_cast<double>(static_cast<int>((s >> 9) % (2 * levels + 1)) - levels) * 0.5;
    if (nan_every > 0 && i % nan_every == nan_every - 1) v[i] = kNaN;
  }
  return v;
}

// Distinct-ish values in [lo, hi).
std::vector<double> spread(int64_t n, uint32_t seed, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2246822519u + 3;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = lo + (hi - lo) * static_cast<double>((s >> 8) & 0xffff) / 65536.0;
  }
  return v;
}

struct Tol {
  double rtol = 0, atol = 0;
};
const Tol kExact{};
Tol tol_for(Dt d) {
  if (d == Dt::BF16) return {1.6e-2, 1e-5};
  if (d == Dt::F32) return {1.3e-6, 1e-5};
  if (d == Dt::F64) return {1e-7, 1e-7};
  return kExact;
}

// "" when equal within tol (NaN matches NaN), else the first difference.
std::string compare(const std::vector<double>& x, const std::vector<double>& y, Tol tol) {
  if (x.size() != y.size()) return "sizes differ: " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;
    if (!(std::fabs(x[i] - y[i]) <= tol.atol + tol.rtol * std::fabs(y[i]))) {
      return "element " + std::to_string(i) + ": shim " + std::to_string(x[i]) + " vs libtorch " + std::to_string(y[i]);
    }
  }
  return "";
}

std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < 64; ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s + (v.size() > 64 ? " ...]" : "]");
}

using Call = std::function<std::vector<AtenTensorHandle>(Side&, int*)>;

// Runs `f` on both providers: same return code and, on success, the same
// results (tols[i] for result i, exact when absent).
void expect_agree(const Call& f, const std::string& what, std::vector<Tol> tols = {}, bool compare_strides = true) {
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  int rt = -1, rs = -1;
  const std::vector<AtenTensorHandle> ht = f(t, &rt), hs = f(s, &rs);
  ASSERT_EQ(rs, rt) << what;
  if (rt != 0) return;
  ASSERT_EQ(hs.size(), ht.size()) << what;
  for (size_t i = 0; i < ht.size(); ++i) {
    ASSERT_NE(ht[i], nullptr) << what;
    ASSERT_NE(hs[i], nullptr) << what;
    const TensorDesc dt = describe(t.a, ht[i]), ds = describe(s.a, hs[i]);
    EXPECT_EQ(ds.sizes, dt.sizes) << what << " result " << i;
    if (compare_strides) {
      EXPECT_EQ(ds.strides, dt.strides) << what << " result " << i;
    }
    EXPECT_EQ(ds.dtype, dt.dtype) << what << " result " << i;
    const auto vt = values(t.a, ht[i]), vs = values(s.a, hs[i]);
    EXPECT_EQ(compare(vs, vt, i < tols.size() ? tols[i] : kExact), "")
        << what << " result " << i << "\n  shim     " << list(vs) << "\n  libtorch " << list(vt);
  }
}

// Handles a call returned (kept for deletion), in order.
std::vector<AtenTensorHandle> kept(Side& sd, std::initializer_list<AtenTensorHandle> hs) {
  std::vector<AtenTensorHandle> out;
  for (auto h : hs) out.push_back(sd.keep(h));
  return out;
}

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// --- sort ------------------------------------------------------------------

struct Layout {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

TEST(DifferentialOps, SortStable) {
  NEED_LIBTORCH();
  const std::vector<std::pair<Layout, std::vector<int64_t>>> layouts = {
      {{{6, 9}, {9, 1}}, {1, 0, -1}},
      {{{6, 9}, {1, 6}}, {1, 0}},            // transposed: dense, strides kept
      {{{4, 5}, {12, 2}, 1}, {1, -2}},       // gaps: dense strides inferred
      {{{2, 3, 40}, {120, 40, 1}}, {2, 1}},  // long lines (std::sort's introsort)
      {{{100}, {1}}, {0}},
      {{{3, 20}, {1, 0}}, {1}},  // a broadcast line
      {{{0, 5}, {5, 1}}, {1}},
      {{{3, 0}, {1, 1}}, {1}},
      {{{}, {}}, {0, -1}},
  };
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32, Dt::Bool}) {
    for (const auto& [l, dims] : layouts) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      const auto data = dt == Dt::Bool ? tied(span, 5, 1) : tied(span, 11, 4, is_float(dt) ? 7 : 0);
      for (int64_t dim : dims) {
        for (int desc = 0; desc < 2; ++desc) {
          for (int stable = -1; stable <= 1; ++stable) {
            expect_agree(
                [&](Side& sd, int* rc) {
                  AtenTensorHandle x = make(sd, data, dt, l.sizes, l.strides, l.offset);
                  int32_t st = stable;
                  AtenTensorHandle v = nullptr, i = nullptr;
                  *rc = sd.a.aoti_torch_cpu_sort_stable(x, stable < 0 ? nullptr : &st, dim, desc, &v, &i);
                  return kept(sd, {v, i});
                },
                std::string("sort ") + dt_name(dt) + " " + shape_str(l.sizes) + " strides " + shape_str(l.strides) +
                    " dim=" + std::to_string(dim) + " descending=" + std::to_string(desc) +
                    " stable=" + std::to_string(stable));
          }
        }
      }
    }
  }
}

TEST(DifferentialOps, SortLongIntegerLinesAndBadDims) {
  NEED_LIBTORCH();
  // Long 1-d integer lines with ties: from 32768 elements libtorch sorts
  // them ascending with a (stable) radix sort, whatever `stable` says.
  for (int64_t n : {32767, 32768, 40000})
    for (Dt dt : {Dt::I64, Dt::I32, Dt::F32}) {
      const auto data = tied(n, 3, 20);
      for (int stable = -1; stable <= 1; ++stable) {
        for (int desc = 0; desc < 2; ++desc) {
          expect_agree(
              [&](Side& sd, int* rc) {
                AtenTensorHandle x = make(sd, data, dt, {n}, {1});
                int32_t st = stable;
                AtenTensorHandle v = nullptr, i = nullptr;
                *rc = sd.a.aoti_torch_cpu_sort_stable(x, stable < 0 ? nullptr : &st, 0, desc, &v, &i);
                return kept(sd, {v, i});
              },
              std::string("sort ") + dt_name(dt) + " [" + std::to_string(n) + "] stable=" + std::to_string(stable) +
                  " descending=" + std::to_string(desc));
        }
      }
    }
  for (int64_t dim : {2, -3}) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle x = make(sd, tied(6, 1, 3), Dt::F32, {2, 3}, {3, 1});
          AtenTensorHandle v = nullptr, i = nullptr;
          *rc = sd.a.aoti_torch_cpu_sort_stable(x, nullptr, dim, 0, &v, &i);
          return kept(sd, {v, i});
        },
        "sort bad dim " + std::to_string(dim));
  }
}

// --- topk --------------------------------------------------------------------

TEST(DifferentialOps, Topk) {
  NEED_LIBTORCH();
  struct C {
    Layout l;
    int64_t k, dim;
  };
  const std::vector<C> cases = {
      {{{5, 100}, {100, 1}}, 1, 1},   // k * 64 <= n: partial_sort
      {{{5, 100}, {100, 1}}, 3, -1},  // nth_element + sort
      {{{5, 100}, {100, 1}}, 100, 1},
      {{{5, 100}, {100, 1}}, 0, 1},
      {{{6, 9}, {1, 6}}, 4, 1},  // transposed input
      {{{6, 9}, {1, 6}}, 2, 0},
      {{{4, 5}, {12, 2}, 1}, 3, -1},
      {{{2, 3, 7}, {21, 7, 1}}, 2, 1},
      {{{200}, {1}}, 3, 0},
      {{{}, {}}, 1, 0},
      {{{}, {}}, 0, -1},
      {{{0, 4}, {4, 1}}, 2, 1},
      {{{3, 0}, {1, 1}}, 0, 1},
      {{{5, 4}, {4, 1}}, 5, 1},  // k out of range: both fail
      {{{5, 4}, {4, 1}}, -1, 1},
      {{{5, 4}, {4, 1}}, 1, 2},  // dim out of range
  };
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32}) {
    for (const auto& c : cases) {
      const int64_t span = span_of(c.l.sizes, c.l.strides, c.l.offset);
      const auto data = tied(span, 17, 5, is_float(dt) ? 9 : 0);
      for (int largest = 0; largest < 2; ++largest) {
        for (int sorted = 0; sorted < 2; ++sorted) {
          expect_agree(
              [&](Side& sd, int* rc) {
                AtenTensorHandle x = make(sd, data, dt, c.l.sizes, c.l.strides, c.l.offset);
                AtenTensorHandle v = nullptr, i = nullptr;
                *rc = sd.a.aoti_torch_cpu_topk(x, c.k, c.dim, largest, sorted, &v, &i);
                return kept(sd, {v, i});
              },
              std::string("topk ") + dt_name(dt) + " " + shape_str(c.l.sizes) + " strides " + shape_str(c.l.strides) +
                  " k=" + std::to_string(c.k) + " dim=" + std::to_string(c.dim) +
                  " largest=" + std::to_string(largest) + " sorted=" + std::to_string(sorted));
        }
      }
    }
  }
}

// --- cumprod ---------------------------------------------------------------

TEST(DifferentialOps, Cumprod) {
  NEED_LIBTORCH();
  struct C {
    Layout l;
    int64_t dim;
    Dt in;
    int out;  // -1: NULL, else a Dt
  };
  const std::vector<C> cases = {
      {{{3, 4, 5}, {20, 5, 1}}, 1, Dt::F32, -1},
      {{{3, 4, 5}, {20, 5, 1}}, -1, Dt::F32, -1},
      {{{4, 3}, {1, 4}}, 0, Dt::F32, -1},
      {{{2, 6}, {6, 1}}, 1, Dt::I64, -1},
      {{{2, 6}, {6, 1}}, 1, Dt::I32, -1},  // promoted to int64
      {{{2, 6}, {6, 1}}, 1, Dt::I32, static_cast<int>(Dt::I32)},
      {{{2, 6}, {6, 1}}, 1, Dt::Bool, -1},
      {{{2, 6}, {6, 1}}, 0, Dt::F32, static_cast<int>(Dt::F64)},
      {{{5, 7}, {7, 1}}, 1, Dt::BF16, -1},
      {{{5, 7}, {7, 1}}, -2, Dt::F64, -1},
      {{{7}, {1}}, 0, Dt::I64, static_cast<int>(Dt::F32)},
      {{{40}, {1}}, 0, Dt::I64, -1},  // int64 overflow wraps
      {{{}, {}}, 0, Dt::F32, -1},
      {{{0, 3}, {3, 1}}, 1, Dt::F32, -1},
      {{{2, 3}, {3, 1}}, 2, Dt::F32, -1},  // bad dim
  };
  for (const auto& c : cases) {
    const int64_t span = span_of(c.l.sizes, c.l.strides);
    std::vector<double> data = c.in == Dt::Bool ? tied(span, 2, 1)
                               : is_float(c.in) ? spread(span, 9, 0.5, 1.6)
                                                : tied(span, 4, 6);
    if (c.l.sizes == std::vector<int64_t>{40}) data = std::vector<double>(40, 7.0), data[3] = -5;
    if (is_float(c.in) && span > 6) data[5] = kNaN;
    const Dt result = c.out >= 0 ? static_cast<Dt>(c.out) : (is_float(c.in) ? c.in : Dt::I64);
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle x = make(sd, data, c.in, c.l.sizes, c.l.strides);
          int32_t want = c.out >= 0 ? code(sd.a, static_cast<Dt>(c.out)) : 0;
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu_cumprod(x, c.dim, c.out >= 0 ? &want : nullptr, &out);
          return kept(sd, {out});
        },
        std::string("cumprod ") + dt_name(c.in) + " " + shape_str(c.l.sizes) + " dim=" + std::to_string(c.dim) +
            " dtype=" + std::to_string(c.out),
        {tol_for(result)});
  }
}

// --- searchsorted / bucketize ------------------------------------------------

TEST(DifferentialOps, Searchsorted) {
  NEED_LIBTORCH();
  const std::vector<double> seq = {-1, 1, 2, 2, 2, 3, 5, 5, 8, 9.5};
  const std::vector<double> probes = {-5, -1, 0, 1, 2, 2.5, 3, 5, 8, 9.5, 10, kNaN, kInf, -kInf, 4, 5, 2, 7};
  const char* left = "left";
  const char* right_s = "right";
  const char* middle = "middle";
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32}) {
    for (int right = 0; right < 2; ++right) {
      for (const char** side : {static_cast<const char**>(nullptr), &left, &right_s, &middle}) {
        for (int out_int32 = 0; out_int32 < 2; ++out_int32) {
          // self [3, 6] read transposed from a [6, 3] buffer.
          expect_agree(
              [&](Side& sd, int* rc) {
                AtenTensorHandle s = make(sd, seq, dt, {10}, {1});
                AtenTensorHandle x = make(sd, probes, dt, {3, 6}, {1, 3});
                AtenTensorHandle out = nullptr;
                *rc = sd.a.aoti_torch_cpu_searchsorted_Tensor(s, x, out_int32, right, side, nullptr, &out);
                return kept(sd, {out});
              },
              std::string("searchsorted ") + dt_name(dt) + " right=" + std::to_string(right) +
                  " side=" + (side ? *side : "NULL") + " out_int32=" + std::to_string(out_int32));
        }
      }
    }
  }
}

TEST(DifferentialOps, SearchsortedSorterRowsAndEdges) {
  NEED_LIBTORCH();
  // An unsorted sequence read through its sorting permutation.
  const std::vector<double> unsorted = {5, -1, 8, 2, 9.5, 2, 1, 3, 5, 2};
  const std::vector<double> order = {1, 6, 3, 5, 9, 7, 0, 8, 2, 4};
  const std::vector<double> probes = {-5, -1, 0, 1, 2, 2.5, 3, 5, 8, 9.5, 10, kNaN};
  // (libtorch takes a sorter pointing to a null handle for a tensor and
  // crashes; the shim reads it as no sorter: not compared here.)
  for (int right = 0; right < 2; ++right) {
    for (const char* side : {"left", "right"}) {
      expect_agree(
          [&](Side& sd, int* rc) {
            AtenTensorHandle s = make(sd, unsorted, Dt::F32, {10}, {1});
            AtenTensorHandle x = make(sd, probes, Dt::F32, {12}, {1});
            AtenTensorHandle srt = make(sd, order, Dt::I64, {10}, {1});
            AtenTensorHandle out = nullptr;
            *rc = sd.a.aoti_torch_cpu_searchsorted_Tensor(s, x, 0, right, &side, &srt, &out);
            return kept(sd, {out});
          },
          "searchsorted sorter right=" + std::to_string(right) + " side=" + side);
    }
  }
  // Bad sorters: out of range, wrong dtype, wrong shape.
  for (int bad = 0; bad < 3; ++bad) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle s = make(sd, unsorted, Dt::F32, {10}, {1});
          AtenTensorHandle x = make(sd, probes, Dt::F32, {12}, {1});
          std::vector<double> o = order;
          if (bad == 0) o[4] = 10;
          AtenTensorHandle srt =
              bad == 2 ? make(sd, o, Dt::I64, {9}, {1}) : make(sd, o, bad == 1 ? Dt::I32 : Dt::I64, {10}, {1});
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu_searchsorted_Tensor(s, x, 0, 0, nullptr, &srt, &out);
          return kept(sd, {out});
        },
        "searchsorted bad sorter " + std::to_string(bad));
  }
  // One sequence row per leading index (with a sorter per row), rows with NaN inside.
  for (int right = 0; right < 2; ++right) {
    for (int with_sorter = 0; with_sorter < 2; ++with_sorter) {
      expect_agree(
          [&](Side& sd, int* rc) {
            std::vector<double> rows = {0, 1, 1, 4, 6, 9, -3, -2, 0, 0, kNaN, 2};
            std::vector<double> srt_rows = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5};
            if (with_sorter)
              rows = {9, 1, 6, 1, 4, 0, 0, -2, kNaN, -3, 0, 2}, srt_rows = {5, 1, 3, 4, 2, 0, 3, 1, 0, 4, 2, 5};
            AtenTensorHandle s = make(sd, rows, Dt::F64, {2, 6}, {6, 1});
            AtenTensorHandle x = make(sd, {1, -3, 0, 7, 9, kNaN, 0, 2, 3, -2}, Dt::F64, {2, 5}, {5, 1});
            AtenTensorHandle srt = make(sd, srt_rows, Dt::I64, {2, 6}, {6, 1});
            AtenTensorHandle out = nullptr;
            *rc = sd.a.aoti_torch_cpu_searchsorted_Tensor(s, x, 1, right, nullptr, with_sorter ? &srt : nullptr, &out);
            return kept(sd, {out});
          },
          "searchsorted rows right=" + std::to_string(right) + " sorter=" + std::to_string(with_sorter));
    }
  }
  // 0-d and empty inputs; mismatched rows; 0-d sequence.
  struct E {
    Layout seq, self;
  };
  const std::vector<E> edges = {
      {{{5}, {1}}, {{}, {}}},       {{{5}, {1}}, {{0, 3}, {3, 1}}}, {{{2, 5}, {5, 1}}, {{3, 2}, {2, 1}}},
      {{{2, 5}, {5, 1}}, {{}, {}}}, {{{}, {}}, {{3}, {1}}},         {{{2, 5}, {5, 1}}, {{2, 0}, {1, 1}}}};
  for (const auto& e : edges) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle s = make(sd, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Dt::F32, e.seq.sizes, e.seq.strides);
          AtenTensorHandle x = make(sd, {3, 0, 7, 2, 5, 11}, Dt::F32, e.self.sizes, e.self.strides);
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu_searchsorted_Tensor(s, x, 0, 0, nullptr, nullptr, &out);
          return kept(sd, {out});
        },
        "searchsorted seq " + shape_str(e.seq.sizes) + " self " + shape_str(e.self.sizes));
  }
}

TEST(DifferentialOps, Bucketize) {
  NEED_LIBTORCH();
  const std::vector<double> bounds = {-2, 0, 0, 1, 3, 3, 7};
  const std::vector<double> probes = {-3, -2, -1, 0, 0.5, 1, 2, 3, 5, 7, 8, kNaN};
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32}) {
    for (int right = 0; right < 2; ++right) {
      for (int out_int32 = 0; out_int32 < 2; ++out_int32) {
        expect_agree(
            [&](Side& sd, int* rc) {
              AtenTensorHandle b = make(sd, bounds, dt, {7}, {1});
              AtenTensorHandle x = make(sd, probes, dt, {4, 3}, {1, 4});
              AtenTensorHandle out = nullptr;
              *rc = sd.a.aoti_torch_cpu_bucketize_Tensor(x, b, out_int32, right, &out);
              return kept(sd, {out});
            },
            std::string("bucketize ") + dt_name(dt) + " right=" + std::to_string(right) +
                " out_int32=" + std::to_string(out_int32));
      }
    }
  }
  for (int which = 0; which < 3; ++which) {  // 2-d boundaries; 0-d input; strided boundaries
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle b = which == 0   ? make(sd, bounds, Dt::F32, {2, 3}, {3, 1})
                               : which == 1 ? make(sd, bounds, Dt::F32, {7}, {1})
                                            : make(sd, bounds, Dt::F32, {4}, {2});
          AtenTensorHandle x = which == 1 ? make(sd, {2.5}, Dt::F32, {}, {}) : make(sd, probes, Dt::F32, {12}, {1});
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu_bucketize_Tensor(x, b, 0, 1, &out);
          return kept(sd, {out});
        },
        "bucketize case " + std::to_string(which));
  }
}

// --- nonzero, masked_select, repeat_interleave ------------------------------

TEST(DifferentialOps, Nonzero) {
  NEED_LIBTORCH();
  const std::vector<Layout> layouts = {
      {{4, 5}, {5, 1}}, {{4, 5}, {1, 4}}, {{2, 3, 4}, {12, 4, 1}}, {{3, 4}, {10, 2}, 1},
      {{7}, {1}},       {{}, {}},         {{0, 3}, {3, 1}},        {{2, 0, 3}, {3, 3, 1}}};
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32, Dt::Bool, Dt::U8}) {
    for (const auto& l : layouts) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      std::vector<double> data = tied(span, 23, 2, is_float(dt) ? 5 : 0);
      if (is_float(dt) && span > 2) data[1] = -0.0;
      for (int zero_scalar = 0; zero_scalar < (l.sizes.empty() ? 2 : 1); ++zero_scalar) {
        if (zero_scalar)
          data[0] = 0;
        else if (l.sizes.empty())
          data[0] = 1;
        expect_agree(
            [&](Side& sd, int* rc) {
              AtenTensorHandle x = make(sd, data, dt, l.sizes, l.strides, l.offset);
              AtenTensorHandle out = nullptr;
              *rc = sd.a.aoti_torch_cpu_nonzero(x, &out);
              return kept(sd, {out});
            },
            std::string("nonzero ") + dt_name(dt) + " " + shape_str(l.sizes) + " strides " + shape_str(l.strides));
      }
    }
  }
}

TEST(DifferentialOps, MaskedSelect) {
  NEED_LIBTORCH();
  struct C {
    Layout self, mask;
  };
  const std::vector<C> cases = {
      {{{3, 4}, {4, 1}}, {{3, 4}, {4, 1}}},
      {{{3, 4}, {1, 3}}, {{4}, {1}}},           // transposed self, broadcast mask
      {{{4}, {1}}, {{3, 4}, {4, 1}}},           // broadcast self
      {{{3, 1}, {1, 1}}, {{1, 5}, {5, 1}}},     // both broadcast
      {{{2, 3}, {6, 2}, 1}, {{2, 3}, {1, 2}}},  // gaps, transposed mask
      {{{}, {}}, {{}, {}}},
      {{{}, {}}, {{5}, {1}}},
      {{{0, 4}, {4, 1}}, {{4}, {1}}},
      {{{3, 4}, {4, 1}}, {{2}, {1}}},  // does not broadcast: both fail
  };
  for (Dt dt : {Dt::F32, Dt::BF16, Dt::I64, Dt::I32, Dt::Bool}) {
    for (const auto& c : cases) {
      for (int all_false = 0; all_false < 2; ++all_false) {
        const int64_t ss = span_of(c.self.sizes, c.self.strides, c.self.offset);
        const int64_t ms = span_of(c.mask.sizes, c.mask.strides, c.mask.offset);
        const auto sdata = tied(ss, 31, 6, is_float(dt) ? 4 : 0);
        std::vector<double> mdata = tied(ms, 37, 1);
        if (all_false) std::fill(mdata.begin(), mdata.end(), 0.0);
        expect_agree(
            [&](Side& sd, int* rc) {
              AtenTensorHandle x = make(sd, sdata, dt, c.self.sizes, c.self.strides, c.self.offset);
              AtenTensorHandle m = make(sd, mdata, Dt::Bool, c.mask.sizes, c.mask.strides, c.mask.offset);
              AtenTensorHandle out = nullptr;
              *rc = sd.a.aoti_torch_cpu_masked_select(x, m, &out);
              return kept(sd, {out});
            },
            std::string("masked_select ") + dt_name(dt) + " self " + shape_str(c.self.sizes) + " mask " +
                shape_str(c.mask.sizes) + " all_false=" + std::to_string(all_false));
      }
    }
  }
  for (Dt mask_dt : {Dt::U8, Dt::F32}) {  // non-bool masks
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle x = make(sd, {1, 2, 3, 4}, Dt::F32, {4}, {1});
          AtenTensorHandle m = make(sd, {1, 0, 1, 1}, mask_dt, {4}, {1});
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu_masked_select(x, m, &out);
          return kept(sd, {out});
        },
        std::string("masked_select mask ") + dt_name(mask_dt));
  }
}

TEST(DifferentialOps, RepeatInterleave) {
  NEED_LIBTORCH();
  struct C {
    std::vector<double> storage;
    Layout l;
    Dt dt;
    int64_t output_size;  // -1: NULL
  };
  const std::vector<C> cases = {
      {{3, 0, 2, 1}, {{4}, {1}}, Dt::I64, -1},
      {{3, 0, 2, 1}, {{4}, {1}}, Dt::I32, -1},
      {{3, 0, 2, 1}, {{4}, {1}}, Dt::I64, 6},
      {{3, 0, 2, 1}, {{4}, {1}}, Dt::I64, 5},  // wrong output_size
      {{2, 9, 0, 9, 1, 9}, {{3}, {2}}, Dt::I64, -1},
      {{1, -1, 2}, {{3}, {1}}, Dt::I64, -1},  // negative
      {{0, 0}, {{2}, {1}}, Dt::I64, -1},
      {{}, {{0}, {1}}, Dt::I64, 0},
      {{2}, {{}, {}}, Dt::I64, -1},                   // 0-d
      {{1, 2, 3, 4}, {{2, 2}, {2, 1}}, Dt::I64, -1},  // 2-d
      {{1, 2}, {{2}, {1}}, Dt::F32, -1},              // floating repeats
  };
  for (const auto& c : cases) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle r = make(sd, c.storage, c.dt, c.l.sizes, c.l.strides);
          int64_t os = c.output_size;
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu_repeat_interleave_Tensor(r, c.output_size < 0 ? nullptr : &os, &out);
          return kept(sd, {out});
        },
        std::string("repeat_interleave ") + dt_name(c.dt) + " " + shape_str(c.l.sizes) +
            " output_size=" + std::to_string(c.output_size));
  }
}

// --- scatter -----------------------------------------------------------------

struct ScatterCase {
  std::vector<int64_t> self_sizes;
  int64_t dim;
  std::vector<int64_t> index_sizes, src_sizes;
  std::vector<double> index;  // row-major over index_sizes
};

std::vector<ScatterCase> scatter_cases() {
  return {
      {{4, 5}, 0, {6, 5}, {6, 5}, {0, 1, 2, 3, 0, 3, 3, 1, 0, 2, 1, 1, 3, 0, 2,
                                   0, 2, 0, 1, 3, 2, 3, 1, 3, 0, 1, 0, 2, 2, 3}},
      {{4, 5}, 1, {4, 3}, {4, 6}, {4, 0, 4, 1, 1, 2, 0, 0, 0, 3, 4, 3}},
      {{4, 5}, -1, {2, 7}, {3, 8}, {0, 4, 4, 2, 4, 1, 0, 3, 3, 3, 0, 1, 2, 3}},
      {{2, 3, 4}, 1, {2, 5, 4}, {2, 5, 4}, {}},  // filled below
      {{6}, 0, {9}, {9}, {5, 0, 5, 2, 2, 5, 1, 0, 3}},
      {{}, 0, {}, {}, {0}},
      {{4, 5}, 0, {0, 5}, {2, 5}, {}},
  };
}

std::vector<double> index_for(const ScatterCase& c) {
  if (!c.index.empty() || c.index_sizes.empty()) return c.index.empty() ? std::vector<double>{0} : c.index;
  int64_t n = 1;
  for (auto s : c.index_sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  const int64_t d = c.dim < 0 ? c.dim + static_cast<int64_t>(c.self_sizes.size()) : c.dim;
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + i / 3) % c.self_sizes[d]);
  return v;
}

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

TEST(DifferentialOps, ScatterReduce) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32}) {
    for (const auto& c : scatter_cases()) {
      const auto self_data = is_float(dt) ? spread(std::max<int64_t>(numel_of(c.self_sizes), 1), 3, -2, 2)
                                          : tied(std::max<int64_t>(numel_of(c.self_sizes), 1), 3, 9);
      const auto src_data = is_float(dt) ? spread(std::max<int64_t>(numel_of(c.src_sizes), 1), 5, -2, 2)
                                         : tied(std::max<int64_t>(numel_of(c.src_sizes), 1), 5, 9);
      const auto idx = index_for(c);
      for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
        for (int include_self = 0; include_self < 2; ++include_self) {
          const bool approximate =
              std::string(reduce) == "sum" || std::string(reduce) == "prod" || std::string(reduce) == "mean";
          expect_agree(
              [&](Side& sd, int* rc) {
                AtenTensorHandle self = make(sd, self_data, dt, c.self_sizes, row_major(c.self_sizes));
                AtenTensorHandle src = make(sd, src_data, dt, c.src_sizes, row_major(c.src_sizes));
                AtenTensorHandle index = make(sd, idx, Dt::I64, c.index_sizes, row_major(c.index_sizes));
                AtenTensorHandle out = sd.empty(c.self_sizes, row_major(c.self_sizes), code(sd.a, dt));
                *rc = sd.a.aoti_torch_cpu_scatter_reduce_two_out(out, self, c.dim, index, src, reduce, include_self);
                return std::vector<AtenTensorHandle>{out};
              },
              std::string("scatter_reduce ") + dt_name(dt) + " self " + shape_str(c.self_sizes) +
                  " dim=" + std::to_string(c.dim) + " index " + shape_str(c.index_sizes) + " reduce=" + reduce +
                  " include_self=" + std::to_string(include_self),
              {approximate ? tol_for(dt) : kExact});
        }
      }
    }
  }
}

TEST(DifferentialOps, ScatterReduceSpecialValuesAndOuts) {
  NEED_LIBTORCH();
  // NaN and infinities in src and self; amax/amin without self over -inf / inf.
  const std::vector<double> self_data = {1, kNaN, 3, -kInf, 5, 6};
  const std::vector<double> src_data = {-kInf, kNaN, kInf, -kInf, 2, -kInf, 0, kNaN};
  const std::vector<double> idx = {0, 0, 2, 5, 5, 3, 3, 1};
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (int include_self = 0; include_self < 2; ++include_self) {
      expect_agree(
          [&](Side& sd, int* rc) {
            AtenTensorHandle self = make(sd, self_data, Dt::F32, {6}, {1});
            AtenTensorHandle src = make(sd, src_data, Dt::F32, {8}, {1});
            AtenTensorHandle index = make(sd, idx, Dt::I64, {8}, {1});
            AtenTensorHandle out = sd.empty({6}, {1}, code(sd.a, Dt::F32));
            *rc = sd.a.aoti_torch_cpu_scatter_reduce_two_out(out, self, 0, index, src, reduce, include_self);
            return std::vector<AtenTensorHandle>{out};
          },
          std::string("scatter_reduce special values reduce=") + reduce +
              " include_self=" + std::to_string(include_self));
    }
  }
  // out: self itself, a transposed out (kept), an out of other sizes (resized);
  // bad index, bad reduce, index dtype, src dtype.
  for (int which = 0; which < 8; ++which) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle self = make(sd, spread(12, 1, -1, 1), Dt::F32, {3, 4}, {4, 1});
          AtenTensorHandle src = make(sd, spread(12, 2, -1, 1), which == 7 ? Dt::F64 : Dt::F32, {3, 4}, {4, 1});
          std::vector<double> iv = {2, 0, 1, 1, 0, 0, 2, 1};
          if (which == 4) iv[3] = 3;
          AtenTensorHandle index = make(sd, iv, which == 6 ? Dt::I32 : Dt::I64, {2, 4}, {4, 1});
          AtenTensorHandle out = which == 0   ? self
                                 : which == 1 ? sd.empty({3, 4}, {1, 3}, code(sd.a, Dt::F32))
                                 : which == 2 ? sd.empty({0}, {1}, code(sd.a, Dt::F32))
                                              : sd.empty({3, 4}, {4, 1}, code(sd.a, Dt::F32));
          *rc = sd.a.aoti_torch_cpu_scatter_reduce_two_out(out, self, 0, index, src, which == 5 ? "median" : "sum",
                                                           which == 3 ? 0 : 1);
          return std::vector<AtenTensorHandle>{out};
        },
        "scatter_reduce out/argument case " + std::to_string(which), {tol_for(Dt::F32)});
  }
}

TEST(DifferentialOps, ScatterSrcAndValue) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32, Dt::Bool}) {
    for (const auto& c : scatter_cases()) {
      const auto self_data = tied(std::max<int64_t>(numel_of(c.self_sizes), 1), 8, dt == Dt::Bool ? 1 : 9);
      const auto src_data = tied(std::max<int64_t>(numel_of(c.src_sizes), 1), 9, dt == Dt::Bool ? 1 : 9);
      const auto idx = index_for(c);
      for (int use_value = 0; use_value < 2; ++use_value) {
        expect_agree(
            [&](Side& sd, int* rc) {
              AtenTensorHandle self = make(sd, self_data, dt, c.self_sizes, row_major(c.self_sizes));
              AtenTensorHandle src = make(sd, src_data, dt, c.src_sizes, row_major(c.src_sizes));
              AtenTensorHandle index = make(sd, idx, Dt::I64, c.index_sizes, row_major(c.index_sizes));
              AtenTensorHandle out = sd.empty(c.self_sizes, row_major(c.self_sizes), code(sd.a, dt));
              *rc = use_value ? sd.a.aoti_torch_cpu_scatter_value_out(out, self, c.dim, index, 2.0)
                              : sd.a.aoti_torch_cpu_scatter_src_out(out, self, c.dim, index, src);
              return std::vector<AtenTensorHandle>{out};
            },
            std::string(use_value ? "scatter_value " : "scatter_src ") + dt_name(dt) + " self " +
                shape_str(c.self_sizes) + " dim=" + std::to_string(c.dim) + " index " + shape_str(c.index_sizes));
      }
    }
  }
}

// --- _weight_int8pack_mm -----------------------------------------------------

// int8 values in [-128, 127], deterministic in `seed`.
std::vector<double> int8s(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 747796405u + 11;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = static_cast<double>(static_cast<int>((s >> 11) % 256) - 128);
  }
  return v;
}

TEST(DifferentialOps, WeightInt8PackMm) {
  NEED_LIBTORCH();
  struct Case {
    int64_t m, k, n, row_stride;  // row_stride > k: rows with gaps
  };
  // The last four span several blocks of weight rows (128 rows at these K):
  // one and twelve rows of x (the GEMV and the transposed block products),
  // and enough work to split the blocks over the OpenMP team.
  const std::vector<Case> cases = {{1, 16, 8, 16},    {5, 33, 7, 33},      {4, 64, 12, 70}, {0, 8, 3, 8},
                                   {3, 0, 5, 0},      {2, 1, 1, 1},        {17, 40, 9, 40}, {1, 64, 200, 64},
                                   {12, 48, 300, 52}, {20, 256, 160, 256}, {9, 40, 130, 40}};
  // libtorch 2.15's bfloat16 kernel crashes (reads out of bounds) when K is
  // not a multiple of 16 or the rows are not 16-byte aligned (32 on AVX-512,
  // where it loads with aligned instructions: Side::hold aligns the buffers
  // to 64): those shapes are compared in float32 only.
  const std::vector<Case> bf16_cases = {{1, 16, 8, 16},    {5, 32, 7, 32},     {4, 64, 12, 64}, {3, 32, 8, 40},
                                        {17, 48, 9, 48},   {0, 16, 3, 16},     {3, 0, 5, 0},    {1, 64, 200, 64},
                                        {12, 48, 300, 48}, {20, 256, 160, 256}};
  for (Dt dt : {Dt::F32, Dt::BF16}) {
    const Tol tol = dt == Dt::BF16 ? Tol{1.6e-2, 1e-2} : Tol{1e-5, 1e-5};
    for (const Case& c : dt == Dt::BF16 ? bf16_cases : cases) {
      const auto x = spread(std::max<int64_t>(c.m * c.row_stride, 1), 3, -1, 1);
      const auto w = int8s(c.n * c.k, 5);
      const auto sc = spread(c.n, 7, 0.001, 0.02);
      expect_agree(
          [&](Side& sd, int* rc) {
            AtenTensorHandle xs = make(sd, x, dt, {c.m, c.k}, {c.row_stride, 1});
            AtenTensorHandle ws = make(sd, w, Dt::I8, {c.n, c.k}, {c.k, 1});
            AtenTensorHandle ss = make(sd, sc, dt, {c.n}, {1});
            AtenTensorHandle out = nullptr;
            *rc = sd.a.aoti_torch_cpu__weight_int8pack_mm(xs, ws, ss, &out);
            return kept(sd, {out});
          },
          std::string("int8pack_mm ") + dt_name(dt) + " m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) +
              " n=" + std::to_string(c.n) + " row_stride=" + std::to_string(c.row_stride),
          {tol});
    }
  }
  // What libtorch refuses is refused. (Strided scales, which libtorch reads
  // as if contiguous, are refused by the shim: ShimReference below.)
  struct Bad {
    const char* what;
    Dt x_dt, s_dt, w_dt;
    std::vector<int64_t> x_strides, w_strides, s_sizes, s_strides;
  };
  const std::vector<Bad> bads = {
      {"float64 self", Dt::F64, Dt::F64, Dt::I8, {8, 1}, {8, 1}, {5}, {1}},
      {"scales of another dtype", Dt::F32, Dt::F64, Dt::I8, {8, 1}, {8, 1}, {5}, {1}},
      {"column-major self", Dt::F32, Dt::F32, Dt::I8, {1, 3}, {8, 1}, {5}, {1}},
      {"column-major weight", Dt::F32, Dt::F32, Dt::I8, {8, 1}, {1, 5}, {5}, {1}},
      {"uint8 weight", Dt::F32, Dt::F32, Dt::U8, {8, 1}, {8, 1}, {5}, {1}},
      {"scales of the wrong size", Dt::F32, Dt::F32, Dt::I8, {8, 1}, {8, 1}, {4}, {1}},
  };
  for (const Bad& b : bads) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle xs = make(sd, spread(24, 1, -1, 1), b.x_dt, {3, 8}, b.x_strides);
          AtenTensorHandle ws = make(sd, int8s(40, 2), b.w_dt, {5, 8}, b.w_strides);
          AtenTensorHandle ss = make(sd, spread(10, 3, 0.01, 0.02), b.s_dt, b.s_sizes, b.s_strides);
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu__weight_int8pack_mm(xs, ws, ss, &out);
          return kept(sd, {out});
        },
        std::string("int8pack_mm ") + b.what, {Tol{1e-5, 1e-5}});
  }
}

// --- transposed convolution ----------------------------------------------------

struct ConvTCase {
  std::vector<int64_t> x_sizes, w_sizes;  // w: [C_in, C_out / groups, k...]
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups;
  bool bias;
  int layout;  // 0 contiguous; 1 input channels-last; 2 weight channels-last; 3 input column-major-ish gaps
};

// Strides of `sizes` with the channel dim innermost (channels-last).
std::vector<int64_t> channels_last(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> order = {0};
  for (size_t d = 2; d < sizes.size(); ++d) order.push_back(static_cast<int64_t>(d));
  order.push_back(1);
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(order.size()) - 1; i >= 0; --i) {
    st[order[i]] = acc;
    acc *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return st;
}

TEST(DifferentialOps, ConvolutionTransposed) {
  NEED_LIBTORCH();
  const std::vector<ConvTCase> cases = {
      {{2, 4, 8, 8}, {4, 8, 3, 3}, {2, 2}, {0, 0}, {1, 1}, {0, 0}, 1, true, 0},  // the refusals fixture's shape
      {{2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, false, 0},
      {{1, 6, 4, 5}, {6, 2, 2, 3}, {1, 2}, {0, 1}, {2, 1}, {0, 1}, 3, true, 0},
      {{2, 4, 5, 5}, {4, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, 4, true, 0},  // depthwise
      {{2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, 1},
      {{2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, 2},
      {{2, 4, 6, 3}, {4, 2, 1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 2, false, 0},  // 1x1
      {{2, 4, 7}, {4, 3, 3}, {2}, {0}, {1}, {0}, 1, true, 0},
      {{1, 6, 9}, {6, 4, 4}, {3}, {2}, {2}, {2}, 2, false, 0},
      {{2, 4, 3, 4, 5}, {4, 2, 2, 2, 2}, {2, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 0, 0}, 2, true, 0},
      {{1, 2, 3, 3, 4}, {2, 3, 3, 2, 3}, {1, 2, 2}, {1, 0, 1}, {1, 1, 2}, {0, 1, 1}, 1, true, 1},
      {{1, 2, 3, 3, 4}, {2, 3, 3, 2, 3}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1, false, 2},
      {{2, 2, 3, 3, 4}, {2, 3, 3, 2, 3}, {1, 2, 2}, {1, 0, 1}, {1, 1, 2}, {0, 1, 1}, 1, true, 1},  // oneDNN: kept
      {{2, 4, 3, 3, 4}, {4, 3, 3, 2, 3}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1, false, 2},
      {{1, 4, 3, 3, 4}, {4, 1, 1, 2, 3}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 2, true, 1},  // groups > 1
      // output_padding not below stride (but below dilation): libtorch skips oneDNN, contiguous output
      {{2, 4, 3, 3, 4}, {4, 3, 3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {2, 2, 2}, {1, 1, 1}, 1, true, 1},
      {{0, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, 0},  // empty batch
      // refused by both: output_padding not below stride or dilation; output below 1
      {{2, 4, 5, 5}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {2, 0}, 1, false, 0},
      {{1, 4, 1, 1}, {4, 3, 3, 3}, {1, 1}, {3, 3}, {1, 1}, {0, 0}, 1, false, 0},
  };
  for (Dt dt : {Dt::F32, Dt::BF16}) {
    const Tol tol = dt == Dt::BF16 ? Tol{1.6e-2, 1e-2} : Tol{1e-5, 1e-5};
    for (const ConvTCase& c : cases) {
      int64_t xn = 1, wn = 1;
      for (int64_t s : c.x_sizes) xn *= s;
      for (int64_t s : c.w_sizes) wn *= s;
      const auto x = spread(std::max<int64_t>(xn, 1), 11, -1, 1), w = spread(wn, 12, -0.5, 0.5);
      const int64_t cout = c.w_sizes[1] * c.groups;
      const auto b = spread(cout, 13, -1, 1);
      const int64_t nd = static_cast<int64_t>(c.stride.size());
      expect_agree(
          [&](Side& sd, int* rc) {
            AtenTensorHandle xs =
                make(sd, x, dt, c.x_sizes, c.layout == 1 ? channels_last(c.x_sizes) : row_major(c.x_sizes));
            AtenTensorHandle ws =
                make(sd, w, dt, c.w_sizes, c.layout == 2 ? channels_last(c.w_sizes) : row_major(c.w_sizes));
            AtenTensorHandle bs = c.bias ? make(sd, b, dt, {cout}, {1}) : nullptr;
            AtenTensorHandle out = nullptr;
            *rc = sd.a.aoti_torch_cpu_convolution(xs, ws, c.bias ? &bs : nullptr, c.stride.data(), nd, c.padding.data(),
                                                  nd, c.dilation.data(), nd, 1, c.output_padding.data(), nd, c.groups,
                                                  &out);
            return kept(sd, {out});
          },
          std::string("conv_transpose ") + dt_name(dt) + " x " + shape_str(c.x_sizes) + " w " + shape_str(c.w_sizes) +
              " stride " + shape_str(c.stride) + " padding " + shape_str(c.padding) + " dilation " +
              shape_str(c.dilation) + " output_padding " + shape_str(c.output_padding) +
              " groups=" + std::to_string(c.groups) + " layout=" + std::to_string(c.layout),
          {tol});
    }
  }
}

// --- baddbmm ---------------------------------------------------------------

TEST(DifferentialOps, BaddbmmOut) {
  NEED_LIBTORCH();
  struct Case {
    std::vector<int64_t> self_sizes;
    double beta, alpha;
    bool transposed_batch2, nan_self, resize_out;
  };
  const int64_t b = 3, n = 4, k = 5, p = 6;
  const std::vector<Case> cases = {
      {{b, n, p}, 1.0, 1.0, false, false, false}, {{b, n, p}, 0.5, 2.0, true, false, false},
      {{n, p}, 1.0, -1.0, false, false, false},   {{p}, 2.0, 0.5, false, false, true},
      {{1, 1, p}, 1.0, 1.0, true, false, false},  {{b, n, p}, 0.0, 1.5, false, true, false},
      {{b, n, p}, 0.0, 1.0, true, true, true},
  };
  for (Dt dt : {Dt::F32, Dt::BF16, Dt::F64}) {
    const Tol tol = dt == Dt::BF16 ? Tol{1.6e-2, 1e-2} : dt == Dt::F32 ? Tol{1e-5, 1e-5} : Tol{1e-12, 1e-12};
    for (const Case& c : cases) {
      int64_t sn = 1;
      for (int64_t s : c.self_sizes) sn *= s;
      auto self = spread(sn, 21, -1, 1);
      if (c.nan_self) self[1] = kNaN, self[2] = kInf;
      const auto b1 = spread(b * n * k, 22, -1, 1), b2 = spread(b * k * p, 23, -1, 1);
      expect_agree(
          [&](Side& sd, int* rc) {
            AtenTensorHandle s = make(sd, self, dt, c.self_sizes, row_major(c.self_sizes));
            AtenTensorHandle m1 = make(sd, b1, dt, {b, n, k}, {n * k, k, 1});
            AtenTensorHandle m2 = c.transposed_batch2 ? make(sd, b2, dt, {b, k, p}, {k * p, 1, k})
                                                      : make(sd, b2, dt, {b, k, p}, {k * p, p, 1});
            AtenTensorHandle out = c.resize_out ? sd.empty({2, 2}, {2, 1}, code(sd.a, dt))
                                                : sd.empty({b, n, p}, {n * p, p, 1}, code(sd.a, dt));
            *rc = sd.a.aoti_torch_cpu_baddbmm_out(out, s, m1, m2, c.beta, c.alpha);
            return std::vector<AtenTensorHandle>{out};
          },
          std::string("baddbmm ") + dt_name(dt) + " self " + shape_str(c.self_sizes) +
              " beta=" + std::to_string(c.beta) + " alpha=" + std::to_string(c.alpha) +
              " transposed_batch2=" + std::to_string(c.transposed_batch2),
          {tol});
    }
  }
  // Mismatched inner sizes: refused by both.
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle s = make(sd, spread(24, 1, -1, 1), Dt::F32, {2, 3, 4}, {12, 4, 1});
        AtenTensorHandle m1 = make(sd, spread(12, 2, -1, 1), Dt::F32, {2, 3, 2}, {6, 2, 1});
        AtenTensorHandle m2 = make(sd, spread(24, 3, -1, 1), Dt::F32, {2, 3, 4}, {12, 4, 1});
        AtenTensorHandle out = sd.empty({2, 3, 4}, {12, 4, 1}, code(sd.a, Dt::F32));
        *rc = sd.a.aoti_torch_cpu_baddbmm_out(out, s, m1, m2, 1, 1);
        return std::vector<AtenTensorHandle>{out};
      },
      "baddbmm mismatched inner sizes");
}

// --- _cdist_forward ------------------------------------------------------------

TEST(DifferentialOps, CdistForward) {
  NEED_LIBTORCH();
  struct Case {
    std::vector<int64_t> x1_sizes, x2_sizes;
  };
  const std::vector<Case> cases = {
      {{4, 3}, {5, 3}}, {{2, 4, 8}, {2, 6, 8}}, {{3, 1, 4, 3}, {2, 5, 3}}, {{30, 5}, {7, 5}},  {{2, 6, 4}, {27, 4}},
      {{4, 0}, {5, 0}}, {{0, 3}, {5, 3}},       {{1, 1}, {1, 1}},          {{26, 2}, {26, 2}},
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (Dt dt : {Dt::F32, Dt::F64}) {
    for (const Case& c : cases) {
      int64_t n1 = 1, n2 = 1;
      for (int64_t s : c.x1_sizes) n1 *= s;
      for (int64_t s : c.x2_sizes) n2 *= s;
      auto x1 = spread(std::max<int64_t>(n1, 1), 31, -2, 2), x2 = spread(std::max<int64_t>(n2, 1), 32, -2, 2);
      // Some equal coordinates, for p = 0.
      for (size_t i = 0; i < x2.size() && i < x1.size(); i += 3) x2[i] = x1[i];
      for (double p : {0.0, 1.0, 2.0, 3.5, 0.5, inf}) {
        for (int mode = -1; mode <= 2; ++mode) {
          const bool matrix = p == 2.0 && mode != 2;
          const Tol tol = dt == Dt::F64 ? Tol{1e-10, 1e-10} : matrix ? Tol{1e-4, 1e-4} : Tol{1e-5, 1e-5};
          expect_agree(
              [&](Side& sd, int* rc) {
                AtenTensorHandle a = make(sd, x1, dt, c.x1_sizes, row_major(c.x1_sizes));
                AtenTensorHandle b = make(sd, x2, dt, c.x2_sizes, row_major(c.x2_sizes));
                int64_t m = mode;
                AtenTensorHandle out = nullptr;
                *rc = sd.a.aoti_torch_cpu__cdist_forward(a, b, p, mode < 0 ? nullptr : &m, &out);
                return kept(sd, {out});
              },
              std::string("cdist ") + dt_name(dt) + " " + shape_str(c.x1_sizes) + " " + shape_str(c.x2_sizes) +
                  " p=" + std::to_string(p) + " mode=" + std::to_string(mode),
              {tol});
        }
      }
    }
  }
  // Refused by both: negative p, mode 3, bfloat16 on the direct path,
  // columns that differ, mixed dtypes.
  struct Bad {
    const char* what;
    double p;
    int64_t mode;
    Dt d1, d2;
    int64_t cols2;
  };
  for (const Bad& b :
       {Bad{"p < 0", -1.0, 0, Dt::F32, Dt::F32, 3}, Bad{"mode 3", 2.0, 3, Dt::F32, Dt::F32, 3},
        Bad{"bf16 direct", 1.0, 0, Dt::BF16, Dt::BF16, 3}, Bad{"columns differ", 1.0, 0, Dt::F32, Dt::F32, 2},
        Bad{"mixed dtypes", 1.0, 0, Dt::F32, Dt::F64, 3}}) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle a = make(sd, spread(12, 1, -1, 1), b.d1, {4, 3}, {3, 1});
          AtenTensorHandle x = make(sd, spread(15, 2, -1, 1), b.d2, {5, b.cols2}, {b.cols2, 1});
          int64_t m = b.mode;
          AtenTensorHandle out = nullptr;
          *rc = sd.a.aoti_torch_cpu__cdist_forward(a, x, b.p, &m, &out);
          return kept(sd, {out});
        },
        std::string("cdist ") + b.what);
  }
}

// --- kthvalue --------------------------------------------------------------------

TEST(DifferentialOps, Kthvalue) {
  NEED_LIBTORCH();
  const std::vector<Layout> layouts = {
      {{6, 9}, {9, 1}},           {{6, 9}, {1, 6}}, {{4, 5}, {12, 2}, 1},
      {{2, 3, 40}, {120, 40, 1}}, {{100}, {1}},     {{3, 20}, {1, 0}},
      {{0, 5}, {5, 1}},           {{}, {}},         {{2, 3, 4}, {1, 2, 6}},
  };
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32, Dt::U8}) {
    for (const Layout& l : layouts) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      auto data = tied(span, 17, 4, is_float(dt) ? 7 : 0);
      if (dt == Dt::U8) {
        for (double& v : data) v = std::fabs(v) * 2;
      }
      const int64_t nd = static_cast<int64_t>(l.sizes.size());
      for (int64_t dim = -std::max<int64_t>(nd, 1); dim < std::max<int64_t>(nd, 1); ++dim) {
        const int64_t d = dim < 0 ? dim + std::max<int64_t>(nd, 1) : dim;
        const int64_t len = nd == 0 ? 1 : l.sizes[d];
        std::vector<int64_t> ks = {1, len, (len + 1) / 2, len / 3 + 1};
        if (len > 10) ks.push_back(len - 3);
        for (int64_t k : ks) {
          for (int keepdim = 0; keepdim < 2; ++keepdim) {
            expect_agree(
                [&](Side& sd, int* rc) {
                  AtenTensorHandle x = make(sd, data, dt, l.sizes, l.strides, l.offset);
                  AtenTensorHandle v = nullptr, i = nullptr;
                  *rc = sd.a.aoti_torch_cpu_kthvalue(x, k, dim, keepdim, &v, &i);
                  return kept(sd, {v, i});
                },
                std::string("kthvalue ") + dt_name(dt) + " " + shape_str(l.sizes) + " strides " + shape_str(l.strides) +
                    " k=" + std::to_string(k) + " dim=" + std::to_string(dim) + " keepdim=" + std::to_string(keepdim));
          }
        }
      }
    }
  }
  // Refused by both: k out of range, an empty dim, a bad dim, bool.
  struct Bad {
    std::vector<int64_t> sizes;
    int64_t k, dim;
    Dt dt;
  };
  for (const Bad& b : {Bad{{3, 4}, 0, 1, Dt::F32}, Bad{{3, 4}, 5, 1, Dt::F32}, Bad{{3, 0}, 1, 1, Dt::F32},
                       Bad{{3, 4}, 1, 2, Dt::F32}, Bad{{3, 4}, 1, 1, Dt::Bool}}) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle x = make(sd, tied(12, 1, 3), b.dt, b.sizes, row_major(b.sizes));
          AtenTensorHandle v = nullptr, i = nullptr;
          *rc = sd.a.aoti_torch_cpu_kthvalue(x, b.k, b.dim, 0, &v, &i);
          return kept(sd, {v, i});
        },
        "kthvalue refused " + shape_str(b.sizes) + " k=" + std::to_string(b.k) + " dim=" + std::to_string(b.dim));
  }
}

// --- _embedding_bag --------------------------------------------------------------

TEST(DifferentialOps, EmbeddingBag) {
  NEED_LIBTORCH();
  const int64_t rows = 10, dim = 3;
  const std::vector<double> idx = {1, 2, 4, 5, 4, 3, 2, 9, 0, 4};
  struct Offsets {
    std::vector<double> offsets;
    bool include_last;
  };
  const std::vector<Offsets> offsets = {
      {{0, 2, 2, 5}, false},     // an empty bag
      {{0, 2, 2, 5, 10}, true},  // the same, the last offset ending the last bag
      {{0, 2, 5}, true},         // include_last_offset with indices after the last offset
      {{0}, false},              // one bag
      {{0, 10, 10}, false},      // empty trailing bags
  };
  for (Dt dt : {Dt::F32, Dt::BF16, Dt::F64}) {
    const Tol tol = dt == Dt::BF16 ? Tol{1.6e-2, 1e-2} : dt == Dt::F32 ? Tol{1e-6, 1e-6} : Tol{1e-12, 1e-12};
    auto weight = spread(rows * dim * 2, 41, -2, 2);
    weight[4 * dim] = kNaN;  // NaN in row 4 (max keeps or skips it as libtorch does)
    for (const Offsets& o : offsets) {
      for (int64_t mode = 0; mode <= 2; ++mode) {
        for (int64_t padding_idx : {-1, 4, 12}) {
          for (int variant = 0; variant < 5; ++variant) {
            // 0 plain; 1 per_sample_weights; 2 strided per_sample_weights;
            // 3 int32 indices and offsets; 4 int32 indices, int64 offsets
            // (weight read column-major in variants 3 and 4).
            if ((variant == 1 || variant == 2) && mode != 0) continue;
            const Dt it = variant >= 3 ? Dt::I32 : Dt::I64, ot = variant == 3 ? Dt::I32 : Dt::I64;
            const auto psw = spread(20, 43, -1, 1);
            expect_agree(
                [&](Side& sd, int* rc) {
                  AtenTensorHandle w = variant >= 3 ? make(sd, weight, dt, {rows, dim}, {1, rows})
                                                    : make(sd, weight, dt, {rows, dim}, {dim, 1});
                  AtenTensorHandle ix = make(sd, idx, it, {10}, {1});
                  const int64_t no = static_cast<int64_t>(o.offsets.size());
                  AtenTensorHandle of = make(sd, o.offsets, ot, {no}, {1});
                  AtenTensorHandle ps = nullptr;
                  if (variant == 1) ps = make(sd, psw, dt, {10}, {1});
                  if (variant == 2) ps = make(sd, psw, dt, {10}, {2});
                  AtenTensorHandle r0 = nullptr, r1 = nullptr, r2 = nullptr, r3 = nullptr;
                  *rc = sd.a.aoti_torch_cpu__embedding_bag(w, ix, of, 0, mode, 0, ps ? &ps : nullptr, o.include_last,
                                                           padding_idx, &r0, &r1, &r2, &r3);
                  return kept(sd, {r0, r1, r2, r3});
                },
                std::string("embedding_bag ") + dt_name(dt) + " offsets " + list(o.offsets) +
                    " include_last_offset=" + std::to_string(o.include_last) + " mode=" + std::to_string(mode) +
                    " padding_idx=" + std::to_string(padding_idx) + " variant=" + std::to_string(variant),
                {tol});
          }
        }
      }
    }
  }
  // Refused by both: an index out of range, per_sample_weights with mean,
  // offsets not starting at 0, an offset beyond the indices.
  struct Bad {
    const char* what;
    std::vector<double> idx, offsets;
    int64_t mode;
    bool psw;
  };
  for (const Bad& b : {Bad{"index out of range", {1, 10}, {0}, 0, false}, Bad{"negative index", {1, -1}, {0}, 2, false},
                       Bad{"psw with mean", {1, 2}, {0}, 1, true}, Bad{"offsets[0] != 0", {1, 2, 3}, {1, 2}, 1, false},
                       Bad{"offset beyond", {1, 2}, {0, 3}, 0, false}}) {
    expect_agree(
        [&](Side& sd, int* rc) {
          AtenTensorHandle w = make(sd, spread(30, 1, -1, 1), Dt::F32, {10, 3}, {3, 1});
          const int64_t ni = static_cast<int64_t>(b.idx.size()), no = static_cast<int64_t>(b.offsets.size());
          AtenTensorHandle ix = make(sd, b.idx, Dt::I64, {ni}, {1});
          AtenTensorHandle of = make(sd, b.offsets, Dt::I64, {no}, {1});
          AtenTensorHandle ps = b.psw ? make(sd, spread(ni, 2, 0, 1), Dt::F32, {ni}, {1}) : nullptr;
          AtenTensorHandle r0 = nullptr, r1 = nullptr, r2 = nullptr, r3 = nullptr;
          *rc = sd.a.aoti_torch_cpu__embedding_bag(w, ix, of, 0, b.mode, 0, b.psw ? &ps : nullptr, 0, -1, &r0, &r1, &r2,
                                                   &r3);
          return kept(sd, {r0, r1, r2, r3});
        },
        std::string("embedding_bag ") + b.what);
  }
}

// --- mkldnn_rnn_layer (LSTM) -----------------------------------------------------

// One LSTM layer call on side sd: results output, hy, cy (the workspace is
// kept for deletion but not compared: libtorch returns oneDNN's, the shim an
// empty one).
struct LstmCase {
  int64_t steps, batch, in, hidden;
  bool reverse, biases, zero_state_view, transposed_weight;
};

std::vector<AtenTensorHandle> lstm_call(Side& sd, const LstmCase& c, int64_t mode, int* rc) {
  const int64_t g = 4 * c.hidden;
  AtenTensorHandle x = make(sd, spread(c.steps * c.batch * c.in, 11, -1, 1), Dt::F32, {c.steps, c.batch, c.in},
                            row_major({c.steps, c.batch, c.in}));
  // W_ih either contiguous [4H, I] or the transpose of an [I, 4H] buffer.
  AtenTensorHandle wi = c.transposed_weight ? make(sd, spread(g * c.in, 12, -0.4, 0.4), Dt::F32, {g, c.in}, {1, g})
                                            : make(sd, spread(g * c.in, 12, -0.4, 0.4), Dt::F32, {g, c.in}, {c.in, 1});
  AtenTensorHandle wh = make(sd, spread(g * c.hidden, 13, -0.4, 0.4), Dt::F32, {g, c.hidden}, {c.hidden, 1});
  AtenTensorHandle bi = make(sd, spread(g, 14, -0.5, 0.5), Dt::F32, {g}, {1});
  AtenTensorHandle bh = make(sd, spread(g, 15, -0.5, 0.5), Dt::F32, {g}, {1});
  // Inductor passes zeros as a stride-0 view {0, H, 1}; a user's state is dense.
  AtenTensorHandle hx = c.zero_state_view ? make(sd, std::vector<double>(c.batch * c.hidden, 0.0), Dt::F32,
                                                 {1, c.batch, c.hidden}, {0, c.hidden, 1})
                                          : make(sd, spread(c.batch * c.hidden, 16, -1, 1), Dt::F32,
                                                 {1, c.batch, c.hidden}, row_major({1, c.batch, c.hidden}));
  AtenTensorHandle cx = c.zero_state_view ? make(sd, std::vector<double>(c.batch * c.hidden, 0.0), Dt::F32,
                                                 {1, c.batch, c.hidden}, {0, c.hidden, 1})
                                          : make(sd, spread(c.batch * c.hidden, 17, -1, 1), Dt::F32,
                                                 {1, c.batch, c.hidden}, row_major({1, c.batch, c.hidden}));
  AtenTensorHandle r0 = nullptr, r1 = nullptr, r2 = nullptr, r3 = nullptr;
  *rc = sd.a.aoti_torch_cpu_mkldnn_rnn_layer(x, wi, wh, bi, bh, hx, cx, c.reverse, nullptr, 0, mode, c.hidden, 1,
                                             c.biases, 0, 0, 0, &r0, &r1, &r2, &r3);
  if (r3 != nullptr) sd.keep(r3);
  return kept(sd, {r0, r1, r2});
}

TEST(DifferentialOps, MkldnnRnnLayer) {
  NEED_LIBTORCH();
  const Tol tol{1e-5, 1e-5};
  for (const LstmCase& c :
       {LstmCase{5, 3, 16, 32, false, true, true, false}, LstmCase{5, 3, 16, 32, true, true, true, false},
        LstmCase{7, 2, 10, 6, false, true, false, true}, LstmCase{7, 2, 10, 6, true, false, false, false},
        LstmCase{1, 1, 4, 8, false, true, false, false}, LstmCase{12, 4, 64, 48, true, true, false, true}}) {
    const std::string what = "mkldnn_rnn_layer T=" + std::to_string(c.steps) + " N=" + std::to_string(c.batch) +
                             " I=" + std::to_string(c.in) + " H=" + std::to_string(c.hidden) +
                             " reverse=" + std::to_string(c.reverse) + " biases=" + std::to_string(c.biases) +
                             " zero_state_view=" + std::to_string(c.zero_state_view) +
                             " transposed_weight=" + std::to_string(c.transposed_weight);
    expect_agree([&](Side& sd, int* rc) { return lstm_call(sd, c, 2, rc); }, what, {tol, tol, tol});
  }
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

// A call refused with code 1 and a message naming the op and the argument.
void expect_refused(const ShimCase& c, int rc, const std::string& op, const std::string& arg) {
  EXPECT_EQ(rc, 1) << op;
  const std::string msg = c.last_error();
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument '" + arg + "'"), std::string::npos) << msg;
}

TEST(ShimReference, SortAndTopkMatchNaiveOrdering) {
  NEED_SHIM();
  ShimCase c;
  const auto data = tied(37, 41, 5, 6);  // ties and NaN
  for (int desc = 0; desc < 2; ++desc) {
    AtenTensorHandle x = make(c.sd, data, Dt::F64, {37}, {1});
    AtenTensorHandle v = nullptr, i = nullptr;
    int32_t stable = 1;
    ASSERT_EQ(c.a.aoti_torch_cpu_sort_stable(x, &stable, 0, desc, &v, &i), 0);
    c.sd.keep(v), c.sd.keep(i);
    // Naive: stable insertion by (NaN last ascending / first descending).
    std::vector<int64_t> want(37);
    std::iota(want.begin(), want.end(), 0);
    auto rank = [&](int64_t k) { return std::isnan(data[k]) ? (desc ? -kInf : kInf) : (desc ? -data[k] : data[k]); };
    std::stable_sort(want.begin(), want.end(), [&](int64_t p, int64_t q) { return rank(p) < rank(q); });
    const auto vi = values(c.a, i), vv = values(c.a, v);
    for (int k = 0; k < 37; ++k) {
      EXPECT_EQ(vi[k], static_cast<double>(want[k])) << "descending=" << desc << " position " << k;
      EXPECT_TRUE(vv[k] == data[want[k]] || (std::isnan(vv[k]) && std::isnan(data[want[k]])));
    }
    // topk: the k first values of that order, as a multiset.
    for (int sorted = 0; sorted < 2; ++sorted) {
      AtenTensorHandle tv = nullptr, ti = nullptr;
      ASSERT_EQ(c.a.aoti_torch_cpu_topk(x, 5, 0, desc, sorted, &tv, &ti), 0);
      c.sd.keep(tv), c.sd.keep(ti);
      std::vector<double> got = values(c.a, tv), expect;
      const auto idx = values(c.a, ti);
      for (int k = 0; k < 5; ++k) {
        const double at = data[static_cast<size_t>(idx[k])];
        EXPECT_TRUE(at == got[k] || (std::isnan(at) && std::isnan(got[k])));
      }
      // largest (desc=1) / smallest: compare against the sorted order above, ascending.
      std::vector<int64_t> order(37);
      std::iota(order.begin(), order.end(), 0);
      auto r2 = [&](int64_t k) { return std::isnan(data[k]) ? (desc ? -kInf : kInf) : (desc ? -data[k] : data[k]); };
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return r2(p) < r2(q); });
      for (int k = 0; k < 5; ++k) expect.push_back(r2(order[k]));
      std::vector<double> got_rank;
      for (double g : got) got_rank.push_back(std::isnan(g) ? (desc ? -kInf : kInf) : (desc ? -g : g));
      std::sort(got_rank.begin(), got_rank.end());
      EXPECT_EQ(got_rank, expect) << "topk largest=" << desc << " sorted=" << sorted;
      if (sorted) {
        EXPECT_TRUE(std::is_sorted(got_rank.begin(), got_rank.end()));
      }
    }
  }
}

TEST(ShimReference, CumprodSearchsortedAndSelectMatchLoops) {
  NEED_SHIM();
  ShimCase c;
  // cumprod of int32 along dim 0 of a [3, 4] promoted to int64.
  const std::vector<double> m = {1, -2, 3, 0, 2, 2, -1, 5, 3, 1, 2, -2};
  AtenTensorHandle x = make(c.sd, m, Dt::I32, {3, 4}, {4, 1});
  AtenTensorHandle cp = nullptr;
  ASSERT_EQ(c.a.aoti_torch_cpu_cumprod(x, 0, nullptr, &cp), 0);
  c.sd.keep(cp);
  std::vector<double> want = m;
  for (int r = 1; r < 3; ++r)
    for (int k = 0; k < 4; ++k) want[r * 4 + k] *= want[(r - 1) * 4 + k];
  EXPECT_EQ(values(c.a, cp), want);
  // searchsorted against a linear scan, both sides.
  const std::vector<double> seq = {0, 1, 1, 1, 4, 6, 6, 9};
  const std::vector<double> probes = {-1, 0, 1, 2, 4, 5, 6, 9, 10};
  for (int right = 0; right < 2; ++right) {
    AtenTensorHandle s = make(c.sd, seq, Dt::F32, {8}, {1});
    AtenTensorHandle p = make(c.sd, probes, Dt::F32, {9}, {1});
    AtenTensorHandle out = nullptr;
    ASSERT_EQ(c.a.aoti_torch_cpu_searchsorted_Tensor(s, p, 0, right, nullptr, nullptr, &out), 0);
    c.sd.keep(out);
    const auto got = values(c.a, out);
    for (size_t k = 0; k < probes.size(); ++k) {
      int64_t n = 0;
      for (double b : seq) n += right ? (b <= probes[k]) : (b < probes[k]);
      EXPECT_EQ(got[k], static_cast<double>(n)) << "right=" << right << " probe " << probes[k];
    }
  }
  // nonzero, masked_select, repeat_interleave.
  AtenTensorHandle nz = nullptr;
  AtenTensorHandle t = make(c.sd, m, Dt::I32, {4, 3}, {1, 4});  // transposed view
  ASSERT_EQ(c.a.aoti_torch_cpu_nonzero(t, &nz), 0);
  c.sd.keep(nz);
  std::vector<double> coords;
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 3; ++k)
      if (m[k * 4 + r] != 0) coords.push_back(r), coords.push_back(k);
  EXPECT_EQ(values(c.a, nz), coords);
  AtenTensorHandle mask = make(c.sd, {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0}, Dt::Bool, {4, 3}, {3, 1});
  AtenTensorHandle ms = nullptr;
  ASSERT_EQ(c.a.aoti_torch_cpu_masked_select(t, mask, &ms), 0);
  c.sd.keep(ms);
  std::vector<double> sel;
  const std::vector<double> mv = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0};
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 3; ++k)
      if (mv[r * 3 + k] != 0) sel.push_back(m[k * 4 + r]);
  EXPECT_EQ(values(c.a, ms), sel);
  AtenTensorHandle reps = make(c.sd, {2, 0, 3}, Dt::I64, {3}, {1});
  AtenTensorHandle ri = nullptr;
  ASSERT_EQ(c.a.aoti_torch_cpu_repeat_interleave_Tensor(reps, nullptr, &ri), 0);
  c.sd.keep(ri);
  EXPECT_EQ(values(c.a, ri), (std::vector<double>{0, 0, 2, 2, 2}));
}

TEST(ShimReference, ScatterReduceMatchesLoops) {
  NEED_SHIM();
  ShimCase c;
  const std::vector<double> self = {1, 2, 3, 4, 5, 6};
  const std::vector<double> src = {10, 20, 30, 40, 50};
  const std::vector<double> idx = {0, 2, 0, 5, 2};
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (int include_self = 0; include_self < 2; ++include_self) {
      AtenTensorHandle s = make(c.sd, self, Dt::F64, {6}, {1});
      AtenTensorHandle sr = make(c.sd, src, Dt::F64, {5}, {1});
      AtenTensorHandle ix = make(c.sd, idx, Dt::I64, {5}, {1});
      AtenTensorHandle out = c.sd.empty({6}, {1}, code(c.a, Dt::F64));
      ASSERT_EQ(c.a.aoti_torch_cpu_scatter_reduce_two_out(out, s, 0, ix, sr, reduce, include_self), 0);
      std::vector<double> want = self;
      const std::string r = reduce;
      for (int k = 0; k < 6; ++k) {
        std::vector<double> contrib;
        if (include_self) contrib.push_back(self[k]);
        bool hit = false;
        for (int j = 0; j < 5; ++j) {
          if (idx[j] == k) contrib.push_back(src[j]), hit = true;
        }
        if (!hit) continue;
        double acc = r == "prod" ? 1 : r == "amax" ? -kInf : r == "amin" ? kInf : 0;
        for (double v : contrib) {
          if (r == "sum" || r == "mean") acc += v;
          if (r == "prod") acc *= v;
          if (r == "amax") acc = std::max(acc, v);
          if (r == "amin") acc = std::min(acc, v);
        }
        if (r == "mean") acc /= static_cast<double>(contrib.size());
        want[k] = acc;
      }
      EXPECT_EQ(values(c.a, out), want) << reduce << " include_self=" << include_self;
    }
  }
}

TEST(ShimReference, BadArgumentsNameOpAndArgument) {
  NEED_SHIM();
  ShimCase c;
  AtenTensorHandle f = make(c.sd, {3, 1, 2, 0, 5, 4}, Dt::F32, {2, 3}, {3, 1});
  AtenTensorHandle i64 = make(c.sd, {0, 1, 0}, Dt::I64, {1, 3}, {3, 1});
  AtenTensorHandle cplx = nullptr;
  const int64_t sz[1] = {2}, st[1] = {1};
  ASSERT_EQ(c.a.aoti_torch_empty_strided(1, sz, st, c.a.aoti_torch_dtype_complex64(), 0, 0, &cplx), 0);
  c.sd.keep(cplx);
  AtenTensorHandle v = nullptr, i = nullptr, o = nullptr;
  auto expect_fail = [&](int rc, const std::string& op, const std::string& arg) { expect_refused(c, rc, op, arg); };
  expect_fail(c.a.aoti_torch_cpu_sort_stable(f, nullptr, 2, 0, &v, &i), "aoti_torch_cpu_sort_stable", "dim");
  expect_fail(c.a.aoti_torch_cpu_sort_stable(cplx, nullptr, 0, 0, &v, &i), "aoti_torch_cpu_sort_stable", "self");
  expect_fail(c.a.aoti_torch_cpu_topk(f, 4, 1, 1, 1, &v, &i), "aoti_torch_cpu_topk", "k");
  expect_fail(c.a.aoti_torch_cpu_cumprod(cplx, 0, nullptr, &o), "aoti_torch_cpu_cumprod", "self");
  const char* bad_side = "up";
  expect_fail(c.a.aoti_torch_cpu_searchsorted_Tensor(f, f, 0, 0, &bad_side, nullptr, &o),
              "aoti_torch_cpu_searchsorted_Tensor", "side");
  AtenTensorHandle f1 = make(c.sd, {1, 2, 3}, Dt::F32, {3}, {1});
  expect_fail(c.a.aoti_torch_cpu_searchsorted_Tensor(f1, i64, 0, 0, nullptr, nullptr, &o),
              "aoti_torch_cpu_searchsorted_Tensor", "self");  // mixed dtypes: refused
  expect_fail(c.a.aoti_torch_cpu_bucketize_Tensor(f, f, 0, 0, &o), "aoti_torch_cpu_bucketize_Tensor", "boundaries");
  expect_fail(c.a.aoti_torch_cpu_nonzero(cplx, &o), "aoti_torch_cpu_nonzero", "self");
  expect_fail(c.a.aoti_torch_cpu_masked_select(f, f, &o), "aoti_torch_cpu_masked_select", "mask");
  expect_fail(c.a.aoti_torch_cpu_repeat_interleave_Tensor(f, nullptr, &o), "aoti_torch_cpu_repeat_interleave_Tensor",
              "repeats");
  AtenTensorHandle out = c.sd.empty({2, 3}, {3, 1}, code(c.a, Dt::F32));
  expect_fail(c.a.aoti_torch_cpu_scatter_reduce_two_out(out, f, 0, i64, f, "median", 1),
              "aoti_torch_cpu_scatter_reduce_two_out", "reduce");
  AtenTensorHandle far = make(c.sd, {0, 7, 0}, Dt::I64, {1, 3}, {3, 1});
  expect_fail(c.a.aoti_torch_cpu_scatter_src_out(out, f, 1, far, f), "aoti_torch_cpu_scatter_src_out", "index");
  expect_fail(c.a.aoti_torch_cpu_scatter_value_out(out, f, 0, f, 1.0), "aoti_torch_cpu_scatter_value_out", "index");
}

TEST(ShimReference, SecondBatchMatchesLoops) {
  NEED_SHIM();
  ShimCase c;
  // _weight_int8pack_mm: out[m, n] = scales[n] * Σ x[m, k] w[n, k].
  const std::vector<double> x = {1, -2, 0.5, 3, 0, 1}, w = {1, 2, 3, -4, 5, -6}, sc = {0.5, 2};
  AtenTensorHandle xh = make(c.sd, x, Dt::F32, {2, 3}, {3, 1});
  AtenTensorHandle wh = make(c.sd, w, Dt::I8, {2, 3}, {3, 1});
  AtenTensorHandle sh = make(c.sd, sc, Dt::F32, {2}, {1});
  AtenTensorHandle o = nullptr;
  ASSERT_EQ(c.a.aoti_torch_cpu__weight_int8pack_mm(xh, wh, sh, &o), 0);
  c.sd.keep(o);
  std::vector<double> want(4);
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 3; ++k) want[m * 2 + n] += x[m * 3 + k] * w[n * 3 + k];
      want[m * 2 + n] *= sc[n];
    }
  EXPECT_EQ(values(c.a, o), want);

  // Transposed convolution: each input element scatters weight * x into
  // output[i * stride - padding + k * dilation] (1-d, groups 2, bias).
  const int64_t cin = 4, cog = 2, groups = 2, len = 5, kk = 3, stride = 2, pad = 1, dil = 2, opad = 1;
  const int64_t olen = (len - 1) * stride - 2 * pad + dil * (kk - 1) + opad + 1;
  const auto xv = spread(cin * len, 1, -1, 1), wv = spread(cin * cog * kk, 2, -1, 1),
             bv = spread(cog * groups, 3, -1, 1);
  AtenTensorHandle xt = make(c.sd, xv, Dt::F64, {1, cin, len}, {cin * len, len, 1});
  AtenTensorHandle wt = make(c.sd, wv, Dt::F64, {cin, cog, kk}, {cog * kk, kk, 1});
  AtenTensorHandle bt = make(c.sd, bv, Dt::F64, {cog * groups}, {1});
  const int64_t s1[1] = {stride}, p1[1] = {pad}, d1[1] = {dil}, op1[1] = {opad};
  AtenTensorHandle y = nullptr;
  ASSERT_EQ(c.a.aoti_torch_cpu_convolution(xt, wt, &bt, s1, 1, p1, 1, d1, 1, 1, op1, 1, groups, &y), 0);
  c.sd.keep(y);
  std::vector<double> yw(static_cast<size_t>(cog * groups * olen));
  for (int64_t oc = 0; oc < cog * groups; ++oc)
    for (int64_t j = 0; j < olen; ++j) yw[oc * olen + j] = bv[oc];
  for (int64_t ic = 0; ic < cin; ++ic) {
    const int64_t g = ic / (cin / groups);
    for (int64_t o2 = 0; o2 < cog; ++o2)
      for (int64_t i = 0; i < len; ++i)
        for (int64_t k = 0; k < kk; ++k) {
          const int64_t j = i * stride - pad + k * dil;
          if (j >= 0 && j < olen) yw[(g * cog + o2) * olen + j] += xv[ic * len + i] * wv[(ic * cog + o2) * kk + k];
        }
  }
  EXPECT_EQ(describe(c.a, y).sizes, (std::vector<int64_t>{1, cog * groups, olen}));
  EXPECT_EQ(close(values(c.a, y), yw, 1e-12, 1e-12), "");

  // baddbmm: beta * self + alpha * product, self broadcast, beta 0 ignores NaN.
  AtenTensorHandle b1 = make(c.sd, {1, 2, 3, 4}, Dt::F64, {1, 2, 2}, {4, 2, 1});
  AtenTensorHandle b2 = make(c.sd, {1, 0, 0, 1}, Dt::F64, {1, 2, 2}, {4, 2, 1});
  AtenTensorHandle self = make(c.sd, {10, kNaN}, Dt::F64, {2}, {1});
  AtenTensorHandle out = c.sd.empty({1, 2, 2}, {4, 2, 1}, code(c.a, Dt::F64));
  ASSERT_EQ(c.a.aoti_torch_cpu_baddbmm_out(out, self, b1, b2, 0.0, 2.0), 0);
  EXPECT_EQ(values(c.a, out), (std::vector<double>{2, 4, 6, 8}));
  AtenTensorHandle self2 = make(c.sd, {10, 20}, Dt::F64, {2}, {1});
  ASSERT_EQ(c.a.aoti_torch_cpu_baddbmm_out(out, self2, b1, b2, 0.5, 1.0), 0);
  EXPECT_EQ(values(c.a, out), (std::vector<double>{6, 12, 8, 14}));

  // cdist: each p against its formula, both methods for p = 2.
  const std::vector<double> a = {0, 0, 1, 2, -1, 3}, b = {1, 1, 0, 2};
  for (double p : {0.0, 1.0, 2.0, 3.0, kInf}) {
    for (int64_t mode : {1, 2}) {
      AtenTensorHandle ah = make(c.sd, a, Dt::F64, {3, 2}, {2, 1});
      AtenTensorHandle bh = make(c.sd, b, Dt::F64, {2, 2}, {2, 1});
      AtenTensorHandle d = nullptr;
      ASSERT_EQ(c.a.aoti_torch_cpu__cdist_forward(ah, bh, p, &mode, &d), 0);
      c.sd.keep(d);
      std::vector<double> dw;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j) {
          double acc = 0;
          for (int k = 0; k < 2; ++k) {
            const double diff = std::fabs(a[i * 2 + k] - b[j * 2 + k]);
            if (p == 0)
              acc += diff != 0;
            else if (std::isinf(p))
              acc = std::max(acc, diff);
            else
              acc += std::pow(diff, p);
          }
          dw.push_back(p == 0 || std::isinf(p) ? acc : std::pow(acc, 1 / p));
        }
      EXPECT_EQ(close(values(c.a, d), dw, 1e-12, 1e-12), "") << "p=" << p << " mode=" << mode;
    }
  }

  // kthvalue against a sort (values; the index points at an equal value).
  const auto kv = tied(23, 9, 4, 5);
  for (int64_t k = 1; k <= 23; ++k) {
    AtenTensorHandle t = make(c.sd, kv, Dt::F64, {23}, {1});
    AtenTensorHandle v = nullptr, i = nullptr;
    ASSERT_EQ(c.a.aoti_torch_cpu_kthvalue(t, k, 0, 0, &v, &i), 0);
    c.sd.keep(v);
    c.sd.keep(i);
    std::vector<double> sorted = kv;
    std::sort(sorted.begin(), sorted.end(),
              [](double p, double q) { return (!std::isnan(p) && std::isnan(q)) || p < q; });
    const double got = values(c.a, v)[0];
    const int64_t at = static_cast<int64_t>(values(c.a, i)[0]);
    EXPECT_TRUE((std::isnan(got) && std::isnan(sorted[k - 1])) || got == sorted[k - 1]) << "k=" << k;
    EXPECT_TRUE((std::isnan(got) && std::isnan(kv[at])) || kv[at] == got) << "k=" << k;
  }

  // embedding_bag: sum, mean and max over bags [0, 2), [2, 2), [2, 5).
  const std::vector<double> wt2 = {1, 2, 3, 4, 5, 6, 7, 8}, ix = {0, 3, 1, 2, 1};
  for (int64_t mode = 0; mode <= 2; ++mode) {
    AtenTensorHandle we = make(c.sd, wt2, Dt::F32, {4, 2}, {2, 1});
    AtenTensorHandle ih = make(c.sd, ix, Dt::I64, {5}, {1});
    AtenTensorHandle oh = make(c.sd, {0, 2, 2}, Dt::I64, {3}, {1});
    AtenTensorHandle r[4] = {};
    ASSERT_EQ(c.a.aoti_torch_cpu__embedding_bag(we, ih, oh, 0, mode, 0, nullptr, 0, -1, &r[0], &r[1], &r[2], &r[3]), 0);
    for (auto h : r) c.sd.keep(h);
    const std::vector<std::vector<double>> want_out = {
        {8, 10, 0, 0, 11, 14}, {4, 5, 0, 0, 11.0 / 3, 14.0 / 3}, {7, 8, 0, 0, 5, 6}};
    EXPECT_EQ(close(values(c.a, r[0]), want_out[mode], 1e-6, 1e-6), "") << "mode " << mode;
    const std::vector<double> sizes = mode == 0 ? std::vector<double>{0, 0, 0} : std::vector<double>{2, 0, 3};
    EXPECT_EQ(values(c.a, r[2]), sizes);
    if (mode == 2) {
      EXPECT_EQ(values(c.a, r[3]), (std::vector<double>{3, 3, 0, 0, 2, 2}));
    }
    if (mode != 0) {
      EXPECT_EQ(values(c.a, r[1]), (std::vector<double>{0, 0, 2, 2, 2}));
    }
  }
}

TEST(ShimReference, SecondBatchBadArgumentsNameOpAndArgument) {
  NEED_SHIM();
  ShimCase c;
  auto expect_fail = [&](int rc, const std::string& op, const std::string& arg) { expect_refused(c, rc, op, arg); };
  AtenTensorHandle f = make(c.sd, spread(24, 1, -1, 1), Dt::F32, {3, 8}, {8, 1});
  AtenTensorHandle w = make(c.sd, int8s(40, 2), Dt::I8, {5, 8}, {8, 1});
  AtenTensorHandle strided = make(c.sd, spread(10, 3, 0, 1), Dt::F32, {5}, {2});
  AtenTensorHandle o = nullptr, o2 = nullptr, o3 = nullptr, o4 = nullptr;
  const std::string mm = "aoti_torch_cpu__weight_int8pack_mm";
  expect_fail(c.a.aoti_torch_cpu__weight_int8pack_mm(f, w, strided, &o), mm, "scales");
  expect_fail(c.a.aoti_torch_cpu__weight_int8pack_mm(f, f, strided, &o), mm, "mat2");
  AtenTensorHandle x = make(c.sd, spread(50, 1, -1, 1), Dt::F32, {1, 2, 5, 5}, {50, 25, 5, 1});
  AtenTensorHandle wc = make(c.sd, spread(18, 2, -1, 1), Dt::F32, {2, 1, 3, 3}, {9, 9, 3, 1});
  const int64_t two[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
  expect_fail(c.a.aoti_torch_cpu_convolution(x, wc, nullptr, one, 2, zero, 2, one, 2, 1, two, 2, 1, &o),
              "aoti_torch_cpu_convolution", "output_padding");
  (void)two;
  AtenTensorHandle i3 = make(c.sd, {0, 1, 2}, Dt::I64, {3}, {1});
  expect_fail(c.a.aoti_torch_cpu_baddbmm_out(f, f, i3, i3, 1, 1), "aoti_torch_cpu_baddbmm_out", "batch1");
  int64_t bad_mode = 3;
  expect_fail(c.a.aoti_torch_cpu__cdist_forward(f, f, 2.0, &bad_mode, &o), "aoti_torch_cpu__cdist_forward",
              "compute_mode");
  expect_fail(c.a.aoti_torch_cpu__cdist_forward(f, f, -1.0, nullptr, &o), "aoti_torch_cpu__cdist_forward", "p");
  expect_fail(c.a.aoti_torch_cpu_kthvalue(f, 9, 1, 0, &o, &o2), "aoti_torch_cpu_kthvalue", "k");
  AtenTensorHandle offs = make(c.sd, {0}, Dt::I64, {1}, {1});
  AtenTensorHandle big = make(c.sd, {0, 9}, Dt::I64, {2}, {1});
  expect_fail(c.a.aoti_torch_cpu__embedding_bag(f, big, offs, 0, 0, 0, nullptr, 0, -1, &o, &o2, &o3, &o4),
              "aoti_torch_cpu__embedding_bag", "indices");
  expect_fail(c.a.aoti_torch_cpu__embedding_bag(f, i3, offs, 0, 3, 0, nullptr, 0, -1, &o, &o2, &o3, &o4),
              "aoti_torch_cpu__embedding_bag", "mode");
}

TEST(ShimReference, LstmBatchFirstAndRefusals) {
  NEED_SHIM();
  ShimCase c;
  // batch_first reads [N, T, I] and writes [N, T, H]: the same numbers as the
  // time-major call on the transposed input.
  const int64_t t = 4, n = 3, in = 5, h = 6, g = 4 * h;
  const auto xs = spread(t * n * in, 21, -1, 1);
  AtenTensorHandle x_tm = make(c.sd, xs, Dt::F32, {t, n, in}, {n * in, in, 1});
  AtenTensorHandle x_bf = make(c.sd, xs, Dt::F32, {n, t, in}, {in, n * in, 1});  // the same storage, batch first
  AtenTensorHandle wi = make(c.sd, spread(g * in, 22, -0.5, 0.5), Dt::F32, {g, in}, {in, 1});
  AtenTensorHandle wh = make(c.sd, spread(g * h, 23, -0.5, 0.5), Dt::F32, {g, h}, {h, 1});
  AtenTensorHandle b = make(c.sd, spread(g, 24, -0.5, 0.5), Dt::F32, {g}, {1});
  AtenTensorHandle s0 = make(c.sd, spread(n * h, 25, -1, 1), Dt::F32, {1, n, h}, {n * h, h, 1});
  AtenTensorHandle r[2][4] = {};
  for (int bf = 0; bf < 2; ++bf) {
    ASSERT_EQ(c.a.aoti_torch_cpu_mkldnn_rnn_layer(bf ? x_bf : x_tm, wi, wh, b, b, s0, s0, 1, nullptr, 0, 2, h, 1, 1, 0,
                                                  bf, 0, &r[bf][0], &r[bf][1], &r[bf][2], &r[bf][3]),
              0)
        << c.last_error();
    for (auto& hd : r[bf]) c.sd.keep(hd);
  }
  EXPECT_EQ(describe(c.a, r[1][0]).sizes, (std::vector<int64_t>{n, t, h}));
  const auto tm = values(c.a, r[0][0]), bfv = values(c.a, r[1][0]);
  for (int64_t ti = 0; ti < t; ++ti)
    for (int64_t ni = 0; ni < n; ++ni)
      for (int64_t k = 0; k < h; ++k)
        EXPECT_EQ(bfv[(ni * t + ti) * h + k], tm[(ti * n + ni) * h + k]) << ti << " " << ni << " " << k;
  EXPECT_EQ(values(c.a, r[1][1]), values(c.a, r[0][1]));
  EXPECT_EQ(values(c.a, r[1][2]), values(c.a, r[0][2]));
  // Refused, naming the argument: GRU mode, packed sequences, float64, a
  // hidden size that disagrees with W_hh.
  const std::string op = "aoti_torch_cpu_mkldnn_rnn_layer";
  AtenTensorHandle o[4] = {};
  const int64_t sizes[2] = {2, 2};
  expect_refused(c,
                 c.a.aoti_torch_cpu_mkldnn_rnn_layer(x_tm, wi, wh, b, b, s0, s0, 0, nullptr, 0, 3, h, 1, 1, 0, 0, 0,
                                                     &o[0], &o[1], &o[2], &o[3]),
                 op, "mode");
  expect_refused(c,
                 c.a.aoti_torch_cpu_mkldnn_rnn_layer(x_tm, wi, wh, b, b, s0, s0, 0, sizes, 2, 2, h, 1, 1, 0, 0, 0,
                                                     &o[0], &o[1], &o[2], &o[3]),
                 op, "batch_sizes");
  AtenTensorHandle x64 = make(c.sd, xs, Dt::F64, {t, n, in}, {n * in, in, 1});
  expect_refused(c,
                 c.a.aoti_torch_cpu_mkldnn_rnn_layer(x64, wi, wh, b, b, s0, s0, 0, nullptr, 0, 2, h, 1, 1, 0, 0, 0,
                                                     &o[0], &o[1], &o[2], &o[3]),
                 op, "input");
  expect_refused(c,
                 c.a.aoti_torch_cpu_mkldnn_rnn_layer(x_tm, wi, wh, b, b, s0, s0, 0, nullptr, 0, 2, h + 1, 1, 1, 0, 0, 0,
                                                     &o[0], &o[1], &o[2], &o[3]),
                 op, "weight0");
}
}  // namespace
