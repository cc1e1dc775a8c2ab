// The differential suite for the shim's scans and the ops added with them
// (since aotrun-shim 1.4): cummax, cummin, logcumsumexp, searchsorted_Scalar
// and nonzero_static. Each case makes the same calls on real libtorch
// (AOTRUN_LIBTORCH) and on the shim and compares return codes, sizes,
// strides, dtypes and values: exactly (NaN equal to NaN) for the running
// extrema, their indices, insertion points and coordinates; within
// assert_close's tolerances for logcumsumexp. Ties, NaN, ±inf, negative dims,
// transposed, gapped and broadcast inputs, empty and 0-d tensors and every
// dtype libtorch takes (and some it refuses) are covered. Skips, saying why,
// without libtorch; the ShimReference tests check the shim alone against
// naive loops and its refusals, and need no libtorch.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "differential.hpp"
#include "dtypes.hpp"

namespace {

using aotrun_shim_test::bytes_of;
using aotrun_shim_test::code;
using aotrun_shim_test::Dt;
using aotrun_shim_test::dt_name;
using aotrun_shim_test::encode;
using aotrun_shim_test::f16_value;
using aotrun_shim_test::is_float;
using aotrun_shim_test::providers;
using aotrun_shim_test::Side;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The functions under test, resolved from the same loaded libraries as the
// ShimApi tables (RTLD_NOLOAD), kept out of shim_api.hpp.
struct ScanApi {
  int32_t (*cummax)(AtenTensorHandle, int64_t, AtenTensorHandle*, AtenTensorHandle*) = nullptr;
  int32_t (*cummin)(AtenTensorHandle, int64_t, AtenTensorHandle*, AtenTensorHandle*) = nullptr;
  int32_t (*logcumsumexp)(AtenTensorHandle, int64_t, AtenTensorHandle*) = nullptr;
  int32_t (*searchsorted_scalar)(AtenTensorHandle, double, int32_t, int32_t, const char**, AtenTensorHandle*,
                                 AtenTensorHandle*) = nullptr;
  int32_t (*nonzero_static)(AtenTensorHandle, int64_t, int64_t, AtenTensorHandle*) = nullptr;
  std::string resolve(void* h) {
    if (h == nullptr) return "the library";
#define SCAN_RESOLVE(field, name)                               \
  field = reinterpret_cast<decltype(field)>(::dlsym(h, #name)); \
  if (field == nullptr) return #name;
    SCAN_RESOLVE(cummax, aoti_torch_cpu_cummax)
    SCAN_RESOLVE(cummin, aoti_torch_cpu_cummin)
    SCAN_RESOLVE(logcumsumexp, aoti_torch_cpu_logcumsumexp)
    SCAN_RESOLVE(searchsorted_scalar, aoti_torch_cpu_searchsorted_Scalar)
    SCAN_RESOLVE(nonzero_static, aoti_torch_cpu_nonzero_static)
#undef SCAN_RESOLVE
    return "";
  }
};

struct ScanProviders {
  ScanApi torch, shim;
  std::string skip;
};

const ScanProviders& scan_providers() {
  static ScanProviders* p = [] {
    auto* sp = new ScanProviders;
    sp->skip = providers().skip;
    if (!sp->skip.empty()) return sp;
    const std::string cpu = std::string(std::getenv("AOTRUN_LIBTORCH")) + "/libtorch_cpu.so";
    std::string missing = sp->torch.resolve(::dlopen(cpu.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD));
    if (!missing.empty()) {
      sp->skip = "libtorch lacks " + missing;
      return sp;
    }
    missing = sp->shim.resolve(::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD));
    if (!missing.empty()) sp->skip = "the shim lacks " + missing;
    return sp;
  }();
  return *p;
}

#define NEED_LIBTORCH_SCAN()                 \
  do {                                       \
    if (!scan_providers().skip.empty()) {    \
      GTEST_SKIP() << scan_providers().skip; \
    }                                        \
  } while (0)

const std::vector<Dt> kTorchRealDtypes = {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64,
                                          Dt::I32, Dt::I16, Dt::I8,   Dt::U8,  Dt::Bool};
const std::vector<Dt> kFloatDtypes = {Dt::F32, Dt::F64, Dt::BF16, Dt::F16};

// A blob tensor of dtype d over `storage`. Integer dtypes do not hold
// storage as encode would: NaN and ±inf become 0, the rest is doubled and
// truncated (distinct integers, ties kept), and unsigned ones take its
// absolute value.
AtenTensorHandle make(Side& sd, std::vector<double> storage, Dt d, std::vector<int64_t> sizes,
                      std::vector<int64_t> strides, int64_t offset = 0) {
  if (!is_float(d)) {
    for (double& x : storage) {
      if (std::isnan(x) || std::isinf(x)) x = 0;
      if (d != Dt::Bool) x = std::trunc(x * 2);  // distinct integers, ties kept
      if (d == Dt::U8 || d == Dt::U16 || d == Dt::U32 || d == Dt::U64) x = std::fabs(x);
    }
  }
  return sd.blob(encode(storage, d), std::move(sizes), std::move(strides), code(sd.a, d), offset);
}

// The logical elements in row-major order, as doubles, for every dtype above.
std::vector<double> read(const ShimApi& a, AtenTensorHandle h) {
  const TensorDesc d = describe(a, h);
  void* data = nullptr;
  a.aoti_torch_get_data_ptr(h, &data);
  const char* p = static_cast<const char*>(data);
  std::vector<double> out(static_cast<size_t>(d.numel));
  for (int64_t i = 0; i < d.numel; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = d.dim - 1; k >= 0; --k) {
      off += (rem % d.sizes[k]) * d.strides[k];
      rem /= d.sizes[k];
    }
    auto get = [&](auto tag) {
      decltype(tag) v;
      std::memcpy(&v, p + off * static_cast<int64_t>(sizeof v), sizeof v);
      return v;
    };
    const int32_t t = d.dtype;
    if (t == a.aoti_torch_dtype_float32()) {
      out[i] = get(float{});
    } else if (t == a.aoti_torch_dtype_float64()) {
      out[i] = get(double{});
    } else if (t == a.aoti_torch_dtype_bfloat16()) {
      out[i] = bf16_value(get(uint16_t{}));
    } else if (t == a.aoti_torch_dtype_float16()) {
      out[i] = f16_value(get(uint16_t{}));
    } else if (t == a.aoti_torch_dtype_int64()) {
      out[i] = static_cast<double>(get(int64_t{}));
    } else if (t == a.aoti_torch_dtype_int32()) {
      out[i] = get(int32_t{});
    } else if (t == a.aoti_torch_dtype_int16()) {
      out[i] = get(int16_t{});
    } else if (t == a.aoti_torch_dtype_int8()) {
      out[i] = get(int8_t{});
    } else if (t == a.aoti_torch_dtype_uint8() || t == a.aoti_torch_dtype_bool()) {
      out[i] = get(uint8_t{});
    } else {
      ADD_FAILURE() << "read: dtype " << t;
    }
  }
  return out;
}

int64_t span_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset = 0) {
  int64_t s = 1 + offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return offset + 1;
    s += (sizes[i] - 1) * strides[i];
  }
  return s;
}

