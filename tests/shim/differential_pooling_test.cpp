// The differential suite for the pooling fallbacks (since aotrun-shim 1.7):
// avg_pool2d, avg_pool3d, max_pool2d_with_indices, max_pool3d_with_indices,
// _adaptive_avg_pool2d, _adaptive_avg_pool3d, adaptive_max_pool2d and
// adaptive_max_pool3d. Each case makes the same call on real libtorch
// (AOTRUN_LIBTORCH) and on the shim and compares return codes, sizes,
// strides (channels-last kept or not, as libtorch), dtypes, values (within
// torch.testing.assert_close's default tolerances for the dtype; max
// values exactly, NaN equal to NaN) and indices (exactly). Inputs are
// contiguous, channels-last, gapped (with an offset), transposed and
// channels-last with gaps, batched and not, with an empty batch; windows
// with stride, padding, dilation, ceil_mode, count_include_pad and
// divisor_override, windows above 25 elements (what Inductor falls back
// for), ties, NaN and -inf for max; and the calls both refuse. Skips,
// saying why, without libtorch; the ShimReference tests check the shim
// alone against naive loops (and its refusals name op and argument).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "differential.hpp"
#include "dtypes.hpp"

namespace {

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

// encode, except that complex64 elements are v + 0i (encode's are v - vi).
std::vector<char> encode_zero_imag(const std::vector<double>& v, Dt d) {
  if (d != Dt::C64) return encode(v, d);
  std::vector<double> pairs(2 * v.size(), 0.0);
  for (size_t i = 0; i < v.size(); ++i) pairs[2 * i] = v[i];
  return encode(pairs, Dt::F32);
}

// The logical elements of a result in row-major order, as doubles.
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
    auto get = [&](auto zero) {
      decltype(zero) v;
      std::memcpy(&v, p + off * static_cast<int64_t>(sizeof v), sizeof v);
      return v;
    };
    if (d.dtype == a.aoti_torch_dtype_float32()) {
      out[i] = get(float{});
    } else if (d.dtype == a.aoti_torch_dtype_float64()) {
      out[i] = get(double{});
    } else if (d.dtype == a.aoti_torch_dtype_bfloat16()) {
      out[i] = bf16_value(get(uint16_t{}));
    } else if (d.dtype == a.aoti_torch_dtype_float16()) {
      out[i] = f16_value(get(uint16_t{}));
    } else if (d.dtype == a.aoti_torch_dtype_int64()) {
      out[i] = static_cast<double>(get(int64_t{}));
    } else if (d.dtype == a.aoti_torch_dtype_int32()) {
      out[i] = get(int32_t{});
    } else if (d.dtype == a.aoti_torch_dtype_int16()) {
      out[i] = get(int16_t{});
    } else if (d.dtype == a.aoti_torch_dtype_int8()) {
      out[i] = get(int8_t{});
    } else {
      out[i] = get(uint8_t{});
    }
  }
  return out;
}

struct Tol {
  double rtol = 0, atol = 0;
};
const Tol kExact{};
Tol tol_for(Dt d) {
  switch (d) {
    case Dt::F32: return {1.3e-6, 1e-5};
    case Dt::F64: return {1e-7, 1e-7};
    case Dt::BF16: return {1.6e-2, 1e-5};
    case Dt::F16: return {1e-3, 1e-5};
    default: return kExact;
  }
}

// "" when equal within tol (NaN matches NaN, inf matches inf), else the first difference.
std::string compare(const std::vector<double>& x, const std::vector<double>& y, Tol tol) {
  if (x.size() != y.size()) return "sizes differ: " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;
    if (!(std::fabs(x[i] - y[i]) <= tol.atol + tol.rtol * std::fabs(y[i]))) {
      return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
    }
  }
  return "";
}

std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < 48; ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s + (v.size() > 48 ? " ...]" : "]");
}

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

using Call = std::function<std::vector<AtenTensorHandle>(Side&, int*)>;

std::vector<AtenTensorHandle> kept(Side& sd, std::initializer_list<AtenTensorHandle> hs) {
  std::vector<AtenTensorHandle> out;
  for (auto h : hs) out.push_back(sd.keep(h));
  return out;
}

// The lowest value of a dtype: max pooling's starting point.
double lowest_of(Dt d) {
  switch (d) {
    case Dt::I64: return -9223372036854775808.0;
    case Dt::I32: return -2147483648.0;
    case Dt::I16: return -32768.0;
    case Dt::I8: return -128.0;
    case Dt::U8: return 0.0;
    default: return -kInf;
  }
}

// libtorch's channels-last-3d max pool starts each window's index at h * W
// + w of its first position, without the depth: a window whose maximum is
// the dtype's lowest value (all -inf; uint8 zeros) keeps that index there.
// The shim gives the first position's full index, as libtorch's contiguous
// and 2-d kernels do; `plane` (H * W, 0: not that kernel) allows exactly
// that difference.
struct DepthQuirk {
  int64_t plane = 0;
  double lowest = 0;
};

// Runs `f` on both providers: the same return code (both 0 or both not)
// and, on success, the same results (values within tol, indices exactly).
void expect_agree(const Call& f, const std::string& what, Tol tol, DepthQuirk quirk = {}) {
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  int rt = -1, rs = -1;
  const std::vector<AtenTensorHandle> ht = f(t, &rt), hs = f(s, &rs);
  ASSERT_EQ(rs != 0, rt != 0) << what << " (libtorch rc " << rt << ", shim rc " << rs << ")";
  if (rt != 0) return;
  ASSERT_EQ(hs.size(), ht.size()) << what;
  for (size_t i = 0; i < ht.size(); ++i) {
    ASSERT_NE(ht[i], nullptr) << what;
    ASSERT_NE(hs[i], nullptr) << what;
    const TensorDesc dt = describe(t.a, ht[i]), ds = describe(s.a, hs[i]);
    EXPECT_EQ(ds.sizes, dt.sizes) << what << " result " << i;
    EXPECT_EQ(ds.strides, dt.strides) << what << " result " << i << " sizes " << shape_str(dt.sizes);
    EXPECT_EQ(ds.dtype, dt.dtype) << what << " result " << i;
    const auto vt = read(t.a, ht[i]);
    auto vs = read(s.a, hs[i]);
    if (i == 1 && quirk.plane > 0 && vs.size() == vt.size()) {
      const auto values = read(t.a, ht[0]);
      for (size_t j = 0; j < vs.size(); ++j) {
        const auto sj = static_cast<int64_t>(vs[j]), tj = static_cast<int64_t>(vt[j]);
        if (sj != tj && values[j] == quirk.lowest && sj % quirk.plane == tj) vs[j] = vt[j];
      }
    }
    EXPECT_EQ(compare(vs, vt, i == 0 ? tol : kExact), "")
        << what << " result " << i << "\n  shim     " << list(vs) << "\n  libtorch " << list(vt);
  }
}

// --- inputs -----------------------------------------------------------------

enum class Lay { Contig, ChannelsLast, Gapped, Transposed, ChannelsLastGapped };

const char* lay_name(Lay l) {
  switch (l) {
    case Lay::Contig: return "contiguous";
    case Lay::ChannelsLast: return "channels-last";
    case Lay::Gapped: return "gapped";
    case Lay::Transposed: return "transposed";
    case Lay::ChannelsLastGapped: return "channels-last-gapped";
  }
  return "?";
}

struct Layout {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t span() const {
    int64_t s = offset + 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == 0) return offset + 1;
      s += (sizes[i] - 1) * strides[i];
    }
    return s;
  }
};

// Dims laid out in `order` (outermost first), each taking extent[d] >= size
// slots, the innermost stepping by `step`.
Layout arrange(const std::vector<int64_t>& sizes, const std::vector<int>& order, std::vector<int64_t> extent,
               int64_t step, int64_t offset) {
  Layout l{sizes, std::vector<int64_t>(sizes.size()), offset};
  int64_t acc = step;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    l.strides[order[i]] = acc;
    acc *= std::max<int64_t>(extent[order[i]], 1);
  }
  return l;
}

