// The differential suite for the statistics fallbacks (since aotrun-shim
// 1.8): the C shim's histc, median (whole tensor) and mode, and the proxy
// executor's aten::nanmedian.dim and aten::bincount. Each case makes the
// same call on real libtorch (AOTRUN_LIBTORCH) and on the shim and compares
// return codes, sizes, strides, dtypes and every result element bit for bit
// (any NaN equal to any NaN; 0.0 and -0.0 told apart; mode's and
// nanmedian's indices exactly). nanmedian.dim and bincount have no C shim
// function: libtorch runs them through aoti_torch_call_dispatcher, the shim
// through its proxy executor as a model's wrapper calls it (into
// uninitialized handles). Inputs: every dtype each accepts, contiguous,
// transposed, gapped (with an offset), expanded (stride 0), 0-d and empty;
// ties, NaN, infinities, signed zeros, values on histc's edges and outside
// them, lines long enough for libtorch's introsort; and the calls both
// refuse. Skips, saying why, without libtorch; the ShimReference tests check
// the shim alone (bincount's weights, refusals naming op and argument).
#include <dlfcn.h>
#include <gtest/gtest.h>

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
using aotrun_shim_test::is_float;
using aotrun_shim_test::providers;
using aotrun_shim_test::Side;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

size_t itemsize(Dt d) {
  switch (d) {
    case Dt::F64:
    case Dt::I64:
    case Dt::U64:
    case Dt::C64: return 8;
    case Dt::F32:
    case Dt::I32:
    case Dt::U32: return 4;
    case Dt::BF16:
    case Dt::F16:
    case Dt::I16:
    case Dt::U16: return 2;
    case Dt::C128: return 16;
    default: return 1;
  }
}

Dt dt_of(const ShimApi& a, int32_t c) {
  for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8, Dt::U16, Dt::U32,
               Dt::U64, Dt::Bool, Dt::C64, Dt::C128}) {
    if (code(a, d) == c) return d;
  }
  return Dt::U8;
}

std::string str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// A view over `storage` (values as doubles; NaN and inf become 0 for the
// integer dtypes).
AtenTensorHandle make(Side& sd, std::vector<double> storage, Dt d, std::vector<int64_t> sizes,
                      std::vector<int64_t> strides, int64_t offset = 0) {
  if (!is_float(d)) {
    for (double& x : storage) {
      if (!std::isfinite(x)) x = 0;
    }
  }
  return sd.blob(encode(storage, d), std::move(sizes), std::move(strides), code(sd.a, d), offset);
}

int64_t span_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset) {
  int64_t s = 1 + offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return offset + 1;
    s += (sizes[i] - 1) * strides[i];
  }
  return s;
}

// n values from 2 * levels + 1 steps of 0.5 around 0 (many ties), NaN at
// every nan_every-th place when > 0; deterministic in seed.
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

// Values spread over [lo, hi).
std::vector<double> spread(int64_t n, uint32_t seed, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2246822519u + 3;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = lo + (hi - lo) * static_cast<double>((s >> 8) & 0xffff) / 65536.0;
  }
  return v;
}

// Each logical element's bytes, row-major, with every NaN written as one
// pattern (so that NaN matches NaN whatever its payload).
std::vector<std::vector<unsigned char>> elements(const ShimApi& a, AtenTensorHandle h) {
  const TensorDesc d = describe(a, h);
  const Dt dt = dt_of(a, d.dtype);
  const size_t item = itemsize(dt);
  void* data = nullptr;
  a.aoti_torch_get_data_ptr(h, &data);
  std::vector<std::vector<unsigned char>> out;
  for (int64_t i = 0; i < d.numel; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = d.dim - 1; k >= 0; --k) {
      off += (rem % d.sizes[k]) * d.strides[k];
      rem /= d.sizes[k];
    }
    const auto* p = static_cast<const unsigned char*>(data) + off * static_cast<int64_t>(item);
    std::vector<unsigned char> e(p, p + item);
    bool nan = false;
    if (dt == Dt::F32) {
      float f;
      std::memcpy(&f, p, 4);
      nan = std::isnan(f);
    } else if (dt == Dt::F64) {
      double f;
      std::memcpy(&f, p, 8);
      nan = std::isnan(f);
    } else if (dt == Dt::F16 || dt == Dt::BF16) {
      uint16_t b;
      std::memcpy(&b, p, 2);
      nan = dt == Dt::F16 ? ((b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0) : ((b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0);
    }
    if (nan) e.assign(item, 0xff);
    out.push_back(e);
  }
  return out;
}

std::string hex(const std::vector<std::vector<unsigned char>>& v) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < v.size() && i < 24; ++i) {
    s += i ? " " : "";
    for (size_t k = v[i].size(); k-- > 0;) {
      std::snprintf(buf, sizeof buf, "%02x", v[i][k]);
      s += buf;
    }
  }
  return s + (v.size() > 24 ? " ..." : "");
}