// n values from a small set (many ties), with NaN at every `nan_every`-th
// and ±inf at every `inf_every`-th position when > 0; deterministic in seed.
std::vector<double> tied(int64_t n, uint32_t seed, int levels, int nan_every = 0, int inf_every = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = static_cast<double>(static_cast<int>((s >> 9) % (2 * levels + 1)) - levels) * 0.5;
    if (inf_every > 0 && i % inf_every == inf_every - 1) v[i] = (s >> 20) & 1 ? kInf : -kInf;
    if (nan_every > 0 && i % nan_every == nan_every - 1) v[i] = kNaN;
  }
  return v;
}

// Spread values in [lo, hi).
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
Tol lse_tol(Dt d) {
  if (d == Dt::F32) return {1.3e-6, 1e-5};
  if (d == Dt::F64) return {1e-7, 1e-7};
  if (d == Dt::BF16) return {1.6e-2, 1e-5};
  return {1e-3, 1e-5};  // float16
}

// "" when equal within tol (NaN matches NaN, inf matches the same inf).
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

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

using Call = std::function<std::vector<AtenTensorHandle>(Side&, const ScanApi&, int*)>;

// Runs `f` on both providers: the same return code and, on success, the same
// results (tols[i] for result i, exact when absent).
void expect_agree(const Call& f, const std::string& what, std::vector<Tol> tols = {}) {
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  int rt = -1, rs = -1;
  const std::vector<AtenTensorHandle> ht = f(t, scan_providers().torch, &rt), hs = f(s, scan_providers().shim, &rs);
  ASSERT_EQ(rs, rt) << what;
  if (rt != 0) return;
  ASSERT_EQ(hs.size(), ht.size()) << what;
  for (size_t i = 0; i < ht.size(); ++i) {
    ASSERT_NE(ht[i], nullptr) << what;
    ASSERT_NE(hs[i], nullptr) << what;
    const TensorDesc dt = describe(t.a, ht[i]), ds = describe(s.a, hs[i]);
    EXPECT_EQ(ds.sizes, dt.sizes) << what << " result " << i;
    EXPECT_EQ(ds.strides, dt.strides) << what << " result " << i;
    EXPECT_EQ(ds.dtype, dt.dtype) << what << " result " << i;
    const auto vt = read(t.a, ht[i]), vs = read(s.a, hs[i]);
    EXPECT_EQ(compare(vs, vt, i < tols.size() ? tols[i] : kExact), "")
        << what << " result " << i << "\n  shim     " << list(vs) << "\n  libtorch " << list(vt);
  }
}

std::vector<AtenTensorHandle> kept(Side& sd, std::initializer_list<AtenTensorHandle> hs) {
  std::vector<AtenTensorHandle> out;
  for (auto h : hs) out.push_back(sd.keep(h));
  return out;
}