// `pooled` trailing dims pooled; the channel dim is the one before them.
Layout layout(const std::vector<int64_t>& sizes, int pooled, Lay lay) {
  const int nd = static_cast<int>(sizes.size()), cd = nd - pooled - 1;
  std::vector<int> rows(nd);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int> cl;
  for (int d = 0; d < nd; ++d) {
    if (d != cd) cl.push_back(d);
  }
  cl.push_back(cd);
  std::vector<int64_t> ext = sizes;
  switch (lay) {
    case Lay::Contig: return arrange(sizes, rows, ext, 1, 0);
    case Lay::ChannelsLast: return arrange(sizes, cl, ext, 1, 0);
    case Lay::Gapped: {
      for (auto& e : ext) e += 1;
      return arrange(sizes, rows, ext, 2, 3);
    }
    case Lay::Transposed: {
      std::swap(rows[nd - 1], rows[nd - 2]);
      return arrange(sizes, rows, ext, 1, 0);
    }
    case Lay::ChannelsLastGapped: {
      ext[cd] += 3;
      ext[nd - 2] += 1;
      return arrange(sizes, cl, ext, 1, 5);
    }
  }
  return {};
}

// Deterministic values: multiples of 1/8 in [-4, 4) (exact in every
// floating dtype, many ties), integers in [-40, 40) for signed integer
// dtypes, [0, 80) for uint8; NaN and -inf at some positions when asked.
std::vector<double> values_for(int64_t n, uint32_t seed, Dt d, bool specials) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 17;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    const int r = static_cast<int>((s >> 8) % 80);
    if (is_float(d)) {
      v[i] = (r - 40) / 8.0;
      if (specials && (s >> 4) % 13 == 0) v[i] = kNaN;
      if (specials && (s >> 4) % 17 == 1) v[i] = -kInf;
    } else {
      v[i] = d == Dt::U8 ? r : r - 40;
    }
  }
  return v;
}

AtenTensorHandle make(Side& sd, const Layout& l, Dt d, uint32_t seed, bool specials) {
  return sd.blob(encode_zero_imag(values_for(l.span(), seed, d, specials), d), l.sizes, l.strides, code(sd.a, d),
                 l.offset);
}

std::string input_str(const Layout& l, Dt d, Lay lay) {
  return std::string(dt_name(d)) + " " + shape_str(l.sizes) + " " + lay_name(lay) + " strides " + shape_str(l.strides);
}

// Layouts to try for an input of `sizes` (`pooled` pooled dims).
std::vector<Lay> lays_for(const std::vector<int64_t>& sizes, int pooled) {
  if (static_cast<int>(sizes.size()) == pooled + 2) {
    return {Lay::Contig, Lay::ChannelsLast, Lay::Gapped, Lay::Transposed, Lay::ChannelsLastGapped};
  }
  return {Lay::Contig, Lay::ChannelsLast, Lay::Gapped, Lay::Transposed};
}

// --- the calls ----------------------------------------------------------------

struct Lists {
  std::vector<int64_t> k{}, s{}, p{}, d{};
};

struct AvgCase {
  Lists l;
  bool ceil = false, include_pad = true;
  std::optional<int64_t> divisor{};
  std::string str() const {
    return "k=" + shape_str(l.k) + " s=" + shape_str(l.s) + " p=" + shape_str(l.p) + " ceil=" + std::to_string(ceil) +
           " include_pad=" + std::to_string(include_pad) +
           " divisor=" + (divisor ? std::to_string(*divisor) : std::string("none"));
  }
};

struct MaxCase {
  Lists l;
  bool ceil = false;
  std::string str() const {
    return "k=" + shape_str(l.k) + " s=" + shape_str(l.s) + " p=" + shape_str(l.p) + " d=" + shape_str(l.d) +
           " ceil=" + std::to_string(ceil);
  }
};

int avg_call(Side& sd, int dims, AtenTensorHandle x, const AvgCase& c, AtenTensorHandle* out) {
  int64_t div = c.divisor.value_or(0);
  auto fn = dims == 2 ? sd.a.aoti_torch_cpu_avg_pool2d : sd.a.aoti_torch_cpu_avg_pool3d;
  return fn(x, c.l.k.data(), static_cast<int64_t>(c.l.k.size()), c.l.s.data(), static_cast<int64_t>(c.l.s.size()),
            c.l.p.data(), static_cast<int64_t>(c.l.p.size()), c.ceil, c.include_pad, c.divisor ? &div : nullptr, out);
}

int max_call(Side& sd, int dims, AtenTensorHandle x, const MaxCase& c, AtenTensorHandle* v, AtenTensorHandle* i) {
  auto fn = dims == 2 ? sd.a.aoti_torch_cpu_max_pool2d_with_indices : sd.a.aoti_torch_cpu_max_pool3d_with_indices;
  return fn(x, c.l.k.data(), static_cast<int64_t>(c.l.k.size()), c.l.s.data(), static_cast<int64_t>(c.l.s.size()),
            c.l.p.data(), static_cast<int64_t>(c.l.p.size()), c.l.d.data(), static_cast<int64_t>(c.l.d.size()), c.ceil,
            v, i);
}

int adaptive_avg_call(Side& sd, int dims, AtenTensorHandle x, const std::vector<int64_t>& o, AtenTensorHandle* out) {
  auto fn = dims == 2 ? sd.a.aoti_torch_cpu__adaptive_avg_pool2d : sd.a.aoti_torch_cpu__adaptive_avg_pool3d;
  return fn(x, o.data(), static_cast<int64_t>(o.size()), out);
}

int adaptive_max_call(Side& sd, int dims, AtenTensorHandle x, const std::vector<int64_t>& o, AtenTensorHandle* v,
                      AtenTensorHandle* i) {
  auto fn = dims == 2 ? sd.a.aoti_torch_cpu_adaptive_max_pool2d : sd.a.aoti_torch_cpu_adaptive_max_pool3d;
  return fn(x, o.data(), static_cast<int64_t>(o.size()), v, i);
}

void agree_avg(int dims, const std::vector<int64_t>& sizes, Lay lay, Dt d, const AvgCase& c, uint32_t seed) {
  const Layout l = layout(sizes, dims, lay);
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, l, d, seed, false), y = nullptr;
        *rc = avg_call(sd, dims, x, c, &y);
        return kept(sd, {y});
      },
      std::string("avg_pool") + std::to_string(dims) + "d " + input_str(l, d, lay) + " " + c.str(), tol_for(d));
}

void agree_max(int dims, const std::vector<int64_t>& sizes, Lay lay, Dt d, const MaxCase& c, uint32_t seed,
               bool specials) {
  const Layout l = layout(sizes, dims, lay);
  DepthQuirk quirk;
  if (dims == 3 && (lay == Lay::ChannelsLast || lay == Lay::ChannelsLastGapped)) {
    quirk = {sizes[sizes.size() - 2] * sizes.back(), lowest_of(d)};
  }
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, l, d, seed, specials), v = nullptr, i = nullptr;
        *rc = max_call(sd, dims, x, c, &v, &i);
        return kept(sd, {v, i});
      },
      std::string("max_pool") + std::to_string(dims) + "d " + input_str(l, d, lay) + " " + c.str(), kExact, quirk);
}

void agree_adaptive(int dims, bool max, const std::vector<int64_t>& sizes, Lay lay, Dt d, const std::vector<int64_t>& o,
                    uint32_t seed) {
  const Layout l = layout(sizes, dims, lay);
  expect_agree(
      [&](Side& sd, int* rc) {
        AtenTensorHandle x = make(sd, l, d, seed, max), v = nullptr, i = nullptr;
        if (max) {
          *rc = adaptive_max_call(sd, dims, x, o, &v, &i);
          return kept(sd, {v, i});
        }
        *rc = adaptive_avg_call(sd, dims, x, o, &v);
        return kept(sd, {v});
      },
      std::string(max ? "adaptive_max_pool" : "_adaptive_avg_pool") + std::to_string(dims) + "d " +
          input_str(l, d, lay) + " output_size=" + shape_str(o),
      max ? kExact : tol_for(d));
}

// --- against libtorch ---------------------------------------------------------