// Both providers' results of one call agree: sizes, strides, dtype, bits.
void expect_same(Side& t, const std::vector<AtenTensorHandle>& ht, Side& s, const std::vector<AtenTensorHandle>& hs,
                 const std::string& what) {
  ASSERT_EQ(hs.size(), ht.size()) << what;
  for (size_t i = 0; i < ht.size(); ++i) {
    ASSERT_NE(ht[i], nullptr) << what;
    ASSERT_NE(hs[i], nullptr) << what;
    const TensorDesc dt = describe(t.a, ht[i]), ds = describe(s.a, hs[i]);
    EXPECT_EQ(ds.sizes, dt.sizes) << what << " result " << i;
    EXPECT_EQ(ds.strides, dt.strides) << what << " result " << i;
    EXPECT_EQ(dt_of(s.a, ds.dtype), dt_of(t.a, dt.dtype)) << what << " result " << i;
    if (ds.sizes != dt.sizes) continue;
    const auto et = elements(t.a, ht[i]), es = elements(s.a, hs[i]);
    EXPECT_TRUE(et == es) << what << " result " << i << "\n  shim     " << hex(es) << "\n  libtorch " << hex(et);
  }
}

using Call = std::function<std::vector<AtenTensorHandle>(Side&, int*)>;

void expect_agree(const Call& f, const std::string& what) {
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  int rt = -1, rs = -1;
  const std::vector<AtenTensorHandle> ht = f(t, &rt), hs = f(s, &rs);
  ASSERT_EQ(rs, rt) << what << ": return codes differ (libtorch " << rt << ", shim " << rs << ")";
  if (rt != 0) return;
  expect_same(t, ht, s, hs, what);
}

std::vector<AtenTensorHandle> kept(Side& sd, std::initializer_list<AtenTensorHandle> hs) {
  std::vector<AtenTensorHandle> out;
  for (auto h : hs) out.push_back(sd.keep(h));
  return out;
}

struct Layout {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  const char* what;
};

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {
      {{37}, {1}, 0, "1-d"},
      {{6, 9}, {9, 1}, 0, "contiguous"},
      {{6, 9}, {1, 6}, 0, "transposed"},
      {{4, 5}, {12, 2}, 1, "gapped"},
      {{3, 20}, {1, 0}, 0, "expanded"},
      {{2, 3, 4}, {1, 2, 6}, 0, "permuted"},
      {{2, 40}, {40, 1}, 0, "long lines"},
      {{}, {}, 0, "0-d"},
      {{0, 5}, {5, 1}, 0, "empty"},
  };
  return l;
}

// --- histc -----------------------------------------------------------------------

void histc_case(Dt dt, const std::vector<double>& storage, const Layout& l, int64_t bins, double lo, double hi) {
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, storage, dt, l.sizes, l.strides, l.offset);
        AtenTensorHandle o = nullptr;
        *rc = sd.a.aoti_torch_cpu_histc(x, bins, lo, hi, &o);
        return kept(sd, {o});
      },
      std::string("histc ") + dt_name(dt) + " " + l.what + " " + str(l.sizes) + " bins=" + std::to_string(bins) +
          " range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

TEST(ShimDifferentialStats, HistcDtypesLayoutsAndRanges) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16}) {
    for (const Layout& l : layouts()) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      const auto data = spread(span, 5, -2.5, 2.5);
      for (int64_t bins : {1, 3, 7, 10, 100}) {
        histc_case(dt, data, l, bins, -2, 2);
        histc_case(dt, data, l, bins, 0, 0);  // the data's range
        histc_case(dt, data, l, bins, -1.3, 0.7);
      }
      histc_case(dt, tied(span, 9, 3), l, 5, 0, 0);
      histc_case(dt, std::vector<double>(span, 0.25), l, 4, 0, 0);  // one value: [v - 1, v + 1]
      histc_case(dt, std::vector<double>(span, 0.25), l, 4, 3, 3);
    }
  }
}