struct Layout {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

// Layouts with the dims each is scanned along.
const std::vector<std::pair<Layout, std::vector<int64_t>>>& scan_layouts() {
  static const std::vector<std::pair<Layout, std::vector<int64_t>>> l = {
      {{{6, 9}, {9, 1}}, {1, 0, -1, -2}},
      {{{6, 9}, {1, 6}}, {1, 0}},                // transposed
      {{{4, 5}, {12, 2}, 1}, {1, -2}},           // gaps and an offset
      {{{2, 3, 7}, {21, 7, 1}}, {2, 1, 0, -3}},  // 3-d
      {{{2, 3, 7}, {1, 14, 2}}, {0, 2}},         // permuted
      {{{50}, {1}}, {0, -1}},
      {{{3, 20}, {1, 0}}, {1, 0}},  // a broadcast line
      {{{1, 1}, {1, 1}}, {0, 1}},
      {{{0, 5}, {5, 1}}, {1, 0}},
      {{{3, 0}, {1, 1}}, {1, 0}},
      {{{}, {}}, {0, -1}},
  };
  return l;
}

// --- cummax / cummin ----------------------------------------------------------

TEST(DifferentialScan, CummaxCummin) {
  NEED_LIBTORCH_SCAN();
  for (Dt dt : kTorchRealDtypes) {
    for (const auto& [l, dims] : scan_layouts()) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      const auto data = dt == Dt::Bool ? tied(span, 5, 1) : tied(span, 11, 4, is_float(dt) ? 7 : 0, 11);
      for (int64_t dim : dims) {
        for (int mx = 0; mx < 2; ++mx) {
          expect_agree(
              [&](Side& sd, const ScanApi& f, int* rc) {
                AtenTensorHandle x = make(sd, data, dt, l.sizes, l.strides, l.offset);
                AtenTensorHandle v = nullptr, i = nullptr;
                *rc = (mx ? f.cummax : f.cummin)(x, dim, &v, &i);
                return kept(sd, {v, i});
              },
              std::string(mx ? "cummax " : "cummin ") + dt_name(dt) + " " + shape_str(l.sizes) + " strides " +
                  shape_str(l.strides) + " dim=" + std::to_string(dim));
        }
      }
    }
  }
}

TEST(DifferentialScan, CummaxCumminTiesNaNAndRefusals) {
  NEED_LIBTORCH_SCAN();
  // Hand-picked lines: ties at the extremum, NaN first, NaN repeated, ±inf,
  // -0.0 against 0.0, all equal.
  const std::vector<std::vector<double>> lines = {
      {1, 3, 3, 2, 3, kNaN, 5, kNaN, 1},
      {kNaN, 1, kNaN, -1, 2},
      {-kInf, -kInf, kInf, kInf, 0},
      {0.0, -0.0, 0.0, -0.0},
      {2, 2, 2, 2, 2},
      {5, 4, 3, 2, 1, 1, 0},
  };
  for (Dt dt : kTorchRealDtypes) {
    for (const auto& line : lines) {
      const int64_t n = static_cast<int64_t>(line.size());
      for (int mx = 0; mx < 2; ++mx) {
        expect_agree(
            [&](Side& sd, const ScanApi& f, int* rc) {
              AtenTensorHandle x = make(sd, line, dt, {n}, {1});
              AtenTensorHandle v = nullptr, i = nullptr;
              *rc = (mx ? f.cummax : f.cummin)(x, 0, &v, &i);
              return kept(sd, {v, i});
            },
            std::string(mx ? "cummax " : "cummin ") + dt_name(dt) + " line " + list(line));
      }
    }
  }
  // Refused by both: dims out of range, the unsigned 16/32/64-bit dtypes.
  for (int64_t dim : {2, -3}) {
    expect_agree(
        [&](Side& sd, const ScanApi& f, int* rc) {
          AtenTensorHandle x = make(sd, tied(6, 1, 3), Dt::F32, {2, 3}, {3, 1});
          AtenTensorHandle v = nullptr, i = nullptr;
          *rc = f.cummax(x, dim, &v, &i);
          return kept(sd, {v, i});
        },
        "cummax bad dim " + std::to_string(dim));
  }
  expect_agree(
      [&](Side& sd, const ScanApi& f, int* rc) {
        AtenTensorHandle x = make(sd, {1}, Dt::F32, {}, {});
        AtenTensorHandle v = nullptr, i = nullptr;
        *rc = f.cummin(x, 1, &v, &i);
        return kept(sd, {v, i});
      },
      "cummin 0-d dim 1");
  for (Dt dt : {Dt::U16, Dt::U32, Dt::U64}) {
    expect_agree(
        [&](Side& sd, const ScanApi& f, int* rc) {
          AtenTensorHandle x = make(sd, {1, 2, 3}, dt, {3}, {1});
          AtenTensorHandle v = nullptr, i = nullptr;
          *rc = f.cummax(x, 0, &v, &i);
          return kept(sd, {v, i});
        },
        std::string("cummax ") + dt_name(dt));
  }
}

// --- logcumsumexp ---------------------------------------------------------------

TEST(DifferentialScan, Logcumsumexp) {
  NEED_LIBTORCH_SCAN();
  for (Dt dt : kFloatDtypes) {
    for (const auto& [l, dims] : scan_layouts()) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      for (int kind = 0; kind < 3; ++kind) {
        // 0: moderate values; 1: large magnitudes (stability); 2: ties, NaN, ±inf.
        const auto data = kind == 0   ? spread(span, 3, -4, 4)
                          : kind == 1 ? spread(span, 9, dt == Dt::F16 ? -60000 : -1e4, dt == Dt::F16 ? 60000 : 1e4)
                                      : tied(span, 13, 3, 9, 5);
        for (int64_t dim : dims) {
          expect_agree(
              [&](Side& sd, const ScanApi& f, int* rc) {
                AtenTensorHandle x = make(sd, data, dt, l.sizes, l.strides, l.offset);
                AtenTensorHandle o = nullptr;
                *rc = f.logcumsumexp(x, dim, &o);
                return kept(sd, {o});
              },
              std::string("logcumsumexp ") + dt_name(dt) + " kind " + std::to_string(kind) + " " + shape_str(l.sizes) +
                  " strides " + shape_str(l.strides) + " dim=" + std::to_string(dim),
              {lse_tol(dt)});
        }
      }
    }
  }
}

