// The differential suite for _trilinear, _pdist_forward and grid_sampler_3d
// (since aotrun-shim 1.8): each case makes the same call on real libtorch
// (AOTRUN_LIBTORCH) and on the shim and compares return codes, sizes,
// strides, dtypes and values (NaN equal to NaN). Tolerances:
//  - _trilinear: its sums are GEMMs whose order differs from libtorch's
//    bmm, so floating results are compared as torch.testing.assert_close
//    compares them (float32 rtol 1.3e-6, float64 1e-7, bfloat16 1.6e-2,
//    float16 1e-3), with atol scaled by the sum of |terms| (a result that
//    cancels can differ by a rounding of its terms; bfloat16 and float16
//    also round their intermediates, where one rounding may differ);
//    integers exactly.
//  - _pdist_forward: libtorch sums across vector lanes as wide as the CPU's,
//    the shim across 8: float32 rtol 1.3e-6 / atol 1e-5, float64 1e-7.
//  - grid_sampler_3d: the same arithmetic as libtorch's in the same order:
//    exactly, every dtype.
// Inputs: contiguous, transposed and gapped (offset, strides with holes),
// dtypes float32, float64, bfloat16, float16 (and integers for _trilinear),
// empty sizes, NaN and inf; and the calls both refuse. Cases libtorch takes
// but the shim refuses (documented in docs/SHIM.md) are checked on the shim
// alone. Skips, saying why, without libtorch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
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
using aotrun_shim_test::shim_only;
using aotrun_shim_test::Side;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A tensor to build on both sides: logical sizes over `storage` with
// strides and an offset.
struct In {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  std::vector<double> storage;
  Dt dt = Dt::F32;
  AtenTensorHandle on(Side& s) const { return s.blob(encode(storage, dt), sizes, strides, code(s.a, dt), offset); }
};

enum class Layout { kContiguous, kTransposed, kGapped };

// A tensor of `sizes` laid out as asked (transposed: dims in reverse order in
// memory; gapped: every stride doubled and an offset of 3), its elements
// drawn by `draw`.
In make(const std::vector<int64_t>& sizes, Dt dt, Layout layout, const std::function<double()>& draw) {
  In t;
  t.sizes = sizes;
  t.dt = dt;
  const size_t nd = sizes.size();
  t.strides.assign(nd, 1);
  int64_t st = 1;
  if (layout == Layout::kTransposed) {
    for (size_t i = 0; i < nd; ++i) {
      t.strides[i] = st;
      st *= std::max<int64_t>(sizes[i], 1);
    }
  } else {
    for (size_t i = nd; i-- > 0;) {
      t.strides[i] = st;
      st *= std::max<int64_t>(sizes[i], 1);
    }
  }
  if (layout == Layout::kGapped) {
    for (auto& s : t.strides) s *= 2;
    t.offset = 3;
  }
  int64_t extent = t.offset + 1;
  for (size_t i = 0; i < nd; ++i) extent += (sizes[i] > 0 ? sizes[i] - 1 : 0) * t.strides[i];
  t.storage.resize(static_cast<size_t>(extent));
  for (auto& v : t.storage) v = draw();
  return t;
}

// The logical elements of a result, row-major, as doubles.
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
      out[i] = aotrun_shim_test::f16_value(get(uint16_t{}));
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
Tol assert_close_tol(Dt d) {
  switch (d) {
    case Dt::F32: return {1.3e-6, 1e-5};
    case Dt::F64: return {1e-7, 1e-7};
    case Dt::BF16: return {1.6e-2, 1e-5};
    case Dt::F16: return {1e-3, 1e-5};
    default: return {0, 0};
  }
}