const std::vector<AvgCase> kAvg2d = {
    {{{2}, {}, {0}}},
    {{{3}, {2}, {1}}},
    {{{3, 2}, {2, 1}, {1, 0}}},
    {{{3}, {2}, {1}}, true},
    {{{3}, {3}, {1}}, true, false},
    {{{2, 3}, {3, 2}, {1, 1}}, true, true, 3},
    {{{4}, {3}, {2}}, true, false, -2},
    {{{1}, {1}, {0}}},
    {{{2}, {2}, {1}}, true, false},  // ceil_mode's last window would start in the right padding: dropped
    {{{3}, {1}, {1}}, false, false},
    {{{7}, {1}, {3}}, false, false},  // 49 elements: past Inductor's own loops
    {{{5, 7}, {2}, {2, 3}}, true, true},
    {{{6, 4}, {4, 3}, {3, 2}}, true, false, 5},
};

TEST(DifferentialPooling, AvgPool2d) {
  NEED_LIBTORCH();
  uint32_t seed = 1;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{2, 3, 7, 9}, {3, 7, 9}, {1, 1, 5, 6}, {2, 5, 1, 1}}) {
    for (Lay lay : lays_for(sizes, 2)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64}) {
        for (const AvgCase& c : kAvg2d) agree_avg(2, sizes, lay, d, c, ++seed);
      }
    }
  }
}

TEST(DifferentialPooling, AvgPool2dLargeWindowsAndEmptyBatch) {
  NEED_LIBTORCH();
  // YOLO's SPP sizes, and windows larger than the input's padded edge.
  const std::vector<AvgCase> cases = {
      {{{13}, {1}, {6}}}, {{{13}, {1}, {6}}, false, false},           {{{9}, {1}, {4}}, true, false},
      {{{20}, {1}, {0}}}, {{{11, 5}, {7, 2}, {5, 2}}, true, true, 7},
  };
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast, Lay::Gapped}) {
    for (Dt d : {Dt::F32, Dt::BF16, Dt::F64}) {
      for (const AvgCase& c : cases) agree_avg(2, {2, 16, 20, 20}, lay, d, c, 7);
    }
  }
  for (Lay lay : lays_for({0, 3, 7, 9}, 2)) {
    for (const AvgCase& c : kAvg2d) agree_avg(2, {0, 3, 7, 9}, lay, Dt::F32, c, 3);
  }
  // Kernels and padding far wider than the input: only what lies inside is walked.
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast}) {
    agree_avg(2, {1, 2, 5, 6}, lay, Dt::F32, {{{2001}, {1}, {1000}}}, 4);
    agree_avg(2, {1, 2, 5, 6}, lay, Dt::F64, {{{2001, 7}, {3, 1}, {1000, 3}}, true, false}, 5);
  }
}

const std::vector<AvgCase> kAvg3d = {
    {{{2}, {}, {0}}},
    {{{3}, {2}, {1}}},
    {{{2, 3, 2}, {1, 2, 2}, {1, 1, 0}}},
    {{{3}, {2}, {1}}, true},
    {{{3}, {3}, {1}}, true, false},
    {{{2, 3, 3}, {2, 2, 3}, {1, 1, 1}}, true, true, 4},
    {{{3}, {2}, {1}}, false, false, -3},
    {{{1}, {1}, {0}}},
    {{{2}, {2}, {1}}, true, true},  // the last window dropped in H
    {{{3}, {1}, {1}}, false, false},
    {{{2, 5, 6}, {1}, {0}}},  // 60 elements
};

TEST(DifferentialPooling, AvgPool3d) {
  NEED_LIBTORCH();
  uint32_t seed = 100;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{2, 3, 4, 5, 6}, {3, 4, 5, 6}, {0, 3, 4, 5, 6}}) {
    for (Lay lay : lays_for(sizes, 3)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::I64}) {
        for (const AvgCase& c : kAvg3d) agree_avg(3, sizes, lay, d, c, ++seed);
      }
    }
  }
  // S3D's shapes, scaled down: the temporal-spatial mean before the head and
  // a 3 x 3 x 3 average in a branch (channels-last-3d input, contiguous result).
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast}) {
    agree_avg(3, {2, 24, 2, 7, 7}, lay, Dt::F32, {{{2, 7, 7}, {1}, {0}}}, 5);
    agree_avg(3, {2, 16, 4, 8, 8}, lay, Dt::F32, {{{3}, {1}, {1}}}, 6);
  }
}

const std::vector<MaxCase> kMax2d = {
    {{{2}, {}, {0}, {1}}},
    {{{3}, {2}, {1}, {1}}, true},
    {{{2, 3}, {1, 2}, {1, 1}, {2, 1}}},
    {{{3}, {1}, {1}, {2}}, true},
    {{{3, 2}, {2, 3}, {0, 1}, {1, 3}}, true},
    {{{5}, {3}, {2}, {1}}, true},
    {{{1}, {1}, {0}, {1}}},
    {{{2}, {2}, {1}, {1}}, true},  // the last window dropped
    {{{4}, {1}, {2}, {2}}},
    {{{7, 9}, {1}, {3, 4}, {1}}},  // 63 elements
};

TEST(DifferentialPooling, MaxPool2d) {
  NEED_LIBTORCH();
  uint32_t seed = 200;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{2, 3, 7, 9}, {3, 7, 9}, {1, 1, 5, 6}, {2, 6, 1, 1}}) {
    for (Lay lay : lays_for(sizes, 2)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64, Dt::I32, Dt::I16, Dt::I8, Dt::U8}) {
        for (const MaxCase& c : kMax2d) agree_max(2, sizes, lay, d, c, ++seed, true);
      }
    }
  }
}

TEST(DifferentialPooling, MaxPool2dLargeWindowsEmptyWindowsAndEmptyBatch) {
  NEED_LIBTORCH();
  // YOLO's SPP: 5, 9 and 13 at stride 1.
  for (int64_t k : {5, 9, 13}) {
    for (Lay lay : {Lay::Contig, Lay::ChannelsLast, Lay::Gapped, Lay::Transposed}) {
      for (Dt d : {Dt::F32, Dt::BF16, Dt::I32}) {
        agree_max(2, {1, 32, 20, 20}, lay, d, {{{k}, {1}, {k / 2}, {1}}}, 11, true);
      }
    }
  }
  // Windows with no element inside the input (dilation past it): the
  // lowest value and the first position's index.
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast}) {
    for (Dt d : {Dt::F32, Dt::I32, Dt::U8}) {
      agree_max(2, {1, 3, 4, 6}, lay, d, {{{2}, {1}, {1, 0}, {5, 1}}}, 12, false);
      agree_max(2, {1, 3, 4, 4}, lay, d, {{{2}, {1}, {1}, {5}}}, 13, false);
    }
  }
  for (Lay lay : lays_for({0, 3, 7, 9}, 2)) {
    for (const MaxCase& c : kMax2d) agree_max(2, {0, 3, 7, 9}, lay, Dt::F32, c, 14, true);
  }
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast}) {
    agree_max(2, {1, 2, 5, 6}, lay, Dt::F32, {{{2001}, {1}, {1000}, {1}}}, 15, true);
    agree_max(2, {1, 2, 5, 6}, lay, Dt::F32, {{{1001, 3}, {2}, {500, 1}, {1, 2}}, true}, 16, true);
  }
}