TEST(ShimDifferentialStats, HistcEdgesNanAndInfinities) {
  NEED_LIBTORCH();
  const std::vector<double> v = {-2,   2,     -2.0001, 2.0001, 0,   1.2,  -0.4, 0.4,  1.6,  -1.6, 2,   kNaN,
                                 kInf, -kInf, 1.9999,  -1.999, 0.8, -0.8, 1.2,  0.39, 0.41, kNaN, 0.1, 0.3,
                                 0.7,  0.9,   1e-8,    -1e-8,  3.9, -3.9, 1.25, 1.75, 0.5,  -0.0};
  const Layout flat{{static_cast<int64_t>(v.size())}, {1}, 0, "specials"};
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16}) {
    for (int64_t bins : {1, 2, 3, 5, 7, 10, 13, 64}) {
      histc_case(dt, v, flat, bins, -2, 2);
      histc_case(dt, v, flat, bins, -0.1, 0.3);
      histc_case(dt, v, flat, bins, 0.1, 3.3);
    }
    // Many equal elements in one bin (exact counts).
    histc_case(dt, std::vector<double>(200, 0.5), Layout{{200}, {1}, 0, "200 equal"}, 3, 0, 1);
    histc_case(dt, spread(180, 4, -3, 3), Layout{{180}, {1}, 0, "180"}, 6, -3, 3);
  }
  // Bounds the float16 range holds, barely.
  histc_case(Dt::F16, spread(40, 6, -60000, 60000), Layout{{40}, {1}, 0, "wide"}, 9, -65504, 65504);
}

TEST(ShimDifferentialStats, HistcRefusesWhatLibtorchRefuses) {
  NEED_LIBTORCH();
  const Layout l{{6}, {1}, 0, "bad"};
  const std::vector<double> ok = {0, 1, 2, 3, 4, 5};
  histc_case(Dt::F32, ok, l, 0, 0, 1);     // bins
  histc_case(Dt::F32, ok, l, -2, 0, 1);    // bins
  histc_case(Dt::F32, ok, l, 3, 2, 1);     // min > max
  histc_case(Dt::F32, ok, l, 3, kNaN, 1);  // not finite
  histc_case(Dt::F32, ok, l, 3, 0, kInf);
  histc_case(Dt::F32, ok, l, 3, -kInf, 0);
  histc_case(Dt::F32, {0, kNaN, 1, 2, 3, 4}, l, 3, 0, 0);                // the data's range is NaN
  histc_case(Dt::F32, {0, kInf, 1, 2, 3, 4}, l, 3, 0, 0);                // ... or infinite
  histc_case(Dt::F32, ok, l, 3, kInf, kInf);                             // min == max: the data's range (finite)
  histc_case(Dt::F32, {}, Layout{{0}, {1}, 0, "empty"}, 3, kInf, kInf);  // empty: inf - 1 is not finite
  histc_case(Dt::F16, ok, l, 3, 0, 70000);                               // the bounds overflow float16
  histc_case(Dt::F32, ok, l, 3, -1e300, 1);                              // ... float32
  histc_case(Dt::BF16, ok, l, 3, 0, 1e39);
  for (Dt dt : {Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8, Dt::Bool, Dt::U16, Dt::C64}) histc_case(dt, ok, l, 3, 0, 5);
}

// --- median (whole tensor) ---------------------------------------------------------

void median_case(Dt dt, const std::vector<double>& storage, const Layout& l) {
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, storage, dt, l.sizes, l.strides, l.offset);
        AtenTensorHandle o = nullptr;
        *rc = sd.a.aoti_torch_cpu_median(x, &o);
        return kept(sd, {o});
      },
      std::string("median ") + dt_name(dt) + " " + l.what + " " + str(l.sizes) + " strides " + str(l.strides));
}

TEST(ShimDifferentialStats, MedianDtypesLayoutsNanAndSignedZeros) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16, Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8}) {
    for (const Layout& l : layouts()) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      std::vector<double> data = tied(span, 11, 6);
      if (dt == Dt::U8) {
        for (double& x : data) x = std::fabs(x) * 2;
      }
      median_case(dt, data, l);
      median_case(dt, spread(span, 12, -50, 50), l);
      if (is_float(dt)) median_case(dt, tied(span, 13, 4, 7), l);  // NaN
    }
    for (int64_t n : {1, 2, 3, 4, 15, 16, 17, 33, 200}) {
      median_case(dt, tied(n, static_cast<uint32_t>(n), 2), Layout{{n}, {1}, 0, "ties"});
    }
  }
  // Signed zeros: which one is the median follows libtorch's partition of
  // self's clone (memory order, so the transposed view differs).
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16}) {
    std::vector<double> z;
    for (int i = 0; i < 40; ++i) z.push_back((i * 7) % 3 == 0 ? -0.0 : 0.0);
    median_case(dt, z, Layout{{40}, {1}, 0, "zeros"});
    median_case(dt, z, Layout{{5, 8}, {1, 5}, 0, "zeros transposed"});
    median_case(dt, z, Layout{{4, 5}, {10, 1}, 2, "zeros gapped"});
    median_case(dt, {-0.0, 0.0, 0.0, -0.0, 0.0}, Layout{{5}, {1}, 0, "five zeros"});
    median_case(dt, {1, kInf, -kInf, 2, -kInf}, Layout{{5}, {1}, 0, "infinities"});
    median_case(dt, {kNaN}, Layout{{}, {}, 0, "0-d NaN"});
  }
}