// "" when x and y agree within tol (NaN equal to NaN, infinities exactly).
std::string differs(const std::vector<double>& x, const std::vector<double>& y, Tol tol) {
  if (x.size() != y.size()) return "numel " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) {
        return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
      }
      continue;
    }
    if (std::isinf(x[i]) || std::isinf(y[i])) {
      if (x[i] != y[i])
        return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
      continue;
    }
    if (!(std::fabs(x[i] - y[i]) <= tol.atol + tol.rtol * std::fabs(y[i]))) {
      return "element " + std::to_string(i) + ": shim " + std::to_string(x[i]) + " vs libtorch " + std::to_string(y[i]);
    }
  }
  return "";
}

// One call on both providers: `call` builds its inputs on a side and returns
// the return code, leaving the result in *out. Compares codes, then sizes,
// strides, dtype and values.
using Call = std::function<int32_t(Side&, AtenTensorHandle*)>;
void both(const std::string& what, const Call& call, Tol tol) {
  SCOPED_TRACE(what);
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  AtenTensorHandle ht = nullptr, hs = nullptr;
  const int32_t rt = call(t, &ht), rs = call(s, &hs);
  t.keep(ht);
  s.keep(hs);
  ASSERT_EQ(rs != 0, rt != 0) << "libtorch rc " << rt << ", shim rc " << rs;
  if (rt != 0) return;
  const TensorDesc dt = describe(t.a, ht), ds = describe(s.a, hs);
  EXPECT_EQ(ds.sizes, dt.sizes) << "shim " << ds << "\nlibtorch " << dt;
  EXPECT_EQ(ds.strides, dt.strides) << "shim " << ds << "\nlibtorch " << dt;
  ASSERT_EQ(ds.dtype, dt.dtype);
  ASSERT_EQ(ds.sizes, dt.sizes);
  const std::string d = differs(read(s.a, hs), read(t.a, ht), tol);
  EXPECT_EQ(d, "");
}

// The shim alone refuses, naming the function and `arg`.
void shim_refuses(const Call& call, const char* fn, const char* arg) {
  const auto& so = shim_only();
  ASSERT_EQ(so.problem, "");
  Side s(so.api, "shim");
  AtenTensorHandle h = nullptr;
  const int32_t rc = call(s, &h);
  s.keep(h);
  ASSERT_NE(rc, 0);
  const std::string msg = so.last_error();
  EXPECT_NE(msg.find(fn), std::string::npos) << msg;
  EXPECT_NE(msg.find(arg), std::string::npos) << msg;
}

std::mt19937& rng() {
  static std::mt19937 g(1234);
  return g;
}
std::function<double()> uniform(double lo, double hi) {
  return [lo, hi] { return std::uniform_real_distribution<double>(lo, hi)(rng()); };
}
std::function<double()> small_ints(int lo, int hi) {
  return [lo, hi] { return static_cast<double>(std::uniform_int_distribution<int>(lo, hi)(rng())); };
}

// ---------------------------------------------------------------- _trilinear

struct Tri {
  In i1, i2, i3;
  std::vector<int64_t> e1, e2, e3, sum;
  int64_t unroll = 0;
  Call call() const {
    return [this](Side& s, AtenTensorHandle* out) {
      AtenTensorHandle a = i1.on(s), b = i2.on(s), c = i3.on(s);
      return s.a.aoti_torch_cpu__trilinear(a, b, c, e1.data(), static_cast<int64_t>(e1.size()), e2.data(),
                                           static_cast<int64_t>(e2.size()), e3.data(), static_cast<int64_t>(e3.size()),
                                           sum.data(), static_cast<int64_t>(sum.size()), unroll, out);
    };
  }
};

// Tolerance for a bilinear form over `terms` products of values up to `mag`.
Tol tri_tol(Dt dt, int64_t terms, double mag) {
  Tol t = assert_close_tol(dt);
  if (is_float(dt)) t.atol += t.rtol * static_cast<double>(terms) * mag * 4;
  return t;
}