TEST(DifferentialPooling, MaxPoolTiesAndNaNs) {
  NEED_LIBTORCH();
  // Hand-picked windows: equal maxima (the first wins), NaNs (the last
  // wins), all -inf (the first position), a NaN after a larger number.
  const std::vector<std::vector<double>> rows = {
      {1, 3, 3, 2, 3, 1, 0, 3, 3, 3, 3, 3},
      {1, kNaN, 3, kNaN, 5, 2, kNaN, 1, 0, 0, 0, 0},
      {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf},
      {9, 1, kNaN, 2, 9, kNaN, 9, 9, -1, -1, kNaN, -1},
  };
  for (const auto& v : rows) {
    for (Dt d : {Dt::F32, Dt::BF16, Dt::F16, Dt::F64}) {
      const std::vector<char> bytes = encode(v, d);
      auto with = [&](int dims, const MaxCase& c, const std::vector<int64_t>& sizes) {
        expect_agree(
            [&](Side& sd, int* rc) {
              std::vector<int64_t> st(sizes.size());
              int64_t acc = 1;
              for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
                st[i] = acc;
                acc *= sizes[i];
              }
              AtenTensorHandle x = sd.blob(bytes, sizes, st, code(sd.a, d)), vh = nullptr, ih = nullptr;
              *rc = max_call(sd, dims, x, c, &vh, &ih);
              return kept(sd, {vh, ih});
            },
            std::string("max_pool ties/NaN ") + dt_name(d) + " " + list(v) + " " + c.str(), kExact);
        expect_agree(
            [&](Side& sd, int* rc) {
              std::vector<int64_t> st(sizes.size());
              int64_t acc = 1;
              for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
                st[i] = acc;
                acc *= sizes[i];
              }
              AtenTensorHandle x = sd.blob(bytes, sizes, st, code(sd.a, d)), vh = nullptr, ih = nullptr;
              const std::vector<int64_t> o(dims, 1), o2(dims, 2);
              *rc = adaptive_max_call(sd, dims, x, c.ceil ? o2 : o, &vh, &ih);
              return kept(sd, {vh, ih});
            },
            std::string("adaptive_max_pool ties/NaN ") + dt_name(d) + " " + list(v), kExact);
      };
      with(2, {{{3, 4}, {1}, {0}, {1}}}, {1, 1, 3, 4});
      with(2, {{{2, 2}, {1}, {1}, {1}}, true}, {1, 1, 3, 4});
      with(3, {{{2, 2, 3}, {1}, {0}, {1}}}, {1, 1, 2, 2, 3});
      with(3, {{{2, 2, 2}, {1}, {1}, {1}}, true}, {1, 1, 2, 2, 3});
    }
  }
}

const std::vector<MaxCase> kMax3d = {
    {{{2}, {}, {0}, {1}}},
    {{{3}, {2}, {1}, {1}}, true},
    {{{2, 3, 2}, {1, 2, 1}, {1, 1, 0}, {2, 1, 2}}},
    {{{3}, {1}, {1}, {2}}, true},
    {{{1}, {1}, {0}, {1}}},
    {{{2}, {2}, {1}, {1}}, true},              // the last window dropped in H
    {{{3, 3, 4}, {2}, {1, 1, 2}, {1}}, true},  // 36 elements
};

TEST(DifferentialPooling, MaxPool3d) {
  NEED_LIBTORCH();
  uint32_t seed = 300;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{2, 3, 4, 5, 6}, {3, 4, 5, 6}, {0, 3, 4, 5, 6}}) {
    for (Lay lay : lays_for(sizes, 3)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64, Dt::I8, Dt::U8}) {
        for (const MaxCase& c : kMax3d) agree_max(3, sizes, lay, d, c, ++seed, true);
      }
    }
  }
}

TEST(DifferentialPooling, AdaptiveAvgPool2d) {
  NEED_LIBTORCH();
  const std::vector<std::vector<int64_t>> outs = {{1, 1}, {3, 4}, {7, 9}, {4, 5}, {10, 13}, {2, 1}, {0, 3}, {5, 0}};
  uint32_t seed = 400;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{
           {2, 3, 7, 9}, {3, 7, 9}, {1, 1, 5, 6}, {0, 3, 7, 9}, {2, 0, 7, 9}, {0, 7, 9}}) {
    for (Lay lay : lays_for(sizes, 2)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
        for (const auto& o : outs) agree_adaptive(2, false, sizes, lay, d, o, ++seed);
      }
    }
  }
  // A global mean over a large plane, and non-divisible windows of more
  // than 25 elements; planes above 16384 elements (pooled one by one).
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast, Lay::Gapped}) {
    for (Dt d : {Dt::F32, Dt::BF16}) {
      agree_adaptive(2, false, {2, 16, 33, 31}, lay, d, {1, 1}, 9);
      agree_adaptive(2, false, {2, 16, 33, 31}, lay, d, {5, 4}, 10);
      agree_adaptive(2, false, {1, 2, 130, 131}, lay, d, {5, 7}, 11);
      agree_adaptive(2, false, {2, 130, 131}, lay, d, {1, 1}, 12);
    }
  }
}

TEST(DifferentialPooling, AdaptiveAvgPool3d) {
  NEED_LIBTORCH();
  const std::vector<std::vector<int64_t>> outs = {{1, 1, 1}, {2, 3, 4}, {4, 5, 6}, {3, 4, 5}, {5, 7, 8}, {0, 2, 2}};
  uint32_t seed = 500;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{2, 3, 4, 5, 6}, {3, 4, 5, 6}, {0, 3, 4, 5, 6}}) {
    for (Lay lay : lays_for(sizes, 3)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
        for (const auto& o : outs) agree_adaptive(3, false, sizes, lay, d, o, ++seed);
      }
    }
  }
  // libtorch's 3-d kernel sums in bfloat16 / float16: windows of 2048
  // elements, where that loses most of the sum, agree with it too.
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast}) {
    for (Dt d : {Dt::BF16, Dt::F16, Dt::F32}) {
      agree_adaptive(3, false, {1, 8, 8, 16, 16}, lay, d, {1, 1, 1}, 20);
      agree_adaptive(3, false, {1, 8, 8, 16, 16}, lay, d, {3, 5, 7}, 21);
      agree_adaptive(3, false, {1, 2, 4, 64, 70}, lay, d, {3, 5, 7}, 22);
    }
  }
}

TEST(DifferentialPooling, AdaptiveMaxPool) {
  NEED_LIBTORCH();
  uint32_t seed = 600;
  const std::vector<std::vector<int64_t>> outs2 = {{1, 1}, {3, 4}, {7, 9}, {4, 5}, {10, 13}, {0, 3}};
  for (const auto& sizes :
       std::vector<std::vector<int64_t>>{{2, 3, 7, 9}, {3, 7, 9}, {1, 1, 5, 6}, {0, 3, 7, 9}, {0, 7, 9}}) {
    for (Lay lay : lays_for(sizes, 2)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
        for (const auto& o : outs2) agree_adaptive(2, true, sizes, lay, d, o, ++seed);
      }
    }
  }
  const std::vector<std::vector<int64_t>> outs3 = {{1, 1, 1}, {2, 3, 4}, {4, 5, 6}, {3, 4, 5}, {5, 7, 8}, {0, 1, 2}};
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{2, 3, 4, 5, 6}, {3, 4, 5, 6}, {0, 4, 5, 6}}) {
    for (Lay lay : lays_for(sizes, 3)) {
      for (Dt d : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
        for (const auto& o : outs3) agree_adaptive(3, true, sizes, lay, d, o, ++seed);
      }
    }
  }
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast, Lay::Gapped}) {
    agree_adaptive(2, true, {2, 16, 33, 31}, lay, Dt::F32, {5, 4}, 30);
    agree_adaptive(3, true, {1, 8, 8, 16, 16}, lay, Dt::F32, {3, 5, 7}, 31);
    agree_adaptive(2, true, {1, 2, 130, 131}, lay, Dt::BF16, {5, 7}, 32);
    agree_adaptive(3, true, {1, 2, 4, 64, 70}, lay, Dt::F32, {3, 5, 7}, 33);
  }
}