TEST(ShimDifferentialStats, MedianRefusesWhatLibtorchRefuses) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::Bool, Dt::U16, Dt::U32, Dt::U64, Dt::C64}) median_case(dt, {1, 0, 1}, Layout{{3}, {1}, 0, "bad"});
}

// --- mode ----------------------------------------------------------------------------

void mode_case(Dt dt, const std::vector<double>& storage, const Layout& l, int64_t dim, bool keepdim) {
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, storage, dt, l.sizes, l.strides, l.offset);
        AtenTensorHandle v = nullptr, i = nullptr;
        *rc = sd.a.aoti_torch_cpu_mode(x, dim, keepdim ? 1 : 0, &v, &i);
        return kept(sd, {v, i});
      },
      std::string("mode ") + dt_name(dt) + " " + l.what + " " + str(l.sizes) + " strides " + str(l.strides) +
          " dim=" + std::to_string(dim) + " keepdim=" + std::to_string(keepdim));
}

TEST(ShimDifferentialStats, ModeDtypesLayoutsDimsAndTies) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16, Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8, Dt::Bool}) {
    for (const Layout& l : layouts()) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      std::vector<double> data = tied(span, 21, 2);
      if (dt == Dt::U8) {
        for (double& x : data) x = std::fabs(x) * 2;
      }
      const int64_t nd = std::max<int64_t>(static_cast<int64_t>(l.sizes.size()), 1);
      for (int64_t dim = -nd; dim < nd; ++dim) {
        for (bool keep : {false, true}) {
          if (l.sizes.size() == 2 && l.sizes[0] == 0 && (dim == 0 || dim == -2)) continue;  // refused below
          mode_case(dt, data, l, dim, keep);
          if (is_float(dt)) mode_case(dt, tied(span, 22, 3, 5), l, dim, keep);
        }
      }
    }
    // Lines long enough for introsort's partitions, few and many values.
    for (int64_t n : {16, 17, 40, 100, 300}) {
      for (int levels : {1, 3, 12}) {
        std::vector<double> data = tied(3 * n, static_cast<uint32_t>(n + levels), levels);
        if (dt == Dt::U8) {
          for (double& x : data) x = std::fabs(x) * 2;
        }
        mode_case(dt, data, Layout{{3, n}, {n, 1}, 0, "long"}, 1, false);
        mode_case(dt, data, Layout{{n, 3}, {3, 1}, 0, "long strided"}, 0, false);
      }
    }
  }
  for (Dt dt : {Dt::F32, Dt::F16}) {
    mode_case(dt, {kNaN, 1, kNaN, 1, 2}, Layout{{5}, {1}, 0, "NaN"}, 0, false);
    mode_case(dt, {kNaN, kNaN, 2}, Layout{{3}, {1}, 0, "NaN"}, 0, false);
    mode_case(dt, {-0.0, 0.0, 1, 0.0, -0.0}, Layout{{5}, {1}, 0, "zeros"}, 0, false);
    mode_case(dt, {kInf, -kInf, kInf, 3, -kInf}, Layout{{5}, {1}, 0, "inf"}, 0, true);
  }
}

TEST(ShimDifferentialStats, ModeRefusesWhatLibtorchRefuses) {
  NEED_LIBTORCH();
  const std::vector<double> d = tied(12, 3, 2);
  mode_case(Dt::F32, d, Layout{{3, 0}, {1, 1}, 0, "empty dim"}, 1, false);
  mode_case(Dt::F32, d, Layout{{0, 4}, {4, 1}, 0, "empty dim"}, 0, true);
  mode_case(Dt::F32, d, Layout{{3, 4}, {4, 1}, 0, "bad dim"}, 2, false);
  mode_case(Dt::F32, d, Layout{{3, 4}, {4, 1}, 0, "bad dim"}, -3, false);
  mode_case(Dt::F32, d, Layout{{}, {}, 0, "0-d bad dim"}, 1, false);
  for (Dt dt : {Dt::U16, Dt::U32, Dt::U64, Dt::C64}) mode_case(dt, d, Layout{{3, 4}, {4, 1}, 0, "bad"}, 1, false);
}

// --- the proxy executor's nanmedian.dim and bincount ------------------------------------

using Dispatch = int32_t (*)(const char*, const char*, uint64_t*);
using ExCreate = int32_t (*)(const char*, size_t, void**);
using ExDelete = void (*)(void*);
using ExCall = int32_t (*)(void*, int, int, int64_t*, int, AtenTensorHandle*);

struct Proxy {
  Dispatch dispatch = nullptr;
  ExCreate create = nullptr;
  ExDelete del = nullptr;
  ExCall call = nullptr;
  std::string problem;
};