Tri bilinear(int64_t b, int64_t i, int64_t j, int64_t o, Dt dt, Layout l1, Layout lw, Layout l2, int64_t unroll) {
  auto draw = is_float(dt) ? uniform(-2, 2) : dt == Dt::U8 ? small_ints(0, 4) : small_ints(-3, 3);
  Tri t;
  t.i1 = make({b, i}, dt, l1, draw);
  t.i2 = make({o, i, j}, dt, lw, draw);
  t.i3 = make({b, j}, dt, l2, draw);
  t.e1 = {1, 3};
  t.e2 = {0};
  t.e3 = {1, 2};
  t.sum = {2, 3};
  t.unroll = unroll;
  return t;
}

TEST(TrilinearDifferential, BilinearShapesLayoutsDtypes) {
  NEED_LIBTORCH();
  const Dt dts[] = {Dt::F32, Dt::F64, Dt::BF16, Dt::F16, Dt::I64, Dt::I32, Dt::I8, Dt::U8};
  const Layout ls[] = {Layout::kContiguous, Layout::kTransposed, Layout::kGapped};
  struct Shape {
    int64_t b, i, j, o;
  };
  const Shape shapes[] = {{4, 3, 5, 6}, {1, 1, 1, 1}, {7, 16, 9, 5},   {0, 3, 4, 2},
                          {3, 0, 4, 2}, {2, 3, 4, 0}, {33, 40, 24, 17}};
  int n = 0;
  for (Dt dt : dts) {
    for (const Shape& sh : shapes) {
      for (int li = 0; li < 3; ++li) {
        for (int64_t unroll : {1, 0, 2, 3}) {
          const Tri t = bilinear(sh.b, sh.i, sh.j, sh.o, dt, ls[li], ls[(li + 1) % 3], ls[(li + 2) % 3], unroll);
          both(std::string(dt_name(dt)) + " bilinear b" + std::to_string(sh.b) + " i" + std::to_string(sh.i) + " j" +
                   std::to_string(sh.j) + " o" + std::to_string(sh.o) + " layout " + std::to_string(li) + " unroll " +
                   std::to_string(unroll),
               t.call(), tri_tol(dt, sh.i * sh.j, 4.0));
          ++n;
        }
      }
    }
  }
  EXPECT_GT(n, 0);
}