// Calls libtorch refuses: the shim must refuse them too (and never crash).
TEST(DifferentialPooling, BothRefuse) {
  NEED_LIBTORCH();
  struct Bad {
    std::string what;
    std::function<int(Side&)> call;
  };
  auto tensor = [](Side& sd, std::vector<int64_t> sizes, Dt d) {
    return make(sd, layout(sizes, 0, Lay::Contig), d, 1, false);
  };
  auto avg = [&](int dims, std::vector<int64_t> sizes, Dt d, AvgCase c) {
    return [=](Side& sd) {
      AtenTensorHandle y = nullptr;
      const int rc = avg_call(sd, dims, tensor(sd, sizes, d), c, &y);
      sd.keep(y);
      return rc;
    };
  };
  auto mx = [&](int dims, std::vector<int64_t> sizes, Dt d, MaxCase c) {
    return [=](Side& sd) {
      AtenTensorHandle v = nullptr, i = nullptr;
      const int rc = max_call(sd, dims, tensor(sd, sizes, d), c, &v, &i);
      sd.keep(v);
      sd.keep(i);
      return rc;
    };
  };
  auto ad = [&](int dims, bool max, std::vector<int64_t> sizes, Dt d, std::vector<int64_t> o) {
    return [=](Side& sd) {
      AtenTensorHandle v = nullptr, i = nullptr;
      const int rc = max ? adaptive_max_call(sd, dims, tensor(sd, sizes, d), o, &v, &i)
                         : adaptive_avg_call(sd, dims, tensor(sd, sizes, d), o, &v);
      sd.keep(v);
      sd.keep(i);
      return rc;
    };
  };
  const std::vector<int64_t> x4 = {1, 2, 5, 8}, x5 = {1, 2, 3, 4, 5};
  const std::vector<Bad> bads = {
      {"avg2d kernel_size of 3", avg(2, x4, Dt::F32, {{{2, 2, 2}, {}, {0}}})},
      {"avg2d kernel_size empty", avg(2, x4, Dt::F32, {{{}, {}, {0}}})},
      {"avg2d stride of 3", avg(2, x4, Dt::F32, {{{2}, {1, 1, 1}, {0}}})},
      {"avg2d padding empty", avg(2, x4, Dt::F32, {{{2}, {}, {}}})},
      {"avg2d kernel 0", avg(2, x4, Dt::F32, {{{0, 2}, {1}, {0}}})},
      {"avg2d kernel -1", avg(2, x4, Dt::F32, {{{-1, 2}, {1}, {0}}})},
      {"avg2d stride 0", avg(2, x4, Dt::F32, {{{2}, {0}, {0}}})},
      {"avg2d padding -1", avg(2, x4, Dt::F32, {{{2}, {1}, {-1}}})},
      {"avg2d padding above half", avg(2, x4, Dt::F32, {{{3}, {1}, {2}}})},
      {"avg2d divisor 0", avg(2, x4, Dt::F32, {{{2}, {1}, {0}}, false, true, 0})},
      {"avg2d output too small", avg(2, x4, Dt::F32, {{{6}, {1}, {0}}})},
      {"avg2d 2-d self", avg(2, {5, 8}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg2d 5-d self", avg(2, {1, 1, 1, 5, 8}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg2d empty C", avg(2, {2, 0, 5, 8}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg2d empty H", avg(2, {2, 3, 0, 8}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg2d unbatched empty C", avg(2, {0, 5, 8}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg2d int32", avg(2, x4, Dt::I32, {{{2}, {1}, {0}}})},
      {"avg2d uint8", avg(2, x4, Dt::U8, {{{2}, {1}, {0}}})},
      {"avg2d bool", avg(2, x4, Dt::Bool, {{{2}, {1}, {0}}})},
      {"avg2d complex64", avg(2, x4, Dt::C64, {{{2}, {1}, {0}}})},
      {"avg3d bfloat16", avg(3, x5, Dt::BF16, {{{2}, {1}, {0}}})},
      {"avg3d float16", avg(3, x5, Dt::F16, {{{2}, {1}, {0}}})},
      {"avg3d int32", avg(3, x5, Dt::I32, {{{2}, {1}, {0}}})},
      {"avg3d kernel of 2", avg(3, x5, Dt::F32, {{{2, 2}, {1}, {0}}})},
      {"avg3d smaller than kernel", avg(3, x5, Dt::F32, {{{4, 2, 2}, {1}, {1, 0, 0}}})},
      {"avg3d padding above half", avg(3, x5, Dt::F32, {{{3}, {1}, {2}}})},
      {"avg3d divisor 0", avg(3, x5, Dt::F32, {{{2}, {1}, {0}}, false, true, 0})},
      {"avg3d 3-d self", avg(3, {3, 4, 5}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg3d empty C", avg(3, {1, 0, 3, 4, 5}, Dt::F32, {{{2}, {1}, {0}}})},
      {"avg3d unbatched empty C", avg(3, {0, 3, 4, 5}, Dt::F32, {{{2}, {1}, {0}}})},
      {"max2d dilation empty", mx(2, x4, Dt::F32, {{{2}, {1}, {0}, {}}})},
      {"max2d dilation 0", mx(2, x4, Dt::F32, {{{2}, {1}, {0}, {0}}})},
      {"max2d dilation of 3", mx(2, x4, Dt::F32, {{{2}, {1}, {0}, {1, 1, 1}}})},
      {"max2d padding above half of kernel", mx(2, x4, Dt::F32, {{{3}, {1}, {2}, {2}}})},
      {"max2d padding above half, dilated", mx(2, x4, Dt::F32, {{{2}, {1}, {2}, {3}}})},
      {"max2d kernel 0", mx(2, x4, Dt::F32, {{{0}, {1}, {0}, {1}}})},
      {"max2d stride -2", mx(2, x4, Dt::F32, {{{2}, {-2}, {0}, {1}}})},
      {"max2d output too small", mx(2, x4, Dt::F32, {{{3}, {1}, {0}, {3}}})},
      {"max2d bool", mx(2, x4, Dt::Bool, {{{2}, {1}, {0}, {1}}})},
      {"max2d complex64", mx(2, x4, Dt::C64, {{{2}, {1}, {0}, {1}}})},
      {"max2d empty C", mx(2, {2, 0, 5, 8}, Dt::F32, {{{2}, {1}, {0}, {1}}})},
      {"max2d unbatched empty C", mx(2, {0, 5, 8}, Dt::F32, {{{2}, {1}, {0}, {1}}})},
      {"max2d 2-d self", mx(2, {5, 8}, Dt::F32, {{{2}, {1}, {0}, {1}}})},
      {"max3d bool", mx(3, x5, Dt::Bool, {{{2}, {1}, {0}, {1}}})},
      {"max3d 6-d self", mx(3, {1, 1, 2, 3, 4, 5}, Dt::F32, {{{2}, {1}, {0}, {1}}})},
      {"max3d padding above half", mx(3, x5, Dt::F32, {{{2}, {1}, {2}, {3}}})},
      {"max3d empty D", mx(3, {1, 2, 0, 4, 5}, Dt::F32, {{{2}, {1}, {0}, {1}}})},
      {"max3d unbatched empty C", mx(3, {0, 3, 4, 5}, Dt::F32, {{{2}, {1}, {0}, {1}}})},
      {"max3d unbatched channels-last (2-d)",
       [](Side& sd) {
         AtenTensorHandle v = nullptr, i = nullptr;
         const Layout l{{3, 4, 5, 6}, {120, 1, 24, 4}, 0};
         AtenTensorHandle x = make(sd, l, Dt::F32, 1, false);
         const int rc = max_call(sd, 3, x, {{{2}, {1}, {0}, {1}}}, &v, &i);
         sd.keep(v);
         sd.keep(i);
         return rc;
       }},
      {"adaptive avg2d output_size of 1", ad(2, false, x4, Dt::F32, {3})},
      {"adaptive avg2d output_size of 3", ad(2, false, x4, Dt::F32, {3, 3, 3})},
      {"adaptive avg2d output -1", ad(2, false, x4, Dt::F32, {-1, 3})},
      {"adaptive avg2d int64", ad(2, false, x4, Dt::I64, {3, 3})},
      {"adaptive avg2d empty H", ad(2, false, {2, 3, 0, 8}, Dt::F32, {3, 3})},
      {"adaptive avg2d 2-d self", ad(2, false, {5, 8}, Dt::F32, {3, 3})},
      {"adaptive avg3d output_size of 1", ad(3, false, x5, Dt::F32, {3})},
      {"adaptive avg3d output -1", ad(3, false, x5, Dt::F32, {2, -1, 3})},
      {"adaptive avg3d int32", ad(3, false, x5, Dt::I32, {2, 2, 2})},
      {"adaptive avg3d empty C", ad(3, false, {1, 0, 3, 4, 5}, Dt::F32, {2, 2, 2})},
      {"adaptive max2d output_size of 1", ad(2, true, x4, Dt::F32, {3})},
      {"adaptive max2d output -1", ad(2, true, x4, Dt::F32, {-1, 3})},
      {"adaptive max2d int64", ad(2, true, x4, Dt::I64, {3, 3})},
      {"adaptive max2d empty C", ad(2, true, {2, 0, 5, 8}, Dt::F32, {3, 3})},
      {"adaptive max3d output_size of 2", ad(3, true, x5, Dt::F32, {3, 3})},
      {"adaptive max3d uint8", ad(3, true, x5, Dt::U8, {2, 2, 2})},
      {"adaptive max3d empty W", ad(3, true, {1, 2, 3, 4, 0}, Dt::F32, {2, 2, 2})},
  };
  for (const Bad& b : bads) {
    Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
    const int rt = b.call(t), rs = b.call(s);
    EXPECT_NE(rt, 0) << b.what << ": libtorch accepts it";
    EXPECT_NE(rs, 0) << b.what << ": the shim accepts it";
  }
}

// --- the shim alone against naive loops (no libtorch needed) ------------------

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

void expect_refused(const ShimCase& c, int rc, const std::string& op, const std::string& arg) {
  EXPECT_EQ(rc, 1) << op << " " << arg;
  const std::string msg = c.last_error();
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  EXPECT_NE(msg.find(arg), std::string::npos) << "wanted '" << arg << "' in: " << msg;
}

// The logical input (row-major over `sizes`) of a layout's storage values.
std::vector<double> logical(const Layout& l, const std::vector<double>& storage) {
  int64_t n = 1;
  for (int64_t s : l.sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = l.offset;
    for (int64_t k = static_cast<int64_t>(l.sizes.size()) - 1; k >= 0; --k) {
      off += (rem % l.sizes[k]) * l.strides[k];
      rem /= l.sizes[k];
    }
    v[i] = storage[off];
  }
  return v;
}

// Naive pools over a row-major [planes, D, H, W] input (2-d: D = 1).
struct Ref {
  std::vector<double> v;
  std::vector<int64_t> idx;
};
enum class Kind { Avg, Max, AdaptiveAvg, AdaptiveMax };

Ref ref_pool(Kind kind, const std::vector<double>& x, int64_t planes, const int64_t in[3], const int64_t out[3],
             const int64_t k[3], const int64_t s[3], const int64_t p[3], const int64_t dil[3], bool include_pad,
             std::optional<int64_t> divisor) {
  Ref r;
  const int64_t iv = in[0] * in[1] * in[2];
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          const int64_t o[3] = {o0, o1, o2};
          int64_t lo[3], hi[3], step[3], padded = 1, count = 1;
          for (int i = 0; i < 3; ++i) {
            if (kind == Kind::AdaptiveAvg || kind == Kind::AdaptiveMax) {
              lo[i] = o[i] * in[i] / out[i];
              hi[i] = ((o[i] + 1) * in[i] + out[i] - 1) / out[i];
              step[i] = 1;
            } else if (kind == Kind::Avg) {
              lo[i] = o[i] * s[i] - p[i];
              hi[i] = std::min(lo[i] + k[i], in[i] + p[i]);
              padded *= hi[i] - lo[i];
              lo[i] = std::max<int64_t>(lo[i], 0);
              hi[i] = std::min(hi[i], in[i]);
              count *= std::max<int64_t>(hi[i] - lo[i], 0);
              step[i] = 1;
            } else {
              lo[i] = o[i] * s[i] - p[i];
              hi[i] = std::min(lo[i] + (k[i] - 1) * dil[i] + 1, in[i]);
              while (lo[i] < 0) lo[i] += dil[i];
              step[i] = dil[i];
            }
          }
          double acc = 0, best = -kInf;
          int64_t at = (lo[0] * in[1] + lo[1]) * in[2] + lo[2];
          for (int64_t a = lo[0]; a < hi[0]; a += step[0])
            for (int64_t b = lo[1]; b < hi[1]; b += step[1])
              for (int64_t c = lo[2]; c < hi[2]; c += step[2]) {
                const int64_t flat = (a * in[1] + b) * in[2] + c;
                const double v = x[pl * iv + flat];
                acc += v;
                if (v > best || std::isnan(v)) {
                  best = v;
                  at = flat;
                }
              }
          if (kind == Kind::Max || kind == Kind::AdaptiveMax) {
            r.v.push_back(best);
            r.idx.push_back(at);
          } else if (kind == Kind::AdaptiveAvg) {
            r.v.push_back(acc / ((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2])));
          } else {
            const int64_t f = divisor ? *divisor : include_pad ? padded : count;
            r.v.push_back(count == 0 ? 0.0 : acc / static_cast<double>(f));
          }
        }
  return r;
}

// The result of a channels-last-kept call read in NC(D)HW order is compared
// with the reference; strides checked against `want_strides`.
void check_result(const ShimCase& c, AtenTensorHandle h, const std::vector<int64_t>& want_sizes,
                  const std::vector<int64_t>& want_strides, const std::vector<double>& want, Tol tol,
                  const std::string& what) {
  ASSERT_NE(h, nullptr) << what;
  const TensorDesc d = describe(c.a, h);
  EXPECT_EQ(d.sizes, want_sizes) << what;
  EXPECT_EQ(d.strides, want_strides) << what;
  const auto got = read(c.a, h);
  EXPECT_EQ(compare(got, want, tol), "") << what << "\n  shim " << list(got) << "\n  want " << list(want);
}

std::vector<int64_t> contiguous_of(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

std::vector<int64_t> channels_last_of(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  st[1] = 1;
  int64_t acc = sizes[1];
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 2; --i) {
    st[i] = acc;
    acc *= sizes[i];
  }
  st[0] = acc;
  return st;
}

// Runs one op on the shim for an input of `sizes` in `lay` and checks it
// against ref_pool.
void shim_vs_ref(Kind kind, int dims, const std::vector<int64_t>& sizes, Lay lay, Dt dt, const Lists& l, bool ceil,
                 bool include_pad, std::optional<int64_t> divisor, const std::vector<int64_t>& out_size) {
  ShimCase c;
  const Layout lo = layout(sizes, dims, lay);
  const std::vector<double> storage = values_for(lo.span(), 77, dt, kind == Kind::Max || kind == Kind::AdaptiveMax);
  AtenTensorHandle x = c.sd.blob(encode(storage, dt), lo.sizes, lo.strides, code(c.a, dt), lo.offset);
  // The values as the dtype holds them.
  std::vector<double> xs = logical(lo, storage);
  const int nd = static_cast<int>(sizes.size());
  const bool batched = nd == dims + 2;
  int64_t planes = 1, in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0},
          dil[3] = {1, 1, 1};
  for (int i = 0; i < nd - dims; ++i) planes *= sizes[i];
  auto pick = [&](const std::vector<int64_t>& v, int i, int64_t dflt) {
    return v.empty() ? dflt : v[v.size() == 1 ? 0 : i];
  };
  for (int i = 0; i < dims; ++i) {
    const int j = 3 - dims + i;
    in[j] = sizes[nd - dims + i];
    if (kind == Kind::AdaptiveAvg || kind == Kind::AdaptiveMax) {
      out[j] = out_size[i];
      continue;
    }
    k[j] = pick(l.k, i, 1);
    s[j] = pick(l.s, i, k[j]);
    p[j] = pick(l.p, i, 0);
    dil[j] = pick(l.d, i, 1);
    const int64_t span = in[j] + 2 * p[j] - dil[j] * (k[j] - 1) - 1 + (ceil ? s[j] - 1 : 0);
    out[j] = (span >= 0 ? span / s[j] : -((-span + s[j] - 1) / s[j])) + 1;
    if (ceil && (out[j] - 1) * s[j] >= in[j] + p[j]) --out[j];
  }
  const Ref r = ref_pool(kind, xs, planes, in, out, k, s, p, dil, include_pad, divisor);
  std::vector<int64_t> want_sizes(sizes.begin(), sizes.begin() + (nd - dims));
  for (int i = 0; i < dims; ++i) want_sizes.push_back(out[3 - dims + i]);
  const bool keeps_cl = dims == 2 || kind == Kind::Max;
  const bool cl = batched && keeps_cl && (lay == Lay::ChannelsLast || lay == Lay::ChannelsLastGapped) && sizes[0] > 0 &&
                  sizes[1] > 1;
  const std::vector<int64_t> want_strides = cl ? channels_last_of(want_sizes) : contiguous_of(want_sizes);
  const std::string what = std::string("kind ") + std::to_string(static_cast<int>(kind)) + " " + std::to_string(dims) +
                           "d " + input_str(lo, dt, lay);
  AtenTensorHandle v = nullptr, ix = nullptr;
  int rc = -1;
  AvgCase ac{l, ceil, include_pad, divisor};
  MaxCase mc{l, ceil};
  switch (kind) {
    case Kind::Avg: rc = avg_call(c.sd, dims, x, ac, &v); break;
    case Kind::Max: rc = max_call(c.sd, dims, x, mc, &v, &ix); break;
    case Kind::AdaptiveAvg: rc = adaptive_avg_call(c.sd, dims, x, out_size, &v); break;
    case Kind::AdaptiveMax: rc = adaptive_max_call(c.sd, dims, x, out_size, &v, &ix); break;
  }
  ASSERT_EQ(rc, 0) << what << ": " << c.last_error();
  c.sd.keep(v);
  c.sd.keep(ix);
  Tol tol = tol_for(dt);
  if (dt == Dt::BF16 || dt == Dt::F16) tol.atol = 1e-2;  // the reference is not rounded
  std::vector<double> want = r.v;
  if (dt == Dt::I64 && kind == Kind::Avg) {
    for (double& w : want) w = std::trunc(w);
  }
  check_result(c, v, want_sizes, want_strides, want, kind == Kind::Max || kind == Kind::AdaptiveMax ? kExact : tol,
               what);
  if (ix != nullptr) {
    check_result(c, ix, want_sizes, want_strides, std::vector<double>(r.idx.begin(), r.idx.end()), kExact,
                 what + " indices");
  }
}

TEST(ShimReference, PoolingFixedWindowsMatchLoops) {
  NEED_SHIM();
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast, Lay::Gapped, Lay::Transposed, Lay::ChannelsLastGapped}) {
    for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
      shim_vs_ref(Kind::Avg, 2, {2, 3, 7, 9}, lay, dt, {{3}, {2}, {1}, {}}, true, true, {}, {});
      shim_vs_ref(Kind::Avg, 2, {2, 3, 7, 9}, lay, dt, {{3, 4}, {2, 3}, {1, 2}, {}}, true, false, {}, {});
      shim_vs_ref(Kind::Avg, 2, {2, 3, 20, 20}, lay, dt, {{13}, {1}, {6}, {}}, false, true, 7, {});
      shim_vs_ref(Kind::Max, 2, {2, 3, 7, 9}, lay, dt, {{3}, {2}, {1}, {2}}, true, true, {}, {});
      shim_vs_ref(Kind::Max, 2, {2, 3, 20, 20}, lay, dt, {{13}, {1}, {6}, {1}}, false, true, {}, {});
      shim_vs_ref(Kind::Max, 2, {3, 7, 9}, lay, dt, {{2, 3}, {}, {1}, {1}}, false, true, {}, {});
      shim_vs_ref(Kind::Max, 3, {2, 3, 4, 5, 6}, lay, dt, {{2, 3, 2}, {1, 2, 1}, {1, 1, 0}, {2, 1, 2}}, true, true, {},
                  {});
    }
    for (Dt dt : {Dt::F32, Dt::F64, Dt::I64}) {
      shim_vs_ref(Kind::Avg, 3, {2, 3, 4, 5, 6}, lay, dt, {{3}, {2}, {1}, {}}, true, false, {}, {});
      shim_vs_ref(Kind::Avg, 3, {2, 3, 4, 5, 6}, lay, dt, {{2, 3, 3}, {1}, {1}, {}}, false, true, -3, {});
      shim_vs_ref(Kind::Avg, 2, {2, 3, 7, 9}, lay, dt, {{3}, {1}, {1}, {}}, false, false, {}, {});
    }
    for (Dt dt : {Dt::I32, Dt::I16, Dt::I8, Dt::U8, Dt::I64}) {
      shim_vs_ref(Kind::Max, 2, {2, 3, 7, 9}, lay, dt, {{3}, {2}, {1}, {1}}, true, true, {}, {});
      shim_vs_ref(Kind::Max, 3, {2, 3, 4, 5, 6}, lay, dt, {{2}, {1}, {1}, {1}}, false, true, {}, {});
    }
  }
}