const Proxy& proxy() {
  static Proxy* p = [] {
    auto* x = new Proxy;
    if (!providers().skip.empty()) {
      x->problem = providers().skip;
      return x;
    }
    const std::string path = std::string(std::getenv("AOTRUN_LIBTORCH")) + "/libtorch_cpu.so";
    void* t = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    void* s = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    x->dispatch = reinterpret_cast<Dispatch>(t ? ::dlsym(t, "aoti_torch_call_dispatcher") : nullptr);
    x->create = reinterpret_cast<ExCreate>(s ? ::dlsym(s, "aotrun_shim_proxy_executor_create") : nullptr);
    x->del = reinterpret_cast<ExDelete>(s ? ::dlsym(s, "aotrun_shim_proxy_executor_delete") : nullptr);
    x->call = reinterpret_cast<ExCall>(s ? ::dlsym(s, "aoti_torch_proxy_executor_call_function") : nullptr);
    if (x->dispatch == nullptr) x->problem = "libtorch lacks aoti_torch_call_dispatcher";
    if (!x->create || !x->del || !x->call) x->problem += " the shim lacks the proxy executor";
    return x;
  }();
  return *p;
}

#define NEED_PROXY()                   \
  do {                                 \
    NEED_LIBTORCH();                   \
    if (!proxy().problem.empty()) {    \
      GTEST_SKIP() << proxy().problem; \
    }                                  \
  } while (0)

// Runs node 0 of `nodes` on the shim's executor as the wrapper calls it:
// tensor inputs, then `outputs` uninitialized handles (kept).
int shim_extern(Side& sd, const std::string& nodes, std::vector<AtenTensorHandle> inputs, std::vector<int64_t> ints,
                size_t outputs, std::vector<AtenTensorHandle>* results) {
  void* h = nullptr;
  if (proxy().create(nodes.c_str(), nodes.size(), &h) != 0) return -2;
  std::vector<AtenTensorHandle> t = inputs;
  for (size_t k = 0; k < outputs; ++k) {
    AtenTensorHandle o = nullptr;
    sd.a.aoti_torch_new_uninitialized_tensor(&o);
    sd.keep(o);
    results->push_back(o);
    t.push_back(o);
  }
  const int rc = proxy().call(h, 0, static_cast<int>(ints.size()), ints.data(), static_cast<int>(t.size()), t.data());
  proxy().del(h);
  return rc;
}

std::string nanmedian_nodes(int64_t dim, bool keepdim) {
  return std::string(R"({"nodes": [{"name": "buf0", "node": {"target": "aten::nanmedian.dim", "inputs": [)"
                     R"({"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1}, )"
                     R"({"name": "dim", "arg": {"as_int": )") +
         std::to_string(dim) + R"(}, "kind": 1}, {"name": "keepdim", "arg": {"as_bool": )" +
         (keepdim ? "true" : "false") +
         R"(}, "kind": 1}], "outputs": [{"as_tensor": {"name": "buf1"}}, {"as_tensor": {"name": "buf2"}}]}}]})";
}

void nanmedian_case(Dt dt, const std::vector<double>& storage, const Layout& l, int64_t dim, bool keepdim) {
  const std::string what = std::string("nanmedian.dim ") + dt_name(dt) + " " + l.what + " " + str(l.sizes) +
                           " strides " + str(l.strides) + " dim=" + std::to_string(dim) +
                           " keepdim=" + std::to_string(keepdim);
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  AtenTensorHandle xt = make(t, storage, dt, l.sizes, l.strides, l.offset);
  AtenTensorHandle xs = make(s, storage, dt, l.sizes, l.strides, l.offset);
  AtenTensorHandle arg = nullptr;
  ASSERT_EQ(t.a.aoti_torch_new_tensor_handle(xt, &arg), 0);
  uint64_t stack[3] = {reinterpret_cast<uint64_t>(arg), static_cast<uint64_t>(dim), keepdim ? 1u : 0u};
  const int rt = proxy().dispatch("aten::nanmedian", "dim", stack);
  std::vector<AtenTensorHandle> ht;
  if (rt == 0) {
    ht.push_back(t.keep(reinterpret_cast<AtenTensorHandle>(stack[0])));
    ht.push_back(t.keep(reinterpret_cast<AtenTensorHandle>(stack[1])));
  }
  std::vector<AtenTensorHandle> hs;
  const int rs = shim_extern(s, nanmedian_nodes(dim, keepdim), {xs}, {dim}, 2, &hs);
  ASSERT_EQ(rs, rt) << what << ": return codes differ (libtorch " << rt << ", shim " << rs << ")";
  if (rt == 0) expect_same(t, ht, s, hs, what);
}