TEST(TrilinearDifferential, OtherPatterns) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::I64, Dt::I32}) {
    auto draw = is_float(dt) ? uniform(-2, 2) : small_ints(-3, 3);
    const Tol tol = tri_tol(dt, 64, 4.0);
    auto name = [&](const char* w) { return std::string(dt_name(dt)) + " " + w; };
    {  // no summed dim: the broadcast product [B, O, I, J]
      Tri t = bilinear(3, 2, 4, 5, dt, Layout::kContiguous, Layout::kGapped, Layout::kTransposed, 1);
      t.sum = {};
      both(name("no sum"), t.call(), tol);
      t.unroll = 3;
      both(name("no sum unroll 3"), t.call(), tol);
    }
    {  // negative dims in every list
      Tri t = bilinear(3, 2, 4, 5, dt, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
      t.e1 = {-3, -1};
      t.e2 = {-4};
      t.e3 = {-3, -2};
      t.sum = {-2, -1};
      both(name("negative dims"), t.call(), tol);
    }
    {  // i1 broadcast along the batch (size 1 where the others have 4)
      Tri t = bilinear(4, 3, 5, 2, dt, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
      t.i1 = make({1, 3}, dt, Layout::kContiguous, draw);
      both(name("i1 broadcast"), t.call(), tol);
      t.i3 = make({1, 5}, dt, Layout::kContiguous, draw);  // the output's size is i3's: 1, buf's 1
      both(name("i1 and i3 broadcast"), t.call(), tol);
      t.i1 = make({4, 3}, dt, Layout::kContiguous, draw);
      t.unroll = 0;  // unrolled over i3's size 1: libtorch computes batch 0 only
      both(name("i3 size 1 along the unrolled batch"), t.call(), tol);
    }
    {  // a summed dim only i1 has (pre-summed): int64 and floats take it, int32 is refused
      Tri t;
      t.i1 = make({2, 3}, dt, Layout::kGapped, draw);
      t.i2 = make({2}, dt, Layout::kContiguous, draw);
      t.i3 = make({2}, dt, Layout::kContiguous, draw);
      t.e2 = {1};
      t.e3 = {1};
      t.sum = {1};
      both(name("one-sided sum"), t.call(), tol);
      t.sum = {0, 1};
      both(name("one-sided sum, all summed"), t.call(), tol);
      t.unroll = 1;
      both(name("one-sided sum, all summed, unroll 1"), t.call(), tol);
    }
    {  // elementwise products of three [2, 3, 4] tensors, summed over dim 1
      Tri t;
      t.i1 = make({2, 3, 4}, dt, Layout::kTransposed, draw);
      t.i2 = make({2, 3, 4}, dt, Layout::kGapped, draw);
      t.i3 = make({2, 3, 4}, dt, Layout::kContiguous, draw);
      for (int64_t u : {0, 1, 2}) {
        t.unroll = u;
        t.sum = {1};
        both(name("three-way sum 1, unroll ") + std::to_string(u), t.call(), tol);
        t.sum = {0, 2};
        both(name("three-way sum 0 2, unroll ") + std::to_string(u), t.call(), tol);
      }
    }
    {  // 0-d inputs expanded to 1-d, and a dim every input is expanded at
      Tri t;
      t.i1 = make({}, dt, Layout::kContiguous, draw);
      t.i2 = make({}, dt, Layout::kContiguous, draw);
      t.i3 = make({}, dt, Layout::kContiguous, draw);
      t.e1 = t.e2 = t.e3 = t.sum = {0};
      both(name("0-d summed"), t.call(), tol);
      t.sum = {};
      both(name("0-d, all expanded, not summed (size 0)"), t.call(), tol);
    }
  }
}

TEST(TrilinearDifferential, SpecialValues) {
  NEED_LIBTORCH();
  const double specials[] = {kNaN, kInf, -kInf, 0.0, -0.0, 1e30, 1.5};
  size_t k = 0;
  auto draw = [&] { return specials[(k++ * 5) % 7]; };
  for (Dt dt : {Dt::F32, Dt::F64}) {
    Tri t = bilinear(3, 4, 5, 2, dt, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
    t.i1 = make({3, 4}, dt, Layout::kContiguous, draw);
    both(std::string(dt_name(dt)) + " specials in i1", t.call(), {1.3e-6, 1e-5});
    t.i2.storage.assign(t.i2.storage.size(), 0.0);
    t.i2.storage[5] = kInf;
    both(std::string(dt_name(dt)) + " specials in i1, one inf weight", t.call(), {1.3e-6, 1e-5});
  }
}

TEST(TrilinearDifferential, BothRefuse) {
  NEED_LIBTORCH();
  const Tri base = bilinear(4, 3, 5, 2, Dt::F32, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
  auto refuse = [&](const std::string& what, const Tri& t) { both("refused: " + what, t.call(), {}); };
  Tri t = base;
  t.unroll = 4;
  refuse("unroll_dim 4", t);
  t.unroll = -1;
  refuse("unroll_dim -1", t);
  t = base;
  t.e1 = {1, 1};
  refuse("repeated expand1", t);
  t = base;
  t.sum = {2, -2};
  refuse("repeated sumdim", t);
  t = base;
  t.e2 = {4};
  refuse("expand2 out of range", t);
  t = base;
  t.i2.dt = Dt::F64;
  refuse("i2 float64", t);
  t = base;
  t.i3.dt = Dt::F64;
  refuse("i3 float64", t);
  for (Dt dt : {Dt::Bool, Dt::U16}) {
    t = bilinear(4, 3, 5, 2, dt, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
    refuse(std::string(dt_name(dt)), t);
  }
  t = base;
  t.i1 = make({4, 2}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  refuse("i1 columns differ from the weight's", t);
  t = base;
  t.i3 = make({4, 5, 1}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  refuse("i3 one dim too many", t);
  t = base;
  t.i2 = make({2, 3}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  refuse("i2 one dim short", t);
  {  // a summed dim only i1 has, in int32: libtorch's sum makes it int64
    Tri u;
    u.i1 = make({2, 3}, Dt::I32, Layout::kContiguous, small_ints(-3, 3));
    u.i2 = make({2}, Dt::I32, Layout::kContiguous, small_ints(-3, 3));
    u.i3 = make({2}, Dt::I32, Layout::kContiguous, small_ints(-3, 3));
    u.e2 = {1};
    u.e3 = {1};
    u.sum = {1};
    refuse("int32 one-sided sum", u);
  }
}

TEST(TrilinearShim, RefusesNamingArgument) {
  Tri t = bilinear(4, 3, 5, 2, Dt::F32, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
  t.unroll = 9;
  shim_refuses(t.call(), "aoti_torch_cpu__trilinear", "unroll_dim");
  t.unroll = 1;
  t.e3 = {1, 1};
  shim_refuses(t.call(), "aoti_torch_cpu__trilinear", "expand3");
  t = bilinear(4, 3, 5, 2, Dt::C64, Layout::kContiguous, Layout::kContiguous, Layout::kContiguous, 1);
  shim_refuses(t.call(), "aoti_torch_cpu__trilinear", "i1");  // libtorch takes complex; the shim does not
}

// ------------------------------------------------------------ _pdist_forward

Call pdist_call(const In& x, double p) {
  return [x, p](Side& s, AtenTensorHandle* out) { return s.a.aoti_torch_cpu__pdist_forward(x.on(s), p, out); };
}

TEST(PdistDifferential, SizesNormsDtypes) {
  NEED_LIBTORCH();
  const double ps[] = {2.0, 0.0, 1.0, kInf, -kInf, 0.5, 3.0, 1.7, -1.0, kNaN};
  int n = 0;
  for (Dt dt : {Dt::F32, Dt::F64}) {
    for (int64_t rows : {0, 1, 2, 5, 17}) {
      for (int64_t cols : {0, 1, 3, 8, 13, 33}) {
        // Values on a coarse grid so that equal elements (p = 0) occur.
        const In x = make({rows, cols}, dt, Layout::kContiguous,
                          [] { return std::round(std::uniform_real_distribution<double>(-3, 3)(rng()) * 2) / 2; });
        for (double p : ps) {
          Tol tol = assert_close_tol(dt);
          if (p != 0.0 && p != 1.0 && p != 2.0 && !std::isinf(p)) tol.rtol *= 4;  // pow's last bits differ
          both(std::string(dt_name(dt)) + " pdist " + std::to_string(rows) + "x" + std::to_string(cols) + " p " +
                   std::to_string(p),
               pdist_call(x, p), tol);
          ++n;
        }
      }
    }
  }
  EXPECT_GT(n, 0);
}

TEST(PdistDifferential, SpecialValues) {
  NEED_LIBTORCH();
  const double specials[] = {kNaN, kInf, -kInf, 0.0, 2.0, -1.0};
  for (Dt dt : {Dt::F32, Dt::F64}) {
    size_t k = 0;
    const In x = make({6, 11}, dt, Layout::kContiguous, [&] { return specials[(k++ * 7) % 6]; });
    for (double p : {0.0, 1.0, 2.0, kInf, 0.5, 3.0}) {
      both(std::string(dt_name(dt)) + " specials p " + std::to_string(p), pdist_call(x, p), {1e-5, 1e-5});
    }
  }
}

TEST(PdistDifferential, BothRefuse) {
  NEED_LIBTORCH();
  for (Dt dt : {Dt::BF16, Dt::F16, Dt::I64}) {
    both(std::string("refused ") + dt_name(dt),
         pdist_call(make({4, 3}, dt, Layout::kContiguous, small_ints(-2, 2)), 2.0), {});
  }
  both("refused transposed", pdist_call(make({4, 3}, Dt::F32, Layout::kTransposed, uniform(-1, 1)), 2.0), {});
  both("refused gapped", pdist_call(make({4, 3}, Dt::F32, Layout::kGapped, uniform(-1, 1)), 2.0), {});
  both("refused 1-d", pdist_call(make({4}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), 2.0), {});
  both("refused 0-d", pdist_call(make({}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), 2.0), {});
}

TEST(PdistShim, RefusesNamingArgument) {
  shim_refuses(pdist_call(make({4, 3}, Dt::F32, Layout::kTransposed, uniform(-1, 1)), 2.0),
               "aoti_torch_cpu__pdist_forward", "self");
  // libtorch takes a 3-d self but pairs rows past size(0), in chunks that
  // depend on its thread count: the shim refuses it.
  shim_refuses(pdist_call(make({3, 4, 2}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), 2.0),
               "aoti_torch_cpu__pdist_forward", "self");
}

// ----------------------------------------------------------- grid_sampler_3d

Call grid_call(const In& input, const In& grid, int64_t interp, int64_t pad, bool align) {
  return [=](Side& s, AtenTensorHandle* out) {
    return s.a.aoti_torch_cpu_grid_sampler_3d(input.on(s), grid.on(s), interp, pad, align ? 1 : 0, out);
  };
}

// grid [N, D, H, W, 3] with the coordinate dim strided (built as [N, 3, D, H, W]).
In coord_strided_grid(const std::vector<int64_t>& s, Dt dt, const std::function<double()>& draw) {
  In g = make({s[0], 3, s[1], s[2], s[3]}, dt, Layout::kContiguous, draw);
  g.sizes = {s[0], s[1], s[2], s[3], 3};
  g.strides = {g.strides[0], g.strides[2], g.strides[3], g.strides[4], g.strides[1]};
  return g;
}

TEST(GridSampler3dDifferential, ModesPaddingsDtypesLayouts) {
  NEED_LIBTORCH();
  struct Case {
    std::vector<int64_t> in, out;  // in: N, C, D, H, W; out: D', H', W'
  };
  const Case cases[] = {{{2, 3, 2, 3, 4}, {2, 3, 4}}, {{1, 1, 1, 1, 1}, {1, 2, 5}}, {{1, 2, 5, 1, 3}, {3, 1, 2}},
                        {{0, 2, 2, 2, 2}, {1, 2, 2}}, {{2, 0, 2, 2, 2}, {1, 2, 2}}, {{1, 2, 2, 2, 2}, {0, 2, 2}}};
  int n = 0;
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
    for (const Case& c : cases) {
      for (int li = 0; li < 3; ++li) {
        const In input = make(c.in, dt, static_cast<Layout>(li), uniform(-3, 3));
        const std::vector<int64_t> gs = {c.in[0], c.out[0], c.out[1], c.out[2]};
        const In grid = li == 1 ? coord_strided_grid(gs, dt, uniform(-1.4, 1.4))
                                : make({gs[0], gs[1], gs[2], gs[3], 3}, dt, static_cast<Layout>(li == 2 ? 2 : 0),
                                       uniform(-1.4, 1.4));
        for (int64_t interp : {0, 1}) {
          for (int64_t pad : {0, 1, 2}) {
            for (bool align : {false, true}) {
              both(std::string(dt_name(dt)) + " grid_sampler_3d layout " + std::to_string(li) + " interp " +
                       std::to_string(interp) + " pad " + std::to_string(pad) + " align " + std::to_string(align) +
                       " N" + std::to_string(c.in[0]) + " C" + std::to_string(c.in[1]),
                   grid_call(input, grid, interp, pad, align), {});
              ++n;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(n, 0);
}

TEST(GridSampler3dDifferential, SpecialCoordinates) {
  NEED_LIBTORCH();
  const double specials[] = {kNaN, kInf, -kInf, 1e30, -1e30, -1.0, 1.0, 0.0, 0.5, -0.25, 3.7, -2.9, 1e-8, 0.999999};
  for (Dt dt : {Dt::F32, Dt::F64, Dt::BF16, Dt::F16}) {
    const In input = make({1, 2, 3, 2, 4}, dt, Layout::kContiguous, uniform(-3, 3));
    size_t k = 0;
    const In grid = make({1, 4, 5, 7, 3}, dt, Layout::kContiguous, [&] { return specials[(k++ * 5) % 14]; });
    for (int64_t interp : {0, 1}) {
      for (int64_t pad : {0, 1, 2}) {
        for (bool align : {false, true}) {
          both(std::string(dt_name(dt)) + " specials interp " + std::to_string(interp) + " pad " + std::to_string(pad) +
                   " align " + std::to_string(align),
               grid_call(input, grid, interp, pad, align), {});
        }
      }
    }
  }
}

TEST(GridSampler3dDifferential, BothRefuse) {
  NEED_LIBTORCH();
  const In input = make({2, 3, 2, 3, 4}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  const In grid = make({2, 2, 2, 2, 3}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  In g64 = grid;
  g64.dt = Dt::F64;
  both("refused: grid float64", grid_call(input, g64, 0, 0, false), {});
  both("refused: batch sizes differ",
       grid_call(input, make({1, 2, 2, 2, 3}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), 0, 0, false), {});
  both("refused: grid's last dim 2",
       grid_call(input, make({2, 2, 2, 2, 2}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), 0, 0, false), {});
  both("refused: 4-d",
       grid_call(make({2, 3, 2, 3}, Dt::F32, Layout::kContiguous, uniform(-1, 1)),
                 make({2, 2, 2, 3}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), 0, 0, false),
       {});
  both("refused: empty depth",
       grid_call(make({2, 3, 0, 3, 4}, Dt::F32, Layout::kContiguous, uniform(-1, 1)), grid, 0, 0, false), {});
  In i64 = make({2, 3, 2, 3, 4}, Dt::I64, Layout::kContiguous, small_ints(-2, 2));
  In gi64 = grid;
  gi64.dt = Dt::I64;
  both("refused: int64", grid_call(i64, gi64, 0, 0, false), {});
}

TEST(GridSampler3dShim, RefusesNamingArgument) {
  const In input = make({1, 1, 2, 2, 2}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  const In grid = make({1, 1, 1, 2, 3}, Dt::F32, Layout::kContiguous, uniform(-1, 1));
  // libtorch's 3-d kernel leaves its result uninitialized for these: refused.
  shim_refuses(grid_call(input, grid, 2, 0, false), "aoti_torch_cpu_grid_sampler_3d", "interpolation_mode");
  shim_refuses(grid_call(input, grid, 3, 0, false), "aoti_torch_cpu_grid_sampler_3d", "interpolation_mode");
  shim_refuses(grid_call(input, grid, 0, 3, false), "aoti_torch_cpu_grid_sampler_3d", "padding_mode");
  In g2 = grid;
  g2.sizes = {1, 1, 1, 3, 2};
  g2.strides = {6, 6, 6, 2, 1};
  shim_refuses(grid_call(input, g2, 0, 0, false), "aoti_torch_cpu_grid_sampler_3d", "grid");
}

// A shim-only check of trilinear weights against a hand computation: the
// centre of a 2x2x2 cube with align_corners averages its eight voxels.
TEST(GridSampler3dShim, CentreAveragesCube) {
  const auto& so = shim_only();
  ASSERT_EQ(so.problem, "");
  Side s(so.api, "shim");
  In input;
  input.sizes = {1, 1, 2, 2, 2};
  input.strides = {8, 8, 4, 2, 1};
  input.storage = {1, 2, 3, 4, 5, 6, 7, 8};
  In grid;
  grid.sizes = {1, 1, 1, 1, 3};
  grid.strides = {3, 3, 3, 3, 1};
  grid.storage = {0, 0, 0};
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(grid_call(input, grid, 0, 0, true)(s, &h), 0);
  s.keep(h);
  EXPECT_EQ(read(s.a, h), std::vector<double>{4.5});
}

}  // namespace