TEST(ShimReference, PoolingAdaptiveWindowsMatchLoops) {
  NEED_SHIM();
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast, Lay::Gapped, Lay::Transposed, Lay::ChannelsLastGapped}) {
    for (Dt dt : {Dt::F32, Dt::F64}) {
      for (const auto& o : std::vector<std::vector<int64_t>>{{1, 1}, {3, 4}, {4, 5}, {10, 13}}) {
        shim_vs_ref(Kind::AdaptiveAvg, 2, {2, 3, 7, 9}, lay, dt, {}, false, true, {}, o);
        shim_vs_ref(Kind::AdaptiveMax, 2, {2, 3, 7, 9}, lay, dt, {}, false, true, {}, o);
      }
      for (const auto& o : std::vector<std::vector<int64_t>>{{1, 1, 1}, {3, 4, 5}, {5, 7, 8}}) {
        shim_vs_ref(Kind::AdaptiveAvg, 3, {2, 3, 4, 5, 6}, lay, dt, {}, false, true, {}, o);
        shim_vs_ref(Kind::AdaptiveMax, 3, {2, 3, 4, 5, 6}, lay, dt, {}, false, true, {}, o);
      }
    }
    for (Dt dt : {Dt::BF16, Dt::F16}) {
      shim_vs_ref(Kind::AdaptiveMax, 2, {2, 3, 7, 9}, lay, dt, {}, false, true, {}, {4, 5});
      shim_vs_ref(Kind::AdaptiveAvg, 2, {2, 3, 7, 9}, lay, dt, {}, false, true, {}, {4, 5});
    }
    // Planes above 16384 elements, pooled one by one.
    shim_vs_ref(Kind::AdaptiveAvg, 2, {1, 2, 130, 131}, lay, Dt::F32, {}, false, true, {}, {5, 7});
    shim_vs_ref(Kind::AdaptiveMax, 3, {1, 2, 4, 64, 70}, lay, Dt::F64, {}, false, true, {}, {3, 5, 7});
  }
}