TEST(ShimDifferentialStats, NanmedianDimDtypesLayoutsAndNan) {
  NEED_PROXY();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16, Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8}) {
    for (const Layout& l : layouts()) {
      // libtorch reads a line with stride 0 along the reduced dim as if its
      // stride were 1 (it makes lines contiguous only for strides above 1),
      // past the line: the shim's correct answer is not compared there.
      if (std::string(l.what) == "expanded") continue;
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      std::vector<double> data = tied(span, 31, 3, is_float(dt) ? 4 : 0);
      if (dt == Dt::U8) {
        for (double& x : data) x = std::fabs(x) * 2;
      }
      const int64_t nd = std::max<int64_t>(static_cast<int64_t>(l.sizes.size()), 1);
      for (int64_t dim = -nd; dim < nd; ++dim) {
        for (bool keep : {false, true}) {
          if (l.sizes.size() == 2 && l.sizes[0] == 0 && (dim == 0 || dim == -2)) continue;
          nanmedian_case(dt, data, l, dim, keep);
        }
      }
    }
  }
  // Lines of NaN only (the index libtorch's nth_element leaves), mostly NaN,
  // signed zeros, infinities, lines long enough for introselect.
  for (Dt dt : {Dt::F32, Dt::F64, Dt::F16, Dt::BF16}) {
    for (int64_t n : {1, 2, 3, 5, 17, 20, 40}) {
      nanmedian_case(dt, std::vector<double>(2 * n, kNaN), Layout{{2, n}, {n, 1}, 0, "all NaN"}, 1, false);
      std::vector<double> most(2 * n, kNaN);
      most[n / 2] = 1.5;
      most[n + n / 3] = -0.5;
      nanmedian_case(dt, most, Layout{{2, n}, {n, 1}, 0, "mostly NaN"}, 1, false);
      nanmedian_case(dt, tied(3 * n, static_cast<uint32_t>(n), 2, 3), Layout{{3, n}, {n, 1}, 0, "ties"}, 1, true);
    }
    nanmedian_case(dt, {-0.0, 0.0, kNaN, -0.0, 0.0, 0.0}, Layout{{6}, {1}, 0, "zeros"}, 0, false);
    nanmedian_case(dt, {kInf, kNaN, -kInf, kInf, 1}, Layout{{5}, {1}, 0, "inf"}, 0, false);
    nanmedian_case(dt, {kNaN}, Layout{{}, {}, 0, "0-d NaN"}, 0, false);
  }
}

TEST(ShimDifferentialStats, NanmedianDimRefusesWhatLibtorchRefuses) {
  NEED_PROXY();
  const std::vector<double> d = tied(12, 5, 2);
  nanmedian_case(Dt::F32, d, Layout{{3, 0}, {1, 1}, 0, "empty dim"}, 1, false);
  nanmedian_case(Dt::F32, d, Layout{{3, 4}, {4, 1}, 0, "bad dim"}, 2, false);
  for (Dt dt : {Dt::Bool, Dt::U16, Dt::C64}) nanmedian_case(dt, d, Layout{{3, 4}, {4, 1}, 0, "bad"}, 1, false);
}

std::string bincount_nodes(bool weights) {
  return std::string(R"({"nodes": [{"name": "buf0", "node": {"target": "aten::bincount", "inputs": [)"
                     R"({"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1}, )"
                     R"({"name": "weights", "arg": )") +
         (weights ? R"({"as_tensor": {"name": "arg1_1"}})" : R"({"as_none": true})") +
         R"(, "kind": 1}, {"name": "minlength", "arg": {"as_int": 0}, "kind": 1}], )"
         R"("outputs": [{"as_tensor": {"name": "buf1"}}]}}]})";
}

// bincount without weights (a model's torch.bincount(x, minlength=m)).
void bincount_case(Dt dt, const std::vector<double>& storage, const Layout& l, int64_t minlength) {
  const std::string what = std::string("bincount ") + dt_name(dt) + " " + l.what + " " + str(l.sizes) + " strides " +
                           str(l.strides) + " minlength=" + std::to_string(minlength);
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  AtenTensorHandle xt = make(t, storage, dt, l.sizes, l.strides, l.offset);
  AtenTensorHandle xs = make(s, storage, dt, l.sizes, l.strides, l.offset);
  AtenTensorHandle arg = nullptr;
  ASSERT_EQ(t.a.aoti_torch_new_tensor_handle(xt, &arg), 0);
  uint64_t stack[3] = {reinterpret_cast<uint64_t>(arg), 0u /* weights: None */, static_cast<uint64_t>(minlength)};
  const int rt = proxy().dispatch("aten::bincount", "", stack);
  std::vector<AtenTensorHandle> ht;
  if (rt == 0) ht.push_back(t.keep(reinterpret_cast<AtenTensorHandle>(stack[0])));
  std::vector<AtenTensorHandle> hs;
  const int rs = shim_extern(s, bincount_nodes(false), {xs}, {minlength}, 1, &hs);
  ASSERT_EQ(rs, rt) << what << ": return codes differ (libtorch " << rt << ", shim " << rs << ")";
  if (rt == 0) expect_same(t, ht, s, hs, what);
}