TEST(DifferentialScan, LogcumsumexpInfinitiesAndRefusals) {
  NEED_LIBTORCH_SCAN();
  const std::vector<std::vector<double>> lines = {
      {-kInf, -kInf, -kInf},       {-kInf, -kInf, 1, kInf, -kInf, kNaN, 2},
      {kInf, kInf, -kInf, 3},      {kNaN, -kInf, kInf},
      {88, 89, 90, 700, 710, 711}, {-700, -745, -750, -800},
      {0, 0, 0, 0, 0, 0, 0, 0},    {1e-8, -1e-8, 3e-9},
  };
  for (Dt dt : kFloatDtypes) {
    for (const auto& line : lines) {
      const int64_t n = static_cast<int64_t>(line.size());
      expect_agree(
          [&](Side& sd, const ScanApi& f, int* rc) {
            AtenTensorHandle x = make(sd, line, dt, {n}, {1});
            AtenTensorHandle o = nullptr;
            *rc = f.logcumsumexp(x, -1, &o);
            return kept(sd, {o});
          },
          std::string("logcumsumexp ") + dt_name(dt) + " line " + list(line), {lse_tol(dt)});
    }
    for (double v : {-kInf, kInf, kNaN, 2.5}) {
      expect_agree(
          [&](Side& sd, const ScanApi& f, int* rc) {
            AtenTensorHandle x = make(sd, {v}, dt, {}, {});
            AtenTensorHandle o = nullptr;
            *rc = f.logcumsumexp(x, 0, &o);
            return kept(sd, {o});
          },
          std::string("logcumsumexp 0-d ") + dt_name(dt) + " " + std::to_string(v), {lse_tol(dt)});
    }
  }
  // Refused by both: integer and bool dtypes, dims out of range.
  for (Dt dt : {Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8, Dt::Bool, Dt::U16}) {
    expect_agree(
        [&](Side& sd, const ScanApi& f, int* rc) {
          AtenTensorHandle x = make(sd, {1, 2, 3}, dt, {3}, {1});
          AtenTensorHandle o = nullptr;
          *rc = f.logcumsumexp(x, 0, &o);
          return kept(sd, {o});
        },
        std::string("logcumsumexp ") + dt_name(dt));
  }
  for (int64_t dim : {2, -3}) {
    expect_agree(
        [&](Side& sd, const ScanApi& f, int* rc) {
          AtenTensorHandle x = make(sd, spread(6, 1, 0, 1), Dt::F32, {2, 3}, {3, 1});
          AtenTensorHandle o = nullptr;
          *rc = f.logcumsumexp(x, dim, &o);
          return kept(sd, {o});
        },
        "logcumsumexp bad dim " + std::to_string(dim));
  }
}

// --- searchsorted_Scalar --------------------------------------------------------

TEST(DifferentialScan, SearchsortedScalar) {
  NEED_LIBTORCH_SCAN();
  const std::vector<double> seq = {-3, -1, -1, 0, 0.5, 0.5, 0.5, 2, 3, 7, 7, 10};
  const std::vector<double> probes = {-5, -3, -1, -0.5, 0, 0.5, 0.75, 1, 2, 2.5, 7, 10, 11, kNaN, kInf, -kInf};
  const std::vector<Dt> dtypes = {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64, Dt::I32, Dt::I16,
                                  Dt::I8,  Dt::U8,  Dt::U16,  Dt::U32, Dt::U64, Dt::Bool};
  const std::vector<Layout> layouts = {{{12}, {1}}, {{6}, {2}, 1}, {{0}, {1}}, {{1}, {1}}};
  for (Dt dt : dtypes) {
    std::vector<double> s = seq;
    if (dt == Dt::U8 || dt == Dt::U16 || dt == Dt::U32 || dt == Dt::U64) {
      for (double& x : s) x += 3;  // stays sorted once made non-negative
    }
    if (dt == Dt::Bool) s = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (const Layout& l : layouts) {
      for (double p : probes) {
        for (int right = 0; right < 2; ++right) {
          for (int side = -1; side < 2; ++side) {
            if (right == 1 && side == 0) continue;  // opposites: checked below
            for (int out_int32 = 0; out_int32 < 2; ++out_int32) {
              expect_agree(
                  [&](Side& sd, const ScanApi& f, int* rc) {
                    std::vector<char> raw = encode(s, dt);
                    // Integer sequences keep their values (no doubling as make() does).
                    AtenTensorHandle b = sd.blob(raw, l.sizes, l.strides, code(sd.a, dt), l.offset);
                    const char* sides[2] = {"left", "right"};
                    AtenTensorHandle o = nullptr;
                    *rc = f.searchsorted_scalar(b, p, out_int32, right, side < 0 ? nullptr : &sides[side], nullptr, &o);
                    return kept(sd, {o});
                  },
                  std::string("searchsorted_Scalar ") + dt_name(dt) + " " + shape_str(l.sizes) + " strides " +
                      shape_str(l.strides) + " value " + std::to_string(p) + " right=" + std::to_string(right) +
                      " side=" + std::to_string(side) + " out_int32=" + std::to_string(out_int32));
            }
          }
        }
      }
    }
  }
}