// libtorch's 3-d adaptive mean of bfloat16 sums in bfloat16: 2048 ones and
// halves in a window stop growing at 256, so the mean is 256 / 2048.
TEST(ShimReference, PoolingAdaptiveAvg3dSumsInTheInputDtype) {
  NEED_SHIM();
  ShimCase c;
  std::vector<double> ones(2048, 1.0);
  for (Dt dt : {Dt::BF16, Dt::F16, Dt::F32}) {
    AtenTensorHandle x = c.sd.blob(encode(ones, dt), {1, 1, 8, 16, 16}, {2048, 2048, 256, 16, 1}, code(c.a, dt));
    AtenTensorHandle y = nullptr;
    const std::vector<int64_t> o = {1, 1, 1};
    ASSERT_EQ(adaptive_avg_call(c.sd, 3, x, o, &y), 0) << c.last_error();
    c.sd.keep(y);
    const double want = dt == Dt::BF16 ? 256.0 / 2048 : dt == Dt::F16 ? 1.0 : 1.0;  // float16 holds 2048 exactly
    EXPECT_EQ(read(c.a, y), std::vector<double>{want}) << dt_name(dt);
    // The 2-d op sums in float: exact.
    AtenTensorHandle x2 = c.sd.blob(encode(ones, dt), {1, 1, 64, 32}, {2048, 2048, 32, 1}, code(c.a, dt));
    const std::vector<int64_t> o2 = {1, 1};
    ASSERT_EQ(adaptive_avg_call(c.sd, 2, x2, o2, &y), 0) << c.last_error();
    c.sd.keep(y);
    EXPECT_EQ(read(c.a, y), std::vector<double>{1.0}) << dt_name(dt);
  }
}