TEST(ShimDifferentialStats, BincountDtypesLayoutsAndMinlength) {
  NEED_PROXY();
  for (Dt dt : {Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8}) {
    for (const Layout& l :
         {Layout{{12}, {1}, 0, "1-d"}, Layout{{7}, {3}, 2, "strided"}, Layout{{9}, {0}, 0, "expanded"},
          Layout{{0}, {1}, 0, "empty"}, Layout{{200}, {1}, 0, "long"}}) {
      const int64_t span = span_of(l.sizes, l.strides, l.offset);
      std::vector<double> data = spread(span, 41, 0, 20);
      for (double& x : data) x = std::floor(x);
      for (int64_t minlength : {0, 1, 8, 20, 25}) bincount_case(dt, data, l, minlength);
    }
    bincount_case(dt, {0, 0, 0}, Layout{{3}, {1}, 0, "zeros"}, 0);
    bincount_case(dt, {100, 3}, Layout{{2}, {1}, 0, "large"}, 4);
  }
}

TEST(ShimDifferentialStats, BincountRefusesWhatLibtorchRefuses) {
  NEED_PROXY();
  bincount_case(Dt::I64, {1, -1, 2}, Layout{{3}, {1}, 0, "negative"}, 0);
  bincount_case(Dt::I8, {1, -3, 2}, Layout{{3}, {1}, 0, "negative"}, 0);
  bincount_case(Dt::I64, {1, 2, 3}, Layout{{3}, {1}, 0, "minlength"}, -1);
  bincount_case(Dt::I64, {1, 2, 3, 4}, Layout{{2, 2}, {2, 1}, 0, "2-d"}, 0);
  bincount_case(Dt::I64, {1}, Layout{{}, {}, 0, "0-d"}, 0);
  for (Dt dt : {Dt::F32, Dt::F64, Dt::Bool, Dt::U16, Dt::F16})
    bincount_case(dt, {1, 2, 3}, Layout{{3}, {1}, 0, "bad"}, 0);
}

// --- the shim alone ------------------------------------------------------------------

// bincount with weights: sums in order, float32 for float32 weights, float64
// otherwise (libtorch's _bincount_cpu), against naive loops.
TEST(ShimReference, BincountWeights) {
  const auto& so = aotrun_shim_test::shim_only();
  ASSERT_TRUE(so.problem.empty()) << so.problem;
  void* lib = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  auto create = reinterpret_cast<ExCreate>(::dlsym(lib, "aotrun_shim_proxy_executor_create"));
  auto del = reinterpret_cast<ExDelete>(::dlsym(lib, "aotrun_shim_proxy_executor_delete"));
  auto call = reinterpret_cast<ExCall>(::dlsym(lib, "aoti_torch_proxy_executor_call_function"));
  ASSERT_TRUE(create && del && call);
  const std::string nodes = bincount_nodes(true);
  void* ex = nullptr;
  ASSERT_EQ(create(nodes.c_str(), nodes.size(), &ex), 0) << so.last_error();
  const std::vector<double> x = {3, 1, 3, 0, 5, 3};
  const std::vector<double> w = {0.5, 0.25, 1.5, -2, 4, 0.125};
  struct Case {
    Dt wd;
    Dt out;
  };
  for (const Case c : {Case{Dt::F32, Dt::F32}, Case{Dt::F64, Dt::F64}, Case{Dt::F16, Dt::F64}, Case{Dt::I32, Dt::F64},
                       Case{Dt::Bool, Dt::F64}}) {
    Side s(so.api, "shim");
    AtenTensorHandle xs = make(s, x, Dt::I64, {6}, {1});
    AtenTensorHandle ws = make(s, w, c.wd, {6}, {1});
    AtenTensorHandle o = nullptr;
    s.a.aoti_torch_new_uninitialized_tensor(&o);
    s.keep(o);
    int64_t minlength = 8;
    AtenTensorHandle t[3] = {xs, ws, o};
    ASSERT_EQ(call(ex, 0, 1, &minlength, 3, t), 0) << so.last_error();
    const TensorDesc d = describe(s.a, o);
    EXPECT_EQ(d.sizes, std::vector<int64_t>({8})) << dt_name(c.wd);
    EXPECT_EQ(d.dtype, code(s.a, c.out)) << dt_name(c.wd);
    std::vector<double> want(8, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      double wi = c.wd == Dt::I32 ? static_cast<double>(static_cast<int32_t>(w[i])) : w[i];
      if (c.wd == Dt::Bool) wi = w[i] != 0 ? 1 : 0;
      want[static_cast<size_t>(x[i])] += wi;
    }
    EXPECT_EQ(values(s.a, o), want) << dt_name(c.wd);
  }
  // Weights of another length, and complex weights, are refused naming them.
  for (const auto& bad :
       {std::make_pair(std::vector<int64_t>{5}, Dt::F32), std::make_pair(std::vector<int64_t>{6}, Dt::C64)}) {
    Side s(so.api, "shim");
    AtenTensorHandle xs = make(s, x, Dt::I64, {6}, {1});
    AtenTensorHandle ws = make(s, w, bad.second, bad.first, {1});
    AtenTensorHandle o = nullptr;
    s.a.aoti_torch_new_uninitialized_tensor(&o);
    s.keep(o);
    int64_t minlength = 0;
    AtenTensorHandle t[3] = {xs, ws, o};
    ASSERT_NE(call(ex, 0, 1, &minlength, 3, t), 0);
    EXPECT_NE(std::string(so.last_error()).find("'weights'"), std::string::npos) << so.last_error();
  }
  del(ex);
}