TEST(DifferentialScan, SearchsortedScalarPromotionSorterAndRefusals) {
  NEED_LIBTORCH_SCAN();
  auto run = [&](const std::string& what, const std::vector<char>& raw, Dt dt, std::vector<int64_t> sizes,
                 std::vector<int64_t> strides, double value, int right, const char* side,
                 std::function<AtenTensorHandle(Side&)> sorter = nullptr) {
    for (int out_int32 = 0; out_int32 < 2; ++out_int32) {
      expect_agree(
          [&](Side& sd, const ScanApi& f, int* rc) {
            AtenTensorHandle b = sd.blob(raw, sizes, strides, code(sd.a, dt));
            AtenTensorHandle srt = sorter ? sorter(sd) : nullptr;
            AtenTensorHandle o = nullptr;
            *rc =
                f.searchsorted_scalar(b, value, out_int32, right, side ? &side : nullptr, sorter ? &srt : nullptr, &o);
            return kept(sd, {o});
          },
          what + " out_int32=" + std::to_string(out_int32));
    }
  };
  // int64 beyond float32's precision: libtorch compares in float32.
  const std::vector<int64_t> big = {
      1, 2, 16777216, 16777217, 16777218, (int64_t{1} << 53) + (int64_t{1} << 29) + 1, (int64_t{1} << 54)};
  for (double v : {16777217.0, 16777216.0, 16777218.0, 9007199791611904.0, 9007199254740992.0}) {
    for (int right = 0; right < 2; ++right) {
      run("int64 precision " + std::to_string(v), bytes_of(big), Dt::I64, {7}, {1}, v, right, nullptr);
    }
  }
  // bfloat16 / float16: the scalar is rounded to the sequence's dtype.
  for (double v : {1.003, 1.004, 1.0078125, 0.99, 1.0}) {
    for (int right = 0; right < 2; ++right) {
      run("bf16 rounding " + std::to_string(v), encode({0.5, 1.0, 1.0078125, 2}, Dt::BF16), Dt::BF16, {4}, {1}, v,
          right, nullptr);
      run("f16 rounding " + std::to_string(v), encode({0.5, 1.0, 1.0009765625, 2}, Dt::F16), Dt::F16, {4}, {1}, v,
          right, nullptr);
      run("f32 rounding " + std::to_string(v), encode({0.5, 1.0, 1.0000001192092896, 2}, Dt::F32), Dt::F32, {4}, {1}, v,
          right, nullptr);
    }
  }
  // A sorter over an unsorted sequence (contiguous and strided).
  const std::vector<double> unsorted = {5, -1, 3, 3, 0, 9, 2};
  const std::vector<int64_t> order = {1, 4, 6, 2, 3, 0, 5};
  std::vector<int64_t> gapped(14, 99);
  for (int i = 0; i < 7; ++i) gapped[2 * i] = order[i];
  for (double v : {-2.0, -1.0, 0.0, 2.5, 3.0, 5.0, 9.0, 10.0, kNaN}) {
    for (int right = 0; right < 2; ++right) {
      run("sorter " + std::to_string(v), encode(unsorted, Dt::F32), Dt::F32, {7}, {1}, v, right, nullptr,
          [&](Side& sd) { return sd.blob(bytes_of(order), {7}, {1}, code(sd.a, Dt::I64)); });
      run("strided sorter " + std::to_string(v), encode(unsorted, Dt::I32), Dt::I32, {7}, {1}, v, right, "right",
          [&](Side& sd) { return sd.blob(bytes_of(gapped), {7}, {2}, code(sd.a, Dt::I64)); });
    }
  }
  // Unsorted without a sorter: the same halving as libtorch.
  run("unsorted", encode(unsorted, Dt::F64), Dt::F64, {7}, {1}, 3.0, 0, nullptr);
  // Refused by both.
  const auto f6 = encode({1, 2, 3, 4, 5, 6}, Dt::F32);
  run("2-d sequence", f6, Dt::F32, {2, 3}, {3, 1}, 2.0, 0, nullptr);
  run("0-d sequence", encode({1}, Dt::F32), Dt::F32, {}, {}, 2.0, 0, nullptr);
  run("side left with right", f6, Dt::F32, {6}, {1}, 2.0, 1, "left");
  run("side middle", f6, Dt::F32, {6}, {1}, 2.0, 0, "middle");
  run("sorter of another size", f6, Dt::F32, {6}, {1}, 2.0, 0, nullptr, [&](Side& sd) {
    return sd.blob(bytes_of(std::vector<int64_t>{0, 1, 2}), {3}, {1}, code(sd.a, Dt::I64));
  });
  run("int32 sorter", f6, Dt::F32, {6}, {1}, 2.0, 0, nullptr, [&](Side& sd) {
    return sd.blob(bytes_of(std::vector<int32_t>{0, 1, 2, 3, 4, 5}), {6}, {1}, code(sd.a, Dt::I32));
  });
  run("sorter out of range", f6, Dt::F32, {6}, {1}, 2.0, 0, nullptr, [&](Side& sd) {
    return sd.blob(bytes_of(std::vector<int64_t>{0, 1, 2, 3, 4, 6}), {6}, {1}, code(sd.a, Dt::I64));
  });
}