TEST(ShimReference, PoolingEmptyResults) {
  NEED_SHIM();
  for (Lay lay : {Lay::Contig, Lay::ChannelsLast}) {
    shim_vs_ref(Kind::Avg, 2, {0, 3, 7, 9}, lay, Dt::F32, {{3}, {2}, {1}, {}}, true, true, {}, {});
    shim_vs_ref(Kind::Max, 3, {0, 3, 4, 5, 6}, lay, Dt::F32, {{2}, {}, {0}, {1}}, false, true, {}, {});
    shim_vs_ref(Kind::AdaptiveAvg, 2, {2, 3, 7, 9}, lay, Dt::F32, {}, false, true, {}, {0, 3});
    shim_vs_ref(Kind::AdaptiveMax, 3, {0, 3, 4, 5, 6}, lay, Dt::F32, {}, false, true, {}, {2, 2, 2});
  }
}

TEST(ShimReference, PoolingRefusalsNameOpAndArgument) {
  NEED_SHIM();
  ShimCase c;
  const Layout l4 = layout({1, 2, 5, 8}, 2, Lay::Contig), l5 = layout({1, 2, 3, 4, 5}, 3, Lay::Contig);
  AtenTensorHandle x4 = make(c.sd, l4, Dt::F32, 1, false), x5 = make(c.sd, l5, Dt::F32, 1, false);
  AtenTensorHandle i4 = make(c.sd, layout({1, 2, 5, 8}, 2, Lay::Contig), Dt::I32, 1, false);
  AtenTensorHandle b4 = make(c.sd, layout({1, 2, 5, 8}, 2, Lay::Contig), Dt::Bool, 1, false);
  AtenTensorHandle x2 = make(c.sd, layout({5, 8}, 1, Lay::Contig), Dt::F32, 1, false);
  AtenTensorHandle e4 = make(c.sd, layout({1, 0, 5, 8}, 2, Lay::Contig), Dt::F32, 1, false);
  AtenTensorHandle v = nullptr, i = nullptr;
  const int64_t k2[1] = {2}, k0[1] = {0}, one[1] = {1}, zero[1] = {0}, three[3] = {2, 2, 2}, neg[1] = {-1},
                big[1] = {int64_t{1} << 40};
  int64_t div0 = 0;
  const char* avg2 = "aoti_torch_cpu_avg_pool2d";
  const char* avg3 = "aoti_torch_cpu_avg_pool3d";
  const char* max2 = "aoti_torch_cpu_max_pool2d_with_indices";
  const char* max3 = "aoti_torch_cpu_max_pool3d_with_indices";
  auto A2 = c.a.aoti_torch_cpu_avg_pool2d;
  auto A3 = c.a.aoti_torch_cpu_avg_pool3d;
  auto M2 = c.a.aoti_torch_cpu_max_pool2d_with_indices;
  auto M3 = c.a.aoti_torch_cpu_max_pool3d_with_indices;
  expect_refused(c, A2(x4, three, 3, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'kernel_size'");
  expect_refused(c, A2(x4, k0, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'kernel_size'");
  expect_refused(c, A2(x4, nullptr, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'kernel_size'");
  expect_refused(c, A2(x4, big, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'kernel_size'");
  expect_refused(c, A2(x4, k2, 1, three, 3, zero, 1, 0, 1, nullptr, &v), avg2, "'stride'");
  expect_refused(c, A2(x4, k2, 1, zero, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'stride'");
  expect_refused(c, A2(x4, k2, 1, one, 1, zero, 0, 0, 1, nullptr, &v), avg2, "'padding'");
  expect_refused(c, A2(x4, k2, 1, one, 1, neg, 1, 0, 1, nullptr, &v), avg2, "'padding'");
  expect_refused(c, A2(x4, k2, 1, one, 1, k2, 1, 0, 1, nullptr, &v), avg2, "'padding'");
  expect_refused(c, A2(x4, k2, 1, one, 1, zero, 1, 0, 1, &div0, &v), avg2, "'divisor_override'");
  expect_refused(c, A2(x2, k2, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'self'");
  expect_refused(c, A2(e4, k2, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'self'");
  expect_refused(c, A2(i4, k2, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'self'");
  expect_refused(c, A2(nullptr, k2, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "self");
  expect_refused(c, A2(x4, k2, 1, one, 1, zero, 1, 0, 1, nullptr, nullptr), avg2, "ret0");
  const int64_t k6[1] = {6};
  expect_refused(c, A2(x4, k6, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg2, "'self'");  // output too small
  expect_refused(c, A3(x2, k2, 1, one, 1, zero, 1, 0, 1, nullptr, &v), avg3, "'self'");
  const int64_t k433[3] = {4, 3, 3};
  expect_refused(c, A3(x5, k433, 3, one, 1, one, 1, 0, 1, nullptr, &v), avg3, "'self'");  // smaller than kernel
  expect_refused(c, A3(x5, k2, 1, one, 1, zero, 1, 0, 1, &div0, &v), avg3, "'divisor_override'");
  expect_refused(c, M2(x4, k2, 1, one, 1, zero, 1, zero, 1, 0, &v, &i), max2, "'dilation'");
  expect_refused(c, M2(x4, k2, 1, one, 1, zero, 1, one, 0, 0, &v, &i), max2, "'dilation'");
  expect_refused(c, M2(x4, k2, 1, one, 1, k2, 1, one, 1, 0, &v, &i), max2, "'padding'");
  expect_refused(c, M2(b4, k2, 1, one, 1, zero, 1, one, 1, 0, &v, &i), max2, "'self'");
  expect_refused(c, M2(x4, k2, 1, one, 1, zero, 1, one, 1, 0, &v, nullptr), max2, "ret1");
  expect_refused(c, M3(x2, k2, 1, one, 1, zero, 1, one, 1, 0, &v, &i), max3, "'self'");
  expect_refused(c, M3(x5, k2, 1, neg, 1, zero, 1, one, 1, 0, &v, &i), max3, "'stride'");
  const int64_t o3[3] = {2, 2, 2}, o2[2] = {2, 2}, on[2] = {-1, 2};
  expect_refused(c, c.a.aoti_torch_cpu__adaptive_avg_pool2d(x4, o3, 3, &v), "aoti_torch_cpu__adaptive_avg_pool2d",
                 "'output_size'");
  expect_refused(c, c.a.aoti_torch_cpu__adaptive_avg_pool2d(x4, on, 2, &v), "aoti_torch_cpu__adaptive_avg_pool2d",
                 "'output_size'");
  expect_refused(c, c.a.aoti_torch_cpu__adaptive_avg_pool2d(i4, o2, 2, &v), "aoti_torch_cpu__adaptive_avg_pool2d",
                 "'self'");
  expect_refused(c, c.a.aoti_torch_cpu__adaptive_avg_pool3d(x4, o2, 2, &v), "aoti_torch_cpu__adaptive_avg_pool3d",
                 "'output_size'");
  expect_refused(c, c.a.aoti_torch_cpu__adaptive_avg_pool3d(x2, o3, 3, &v), "aoti_torch_cpu__adaptive_avg_pool3d",
                 "'self'");
  expect_refused(c, c.a.aoti_torch_cpu_adaptive_max_pool2d(e4, o2, 2, &v, &i), "aoti_torch_cpu_adaptive_max_pool2d",
                 "'self'");
  expect_refused(c, c.a.aoti_torch_cpu_adaptive_max_pool2d(x4, nullptr, 2, &v, &i),
                 "aoti_torch_cpu_adaptive_max_pool2d", "'output_size'");
  expect_refused(c, c.a.aoti_torch_cpu_adaptive_max_pool3d(x5, o2, 2, &v, &i), "aoti_torch_cpu_adaptive_max_pool3d",
                 "'output_size'");
  expect_refused(c, c.a.aoti_torch_cpu_adaptive_max_pool3d(nullptr, o3, 3, &v, &i),
                 "aoti_torch_cpu_adaptive_max_pool3d", "self");
}

}  // namespace