// Refusals name the function and the argument.
TEST(ShimReference, StatsRefusalsNameFunctionAndArgument) {
  const auto& so = aotrun_shim_test::shim_only();
  ASSERT_TRUE(so.problem.empty()) << so.problem;
  Side s(so.api, "shim");
  AtenTensorHandle f = make(s, {0, 1, 2, 3, 4, 5}, Dt::F32, {2, 3}, {3, 1});
  AtenTensorHandle i = make(s, {0, 1, 2, 3, 4, 5}, Dt::I32, {2, 3}, {3, 1});
  AtenTensorHandle nan = make(s, {0, kNaN, 2}, Dt::F32, {3}, {1});
  AtenTensorHandle o = nullptr, o2 = nullptr;
  auto expect_fail = [&](int rc, const char* fn, const char* arg) {
    EXPECT_NE(rc, 0) << fn << " " << arg;
    const std::string msg = so.last_error();
    EXPECT_NE(msg.find(fn), std::string::npos) << msg;
    EXPECT_NE(msg.find(arg), std::string::npos) << msg;
  };
  expect_fail(s.a.aoti_torch_cpu_histc(f, 0, 0, 1, &o), "aoti_torch_cpu_histc", "bins");
  expect_fail(s.a.aoti_torch_cpu_histc(f, 3, 2, 1, &o), "aoti_torch_cpu_histc", "max");
  expect_fail(s.a.aoti_torch_cpu_histc(f, 3, kNaN, 1, &o), "aoti_torch_cpu_histc", "min");
  expect_fail(s.a.aoti_torch_cpu_histc(nan, 3, 0, 0, &o), "aoti_torch_cpu_histc", "self");
  expect_fail(s.a.aoti_torch_cpu_histc(i, 3, 0, 1, &o), "aoti_torch_cpu_histc", "self");
  expect_fail(s.a.aoti_torch_cpu_histc(f, 3, 0, 1, nullptr), "aoti_torch_cpu_histc", "ret0");
  expect_fail(s.a.aoti_torch_cpu_histc(nullptr, 3, 0, 1, &o), "aoti_torch_cpu_histc", "self");
  AtenTensorHandle b = make(s, {0, 1}, Dt::Bool, {2}, {1});
  expect_fail(s.a.aoti_torch_cpu_median(b, &o), "aoti_torch_cpu_median", "self");
  expect_fail(s.a.aoti_torch_cpu_median(f, nullptr), "aoti_torch_cpu_median", "ret0");
  expect_fail(s.a.aoti_torch_cpu_mode(f, 2, 0, &o, &o2), "aoti_torch_cpu_mode", "dim");
  AtenTensorHandle e = make(s, {}, Dt::F32, {3, 0}, {1, 1});
  expect_fail(s.a.aoti_torch_cpu_mode(e, 1, 0, &o, &o2), "aoti_torch_cpu_mode", "self");
  expect_fail(s.a.aoti_torch_cpu_mode(f, 1, 0, &o, nullptr), "aoti_torch_cpu_mode", "ret1");
  // A histogram and a mode by hand.
  AtenTensorHandle h = make(s, {-2, -1, 0, 1, 2, 2.5, kNaN, 1.99}, Dt::F32, {8}, {1});
  ASSERT_EQ(s.a.aoti_torch_cpu_histc(h, 4, -2, 2, &o), 0);
  s.keep(o);
  EXPECT_EQ(values(s.a, o), std::vector<double>({1, 1, 1, 3}));
  AtenTensorHandle m = make(s, {3, 1, 3, 1, 2}, Dt::I64, {5}, {1});
  ASSERT_EQ(s.a.aoti_torch_cpu_mode(m, 0, 0, &o, &o2), 0);
  s.keep(o);
  s.keep(o2);
  EXPECT_EQ(values(s.a, o), std::vector<double>({1}));
  ASSERT_EQ(s.a.aoti_torch_cpu_median(m, &o), 0);
  s.keep(o);
  EXPECT_EQ(values(s.a, o), std::vector<double>({2}));
}

}  // namespace