// --- nonzero_static ---------------------------------------------------------------

TEST(DifferentialScan, NonzeroStatic) {
  NEED_LIBTORCH_SCAN();
  for (Dt dt : kTorchRealDtypes) {
    for (const auto& [l, dims_unused] : scan_layouts()) {
      (void)dims_unused;
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      const auto data = dt == Dt::Bool ? tied(span, 5, 1) : tied(span, 17, 2, is_float(dt) ? 5 : 0);
      int64_t numel = 1;
      for (int64_t s : l.sizes) numel *= s;
      for (int64_t size : {int64_t{0}, int64_t{1}, numel / 3, numel, numel + 4}) {
        for (int64_t fill : {int64_t{-1}, int64_t{7}, std::numeric_limits<int64_t>::min()}) {
          expect_agree(
              [&](Side& sd, const ScanApi& f, int* rc) {
                AtenTensorHandle x = make(sd, data, dt, l.sizes, l.strides, l.offset);
                AtenTensorHandle o = nullptr;
                *rc = f.nonzero_static(x, size, fill, &o);
                return kept(sd, {o});
              },
              std::string("nonzero_static ") + dt_name(dt) + " " + shape_str(l.sizes) + " strides " +
                  shape_str(l.strides) + " size=" + std::to_string(size) + " fill=" + std::to_string(fill));
        }
      }
    }
  }
  // 0-d, zero and non-zero; refusals: a negative size, unsigned 16-64 bits.
  for (double v : {0.0, 3.0, kNaN}) {
    for (int64_t size : {0, 2}) {
      expect_agree(
          [&](Side& sd, const ScanApi& f, int* rc) {
            AtenTensorHandle x = make(sd, {v}, Dt::F32, {}, {});
            AtenTensorHandle o = nullptr;
            *rc = f.nonzero_static(x, size, -1, &o);
            return kept(sd, {o});
          },
          "nonzero_static 0-d " + std::to_string(v) + " size=" + std::to_string(size));
    }
  }
  expect_agree(
      [&](Side& sd, const ScanApi& f, int* rc) {
        AtenTensorHandle x = make(sd, {1, 0, 1}, Dt::F32, {3}, {1});
        AtenTensorHandle o = nullptr;
        *rc = f.nonzero_static(x, -1, 0, &o);
        return kept(sd, {o});
      },
      "nonzero_static negative size");
  for (Dt dt : {Dt::U16, Dt::U32, Dt::U64}) {
    expect_agree(
        [&](Side& sd, const ScanApi& f, int* rc) {
          AtenTensorHandle x = make(sd, {1, 0, 1}, dt, {3}, {1});
          AtenTensorHandle o = nullptr;
          *rc = f.nonzero_static(x, 2, 0, &o);
          return kept(sd, {o});
        },
        std::string("nonzero_static ") + dt_name(dt));
  }
}

// --- the shim alone against naive loops (no libtorch) ------------------------------

struct ShimCase {
  const ShimApi& a;
  ScanApi f;
  Side sd;
  std::string problem;
  ShimCase() : a(aotrun_shim_test::shim_only().api), sd(aotrun_shim_test::shim_only().api, "shim") {
    problem = aotrun_shim_test::shim_only().problem;
    if (problem.empty()) {
      const std::string missing = f.resolve(::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD));
      if (!missing.empty()) problem = "the shim lacks " + missing;
    }
  }
  std::string last_error() const { return aotrun_shim_test::shim_only().last_error(); }
};

#define NEED_SHIM(c) ASSERT_EQ((c).problem, "")

void expect_refused(const ShimCase& c, int rc, const std::string& op, const std::string& arg) {
  EXPECT_EQ(rc, 1) << op;
  const std::string msg = c.last_error();
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument '" + arg + "'"), std::string::npos) << msg;
}

TEST(ShimReference, CummaxCumminMatchLoops) {
  ShimCase c;
  NEED_SHIM(c);
  // A [5, 8] float64 view transposed ([8, 5], strides {1, 8}), scanned along
  // both dims, against a loop written from the rule: NaN wins and moves the
  // index; otherwise >= (<=) takes the element.
  const auto data = tied(40, 23, 3, 6, 13);
  for (int64_t dim : {0, 1, -1}) {
    for (int mx = 0; mx < 2; ++mx) {
      AtenTensorHandle x = make(c.sd, data, Dt::F64, {8, 5}, {1, 8});
      AtenTensorHandle v = nullptr, i = nullptr;
      ASSERT_EQ((mx ? c.f.cummax : c.f.cummin)(x, dim, &v, &i), 0);
      c.sd.keep(v), c.sd.keep(i);
      const int64_t d = dim < 0 ? dim + 2 : dim;
      std::vector<double> wv(40), wi(40);
      for (int64_t o = 0; o < (d == 0 ? 5 : 8); ++o) {
        double best = 0;
        int64_t at = 0;
        for (int64_t k = 0; k < (d == 0 ? 8 : 5); ++k) {
          const int64_t r = d == 0 ? k : o, col = d == 0 ? o : k;
          const double e = data[static_cast<size_t>(r + 8 * col)];
          if (k == 0 || std::isnan(e) || (!std::isnan(best) && (mx ? e >= best : e <= best))) best = e, at = k;
          wv[static_cast<size_t>(r * 5 + col)] = best;
          wi[static_cast<size_t>(r * 5 + col)] = static_cast<double>(at);
        }
      }
      EXPECT_EQ(compare(read(c.a, v), wv, kExact), "") << "dim " << dim << " max " << mx;
      EXPECT_EQ(read(c.a, i), wi) << "dim " << dim << " max " << mx;
      EXPECT_EQ(describe(c.a, v).strides, (std::vector<int64_t>{5, 1}));
    }
  }
  // Ties take the last index; int8 and bool; 0-d; empty.
  AtenTensorHandle t = c.sd.blob(bytes_of(std::vector<int8_t>{3, -1, -1, 2, -1, 3}), {6}, {1}, code(c.a, Dt::I8));
  AtenTensorHandle v = nullptr, i = nullptr;
  ASSERT_EQ(c.f.cummin(t, 0, &v, &i), 0);
  c.sd.keep(v), c.sd.keep(i);
  EXPECT_EQ(read(c.a, v), (std::vector<double>{3, -1, -1, -1, -1, -1}));
  EXPECT_EQ(read(c.a, i), (std::vector<double>{0, 1, 2, 2, 4, 4}));
  AtenTensorHandle b = make(c.sd, {0, 1, 0, 1}, Dt::Bool, {4}, {1});
  ASSERT_EQ(c.f.cummax(b, 0, &v, &i), 0);
  c.sd.keep(v), c.sd.keep(i);
  EXPECT_EQ(read(c.a, v), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(read(c.a, i), (std::vector<double>{0, 1, 1, 3}));
  AtenTensorHandle z = make(c.sd, {0, 0, 4.5}, Dt::F32, {}, {}, 2);
  ASSERT_EQ(c.f.cummax(z, -1, &v, &i), 0);
  c.sd.keep(v), c.sd.keep(i);
  EXPECT_EQ(read(c.a, v), (std::vector<double>{4.5}));
  EXPECT_EQ(read(c.a, i), (std::vector<double>{0}));
  EXPECT_EQ(describe(c.a, i).dim, 0);
  AtenTensorHandle e = make(c.sd, {}, Dt::BF16, {0, 3}, {3, 1});
  ASSERT_EQ(c.f.cummin(e, 1, &v, &i), 0);
  c.sd.keep(v), c.sd.keep(i);
  EXPECT_EQ(describe(c.a, v).sizes, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(describe(c.a, i).dtype, c.a.aoti_torch_dtype_int64());
}

TEST(ShimReference, LogcumsumexpMatchesLoops) {
  ShimCase c;
  NEED_SHIM(c);
  // log(Σ exp) in long double against the shim's float64, along dim 1 of a
  // gapped [3, 6] view; large values would overflow a naive float64 sum.
  const std::vector<double> m = spread(40, 5, -800, 800);
  AtenTensorHandle x = make(c.sd, m, Dt::F64, {3, 6}, {12, 2}, 1);
  AtenTensorHandle o = nullptr;
  ASSERT_EQ(c.f.logcumsumexp(x, 1, &o), 0);
  c.sd.keep(o);
  std::vector<double> want;
  for (int r = 0; r < 3; ++r) {
    long double mx = -INFINITY, prev = 0;
    std::vector<long double> seen;
    for (int k = 0; k < 6; ++k) {
      seen.push_back(m[static_cast<size_t>(1 + 12 * r + 2 * k)]);
      mx = std::max(mx, seen.back());
      long double s = 0;
      for (long double y : seen) s += std::exp(y - mx);
      prev = mx + std::log(s);
      want.push_back(static_cast<double>(prev));
    }
  }
  EXPECT_EQ(compare(read(c.a, o), want, {1e-12, 1e-12}), "");
  // -inf leaves the sum alone, all -inf stays -inf, +inf sticks, NaN propagates.
  AtenTensorHandle s = make(c.sd, {-kInf, -kInf, 0, -kInf, kInf, 1, kNaN, 2}, Dt::F32, {8}, {1});
  ASSERT_EQ(c.f.logcumsumexp(s, 0, &o), 0);
  c.sd.keep(o);
  EXPECT_EQ(compare(read(c.a, o), {-kInf, -kInf, 0, 0, kInf, kInf, kNaN, kNaN}, kExact), "");
  // float16 and bfloat16: two equal elements give x + log 2.
  for (Dt dt : {Dt::F16, Dt::BF16}) {
    AtenTensorHandle h = make(c.sd, {1, 1}, dt, {2}, {1});
    ASSERT_EQ(c.f.logcumsumexp(h, 0, &o), 0);
    c.sd.keep(o);
    EXPECT_EQ(compare(read(c.a, o), {1, 1 + std::log(2.0)}, {dt == Dt::F16 ? 1e-3 : 1e-2, 0}), "") << dt_name(dt);
  }
}

TEST(ShimReference, SearchsortedScalarAndNonzeroStaticMatchLoops) {
  ShimCase c;
  NEED_SHIM(c);
  const std::vector<double> seq = {0, 1, 1, 1, 4, 6, 6, 9};
  for (double p : {-1.0, 0.0, 1.0, 2.0, 4.0, 5.0, 6.0, 9.0, 10.0}) {
    for (int right = 0; right < 2; ++right) {
      for (Dt dt : {Dt::F32, Dt::I64, Dt::BF16}) {
        AtenTensorHandle s = c.sd.blob(encode(seq, dt), {8}, {1}, code(c.a, dt));
        AtenTensorHandle o = nullptr;
        ASSERT_EQ(c.f.searchsorted_scalar(s, p, right, right, nullptr, nullptr, &o), 0);
        c.sd.keep(o);
        int64_t n = 0;
        for (double b : seq) n += right ? (b <= p) : (b < p);
        EXPECT_EQ(read(c.a, o), std::vector<double>{static_cast<double>(n)}) << p << " right=" << right;
        EXPECT_EQ(describe(c.a, o).dim, 0);
        EXPECT_EQ(describe(c.a, o).dtype, right ? c.a.aoti_torch_dtype_int32() : c.a.aoti_torch_dtype_int64());
      }
    }
  }
  // int64 sequences compare in float32: 16777217 equals 16777216 there.
  AtenTensorHandle big =
      c.sd.blob(bytes_of(std::vector<int64_t>{1, 16777216, 16777217, 16777218}), {4}, {1}, code(c.a, Dt::I64));
  AtenTensorHandle o = nullptr;
  ASSERT_EQ(c.f.searchsorted_scalar(big, 16777217.0, 0, 1, nullptr, nullptr, &o), 0);
  c.sd.keep(o);
  EXPECT_EQ(read(c.a, o), std::vector<double>{3});
  // nonzero_static of a transposed int32 [4, 3] view against a loop.
  const std::vector<double> m = {1, -2, 3, 0, 2, 0, -1, 5, 0, 1, 0, -2};
  for (int64_t size : {0, 3, 8, 12}) {
    AtenTensorHandle t = c.sd.blob(encode(m, Dt::I32), {4, 3}, {1, 4}, code(c.a, Dt::I32));
    AtenTensorHandle nz = nullptr;
    ASSERT_EQ(c.f.nonzero_static(t, size, -9, &nz), 0);
    c.sd.keep(nz);
    std::vector<double> want;
    for (int r = 0; r < 4; ++r)
      for (int k = 0; k < 3; ++k)
        if (m[static_cast<size_t>(k * 4 + r)] != 0) want.push_back(r), want.push_back(k);
    want.resize(static_cast<size_t>(size * 2), -9);
    EXPECT_EQ(read(c.a, nz), want) << "size " << size;
    EXPECT_EQ(describe(c.a, nz).sizes, (std::vector<int64_t>{size, 2}));
    EXPECT_EQ(describe(c.a, nz).strides, (std::vector<int64_t>{2, 1}));
  }
}

TEST(ShimReference, ScanBadArgumentsNameOpAndArgument) {
  ShimCase c;
  NEED_SHIM(c);
  AtenTensorHandle f = make(c.sd, {3, 1, 2, 0, 5, 4}, Dt::F32, {2, 3}, {3, 1});
  AtenTensorHandle i64 = make(c.sd, {0, 1, 0}, Dt::I64, {3}, {1});
  AtenTensorHandle cplx = nullptr;
  const int64_t sz[1] = {2}, st[1] = {1};
  ASSERT_EQ(c.a.aoti_torch_empty_strided(1, sz, st, c.a.aoti_torch_dtype_complex64(), 0, 0, &cplx), 0);
  c.sd.keep(cplx);
  AtenTensorHandle v = nullptr, i = nullptr, o = nullptr;
  expect_refused(c, c.f.cummax(f, 2, &v, &i), "aoti_torch_cpu_cummax", "dim");
  expect_refused(c, c.f.cummin(cplx, 0, &v, &i), "aoti_torch_cpu_cummin", "self");
  EXPECT_EQ(c.f.cummax(f, 0, &v, nullptr), 1);
  EXPECT_EQ(c.last_error(), "aoti_torch_cpu_cummax: ret1 is null");
  expect_refused(c, c.f.logcumsumexp(i64, 0, &o), "aoti_torch_cpu_logcumsumexp", "self");
  expect_refused(c, c.f.logcumsumexp(f, -3, &o), "aoti_torch_cpu_logcumsumexp", "dim");
  expect_refused(c, c.f.logcumsumexp(cplx, 0, &o), "aoti_torch_cpu_logcumsumexp", "self");
  expect_refused(c, c.f.searchsorted_scalar(f, 1.0, 0, 0, nullptr, nullptr, &o), "aoti_torch_cpu_searchsorted_Scalar",
                 "sorted_sequence");
  const char* bad_side = "up";
  expect_refused(c, c.f.searchsorted_scalar(i64, 1.0, 0, 0, &bad_side, nullptr, &o),
                 "aoti_torch_cpu_searchsorted_Scalar", "side");
  AtenTensorHandle short_sorter = make(c.sd, {0}, Dt::I64, {1}, {1});
  expect_refused(c, c.f.searchsorted_scalar(i64, 1.0, 0, 0, nullptr, &short_sorter, &o),
                 "aoti_torch_cpu_searchsorted_Scalar", "sorter");
  expect_refused(c, c.f.searchsorted_scalar(cplx, 1.0, 0, 0, nullptr, nullptr, &o),
                 "aoti_torch_cpu_searchsorted_Scalar", "sorted_sequence");
  expect_refused(c, c.f.nonzero_static(f, -1, 0, &o), "aoti_torch_cpu_nonzero_static", "size");
  expect_refused(c, c.f.nonzero_static(cplx, 1, 0, &o), "aoti_torch_cpu_nonzero_static", "self");
}

}  // namespace
