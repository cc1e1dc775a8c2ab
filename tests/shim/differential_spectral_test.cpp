// The real fallbacks of issue #38 (since aotrun-shim 1.4): the pointwise
// functions Inductor leaves to the C shim around an FFT
// (aoti_torch_cpu_mul_Tensor, aoti_torch_cpu_slice_Tensor,
// aoti_torch_cpu_view_dtype, aoti_torch_cpu_cat) and the proxy executor's
// aten::median.dim, aten::constant_pad_nd, aten::full and aten::slice_scatter.
//
// ShimDifferentialSpectral.*: the same call on real libtorch (AOTRUN_LIBTORCH)
// and on the shim, comparing return codes, sizes, strides, storage offsets,
// dtypes and values (integers and bool exactly; floating values within
// assert_close's tolerances, NaN equal to NaN; median's values and indices
// exactly). median.dim has no C shim function: libtorch runs it through
// aoti_torch_call_dispatcher("aten::median", "dim"), the shim through its
// proxy executor as a model's wrapper calls it. Skips, saying why, without
// AOTRUN_LIBTORCH.
//
// ShimReference.*: the shim alone against naive loops (no libtorch needed).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "differential.hpp"

namespace {

using aotrun_shim_test::providers;
using aotrun_shim_test::Side;
using cd = std::complex<double>;

// c10::ScalarType codes (the same on both providers).
enum Dt : int32_t {
  U8 = 0,
  I8 = 1,
  I16 = 2,
  I32 = 3,
  I64 = 4,
  F16 = 5,
  F32 = 6,
  F64 = 7,
  C64 = 9,
  C128 = 10,
  B = 11,
  BF16 = 15,
  U16 = 27,
  U32 = 28,
  U64 = 29
};

bool cplx(int32_t d) { return d == C64 || d == C128; }
size_t itemsize(int32_t d) {
  switch (d) {
    case U8:
    case I8:
    case B: return 1;
    case I16:
    case F16:
    case BF16:
    case U16: return 2;
    case I32:
    case U32:
    case F32: return 4;
    case C128: return 16;
    default: return 8;
  }
}

std::string str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The functions under test, resolved from a loaded library.
struct Api {
  int32_t (*mul)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*) = nullptr;
  int32_t (*slice)(AtenTensorHandle, int64_t, int64_t*, int64_t*, int64_t, AtenTensorHandle*) = nullptr;
  int32_t (*view_dtype)(AtenTensorHandle, int32_t, AtenTensorHandle*) = nullptr;
  int32_t (*cat)(const AtenTensorHandle*, int64_t, int64_t, AtenTensorHandle*) = nullptr;
  std::string missing;
  void resolve(void* h) {
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(h ? ::dlsym(h, name) : nullptr);
      if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    get(mul, "aoti_torch_cpu_mul_Tensor");
    get(slice, "aoti_torch_cpu_slice_Tensor");
    get(view_dtype, "aoti_torch_cpu_view_dtype");
    get(cat, "aoti_torch_cpu_cat");
  }
};

// libtorch's dispatcher (median.dim) and the shim's proxy executor.
using Dispatch = int32_t (*)(const char*, const char*, uint64_t*);
using ExCreate = int32_t (*)(const char*, size_t, void**);
using ExDelete = void (*)(void*);
using ExCall = int32_t (*)(void*, int, int, int64_t*, int, AtenTensorHandle*);
struct Executor {
  ExCreate create = nullptr;
  ExDelete del = nullptr;
  ExCall call = nullptr;
  void resolve(void* h) {
    create = reinterpret_cast<ExCreate>(::dlsym(h, "aotrun_shim_proxy_executor_create"));
    del = reinterpret_cast<ExDelete>(::dlsym(h, "aotrun_shim_proxy_executor_delete"));
    call = reinterpret_cast<ExCall>(::dlsym(h, "aoti_torch_proxy_executor_call_function"));
  }
  bool ok() const { return create && del && call; }
};

struct Both {
  Api torch, shim;
  Dispatch dispatch = nullptr;
  Executor ex;
  std::string problem;
};
const Both& both() {
  static Both* p = [] {
    auto* b = new Both;
    if (!providers().skip.empty()) {
      b->problem = providers().skip;
      return b;
    }
    const std::string path = std::string(std::getenv("AOTRUN_LIBTORCH")) + "/libtorch_cpu.so";
    void* t = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    void* s = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    b->torch.resolve(t);
    b->shim.resolve(s);
    b->dispatch = reinterpret_cast<Dispatch>(t ? ::dlsym(t, "aoti_torch_call_dispatcher") : nullptr);
    if (s) b->ex.resolve(s);
    if (!b->torch.missing.empty()) b->problem = "libtorch lacks " + b->torch.missing;
    if (!b->shim.missing.empty()) b->problem += " the shim lacks " + b->shim.missing;
    if (b->dispatch == nullptr) b->problem += " libtorch lacks aoti_torch_call_dispatcher";
    if (!b->ex.ok()) b->problem += " the shim lacks the proxy executor";
    return b;
  }();
  return *p;
}

#define NEED_BOTH()                                                  \
  do {                                                               \
    if (!providers().skip.empty()) GTEST_SKIP() << providers().skip; \
    ASSERT_TRUE(both().problem.empty()) << both().problem;           \
  } while (0)

// ---- values -----------------------------------------------------------------

uint16_t to_half(float f) {  // round to nearest even; normal, zero, inf, NaN
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  const int32_t e = static_cast<int32_t>((u >> 23) & 0xff) - 127 + 15;
  if (std::isinf(f) || e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) return static_cast<uint16_t>(sign);  // tests use no subnormals
  uint32_t m = u & 0x7fffffu, h = (static_cast<uint32_t>(e) << 10) | (m >> 13);
  const uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}
float from_half(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  uint32_t u;
  if (e == 0 && m == 0) {
    u = sign;
  } else if (e == 31) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e == 0) {  // subnormal
    float f = std::ldexp(static_cast<float>(m), -24);
    return sign ? -f : f;
  } else {
    u = sign | ((e - 15 + 127) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Deterministic values in [-1, 1).
std::vector<double> noise(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(s >> 8) / static_cast<double>(1u << 23) - 1.0;
  }
  return v;
}

// Bytes of `vals` stored as dtype d (complex: re, im; integers: rounded;
// bool: != 0).
std::vector<char> encode(const std::vector<cd>& vals, int32_t d) {
  std::vector<char> b(vals.size() * itemsize(d));
  for (size_t i = 0; i < vals.size(); ++i) {
    char* p = b.data() + i * itemsize(d);
    const double r = vals[i].real(), im = vals[i].imag();
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (d) {
      case C64: put(std::complex<float>(static_cast<float>(r), static_cast<float>(im))); break;
      case C128: put(vals[i]); break;
      case F32: put(static_cast<float>(r)); break;
      case F64: put(r); break;
      case F16: put(to_half(static_cast<float>(r))); break;
      case BF16: put(to_bf16(static_cast<float>(r))); break;
      case I64: put(static_cast<int64_t>(std::llround(r))); break;
      case I32: put(static_cast<int32_t>(std::llround(r))); break;
      case I16: put(static_cast<int16_t>(std::llround(r))); break;
      case I8: put(static_cast<int8_t>(std::llround(r))); break;
      case U8: put(static_cast<uint8_t>(std::llround(r))); break;
      case U16: put(static_cast<uint16_t>(std::llround(r))); break;
      case U32: put(static_cast<uint32_t>(std::llround(r))); break;
      case U64: put(static_cast<uint64_t>(r)); break;  // r is a whole number, up to 2^64
      case B: put(static_cast<uint8_t>(r != 0 ? 1 : 0)); break;
      default: ADD_FAILURE() << "encode: dtype " << d;
    }
  }
  return b;
}

cd decode(const char* p, int32_t d) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (d) {
    case C64: {
      const auto v = get(std::complex<float>());
      return cd(v.real(), v.imag());
    }
    case C128: return get(cd());
    case F32: return get(0.f);
    case F64: return get(0.0);
    case F16: return from_half(get(uint16_t{}));
    case BF16: return from_bf16(get(uint16_t{}));
    case I64: return static_cast<double>(get(int64_t{}));
    case I32: return get(int32_t{});
    case I16: return get(int16_t{});
    case I8: return get(int8_t{});
    case U8: return get(uint8_t{});
    case U16: return get(uint16_t{});
    case U32: return get(uint32_t{});
    case U64: return static_cast<double>(get(uint64_t{}));
    case B: return get(uint8_t{}) ? 1.0 : 0.0;
    default: ADD_FAILURE() << "decode: dtype " << d;
  }
  return 0;
}

int64_t span(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset = 0) {
  int64_t s = 1 + offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return offset + 1;
    s += (sizes[i] - 1) * strides[i];
  }
  return s;
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

// Values for a dtype: integers in [-8, 8] (bool: about half true); 16-bit
// floats on a grid of 1/8 (exact in both); others noise.
std::vector<cd> values_for(int32_t d, int64_t n, uint32_t seed) {
  const std::vector<double> a = noise(n, seed), b = noise(n, seed + 101);
  std::vector<cd> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (cplx(d)) {
      v[i] = cd(a[i] * 2, b[i] * 2);
    } else if (d == F32 || d == F64) {
      v[i] = a[i] * 2;
    } else if (d == F16 || d == BF16) {
      v[i] = std::round(a[i] * 32) / 8;
    } else if (d == B) {
      v[i] = a[i] > 0 ? 1 : 0;
    } else if (d == U8) {
      v[i] = std::round((a[i] + 1) * 8);
    } else if (d == U16 || d == U32 || d == U64) {  // beyond the signed type of the same width
      v[i] = std::round((a[i] + 1) * (d == U16 ? 3e4 : d == U32 ? 2e9 : 9e18));
    } else {
      v[i] = std::round(a[i] * 8);
    }
  }
  return v;
}

// A tensor viewing `storage` (as dtype d) with these sizes/strides/offset.
AtenTensorHandle make(Side& sd, const std::vector<cd>& storage, int32_t d, const std::vector<int64_t>& sizes,
                      const std::vector<int64_t>& strides, int64_t offset = 0) {
  return sd.blob(encode(storage, d), sizes, strides, d, offset);
}

AtenTensorHandle rand_view(Side& sd, int32_t d, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                           uint32_t seed, int64_t offset = 0) {
  return make(sd, values_for(d, span(sizes, strides, offset), seed), d, sizes, strides, offset);
}

// Logical elements in row-major order.
std::vector<cd> elems(const ShimApi& a, AtenTensorHandle h) {
  const TensorDesc d = describe(a, h);
  void* data = nullptr;
  a.aoti_torch_get_data_ptr(h, &data);
  std::vector<cd> out(static_cast<size_t>(d.numel));
  for (int64_t i = 0; i < d.numel; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = d.dim - 1; k >= 0; --k) {
      off += (rem % d.sizes[k]) * d.strides[k];
      rem /= d.sizes[k];
    }
    out[i] = decode(static_cast<const char*>(data) + off * static_cast<int64_t>(itemsize(d.dtype)), d.dtype);
  }
  return out;
}

bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Exact (integers, bool, or `exact`) or within atol 1e-5 / rtol 1.3e-6
// (float32: assert_close; 1e-12 for 64-bit; 16-bit floats: 1e-5 / 1e-3),
// NaN equal to NaN, infinities equal.
void expect_values(const std::vector<cd>& got, const std::vector<cd>& want, int32_t d, const std::string& what,
                   bool exact = false) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const bool wide = d == F64 || d == C128, half = d == F16 || d == BF16;
  const bool ex = exact || !(cplx(d) || d == F32 || d == F64 || half);
  const double atol = wide ? 1e-12 : 1e-5, rtol = wide ? 1e-12 : half ? (d == BF16 ? 1.6e-2 : 1e-3) : 1.3e-6;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = true;
    for (int part = 0; part < 2; ++part) {
      const double g = part ? got[i].imag() : got[i].real(), w = part ? want[i].imag() : want[i].real();
      if (same_number(g, w)) continue;
      if (ex || std::isnan(g) || std::isnan(w) || std::isinf(g) || std::isinf(w) ||
          !(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
        ok = false;
      }
    }
    if (!ok && ++bad <= 3) ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
  }
  EXPECT_EQ(bad, 0) << what;
}

struct Pair {
  Side t{providers().torch, "libtorch"}, s{providers().shim, "shim"};
};

// Runs call on both sides with inputs made by make_inputs; compares.
template <typename Make, typename Call>
void compare(const std::string& what, Make&& make_inputs, Call&& call, bool same_storage_view = false) {
  Pair p;
  std::vector<AtenTensorHandle> it = make_inputs(p.t), is = make_inputs(p.s);
  AtenTensorHandle ot = nullptr, os = nullptr;
  const int rt = call(both().torch, it, &ot);
  const int rs = call(both().shim, is, &os);
  p.t.keep(ot);
  p.s.keep(os);
  ASSERT_EQ(rs, rt) << what << ": return codes differ (libtorch " << rt << ", shim " << rs << ")";
  if (rt != 0) return;
  const TensorDesc dt = describe(p.t.a, ot), ds = describe(p.s.a, os);
  EXPECT_EQ(ds.sizes, dt.sizes) << what;
  EXPECT_EQ(ds.strides, dt.strides) << what;
  EXPECT_EQ(ds.dtype, dt.dtype) << what;
  EXPECT_EQ(ds.storage_offset, dt.storage_offset) << what;
  if (same_storage_view) {  // a view: the same memory as the input on the shim
    void *pi = nullptr, *po = nullptr;
    p.s.a.aoti_torch_get_data_ptr(is[0], &pi);
    p.s.a.aoti_torch_get_data_ptr(os, &po);
    const TensorDesc di = describe(p.s.a, is[0]);
    const int64_t bytes_in = di.storage_offset * static_cast<int64_t>(itemsize(di.dtype));
    const int64_t bytes_out = ds.storage_offset * static_cast<int64_t>(itemsize(ds.dtype));
    EXPECT_EQ(static_cast<char*>(po) - static_cast<char*>(pi), bytes_out - bytes_in) << what << ": not a view";
  }
  if (ds.sizes != dt.sizes || ds.dtype != dt.dtype) return;
  expect_values(elems(p.s.a, os), elems(p.t.a, ot), dt.dtype, what);
}

// ---- mul_Tensor ---------------------------------------------------------------

struct Operand {
  int32_t dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

void mul_case(const Operand& a, const Operand& b, const std::string& note = "") {
  const std::string what = "mul " + std::to_string(a.dtype) + str(a.sizes) + str(a.strides) + " * " +
                           std::to_string(b.dtype) + str(b.sizes) + str(b.strides) + " " + note;
  compare(
      what,
      [&](Side& sd) {
        return std::vector<AtenTensorHandle>{rand_view(sd, a.dtype, a.sizes, a.strides, 3, a.offset),
                                             rand_view(sd, b.dtype, b.sizes, b.strides, 5, b.offset)};
      },
      [&](const Api& f, const std::vector<AtenTensorHandle>& in, AtenTensorHandle* o) {
        return f.mul(in[0], in[1], o);
      });
}

TEST(ShimDifferentialSpectral, MulTensorDtypesAndPromotion) {
  NEED_BOTH();
  const std::vector<std::pair<int32_t, int32_t>> pairs = {
      {C64, C64}, {C64, F32}, {F32, C64}, {C128, C64},  {C64, F64},  {C128, I64}, {C64, B},   {I32, C64},
      {F32, F32}, {F64, F32}, {F16, F16}, {BF16, BF16}, {F16, BF16}, {F16, F32},  {I64, I32}, {I32, I32},
      {U8, I8},   {I16, U8},  {I8, I8},   {B, B},       {B, I64},    {F32, I64},  {BF16, I8}, {C128, C128}};
  for (const auto& [x, y] : pairs) {
    mul_case({x, {2, 9}, {9, 1}}, {y, {2, 9}, {9, 1}}, "same shape");
    mul_case({x, {2, 9}, {9, 1}}, {y, {9}, {1}}, "broadcast row");
  }
}

TEST(ShimDifferentialSpectral, MulTensorZeroDimOperandsRankLower) {
  NEED_BOTH();
  // Inductor's X * 0.5: a 0-d float64 tensor (scalar_to_tensor) times complex64.
  const std::vector<std::pair<int32_t, int32_t>> pairs = {{C64, F64}, {F32, C128}, {I64, F64},  {F16, F32}, {I32, I64},
                                                          {B, F32},   {C64, C128}, {BF16, F64}, {U8, I64},  {I64, C64}};
  for (const auto& [dims, zero] : pairs) {
    mul_case({dims, {3, 4}, {4, 1}}, {zero, {}, {}}, "0-d other");
    mul_case({zero, {}, {}}, {dims, {3, 4}, {4, 1}}, "0-d self");
  }
  mul_case({C64, {}, {}}, {F64, {}, {}}, "both 0-d");
  mul_case({F64, {}, {}}, {C64, {}, {}}, "both 0-d");
}

TEST(ShimDifferentialSpectral, MulTensorBroadcastAndLayouts) {
  NEED_BOTH();
  for (int32_t d : {C64, C128, F32, I64}) {
    const int32_t e = cplx(d) ? F32 : d;
    mul_case({d, {3, 1, 4}, {4, 4, 1}}, {e, {1, 5, 1}, {5, 1, 1}});
    mul_case({d, {4, 3}, {1, 4}}, {d, {4, 3}, {1, 4}}, "both transposed");
    mul_case({d, {4, 3}, {1, 4}}, {e, {4, 3}, {3, 1}}, "transposed first");
    mul_case({d, {4, 3}, {3, 1}}, {e, {4, 3}, {1, 4}}, "transposed second");
    mul_case({d, {4, 3}, {10, 2}, 1}, {e, {3}, {2}}, "gapped, offset");
    mul_case({d, {2, 3, 4}, {1, 8, 2}}, {e, {4}, {1}}, "permuted, broadcast");
    mul_case({d, {2, 3, 4}, {12, 1, 3}}, {e, {2, 3, 4}, {12, 1, 3}}, "same permuted dense");
    mul_case({d, {4, 3}, {0, 1}}, {e, {4, 3}, {3, 1}}, "expanded");
    mul_case({d, {2, 1, 3}, {3, 3, 1}}, {e, {2, 1, 3}, {3, 3, 1}}, "size-1 dim");
    mul_case({d, {1, 4}, {4, 1}}, {e, {5, 1}, {1, 1}}, "outer product");
    mul_case({d, {0, 9}, {9, 1}}, {e, {9}, {1}}, "empty");
    mul_case({d, {3, 0}, {1, 1}}, {e, {3, 1}, {1, 1}}, "empty");
    mul_case({d, {3, 4}, {4, 1}}, {e, {3, 5}, {5, 1}}, "refused: shapes do not broadcast");
  }
}

TEST(ShimDifferentialSpectral, MulTensorNanInfAndSignedZeros) {
  NEED_BOTH();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<cd> xs = {{inf, 1}, {1, inf}, {nan, 0}, {0, nan}, {-0.0, 0.0}, {0.0, -0.0}, {-inf, -inf}, {2, -3}};
  const std::vector<cd> ys = {{2, 0}, {0, 0}, {-0.0, 1}, {inf, 0}, {nan, nan}, {1, -0.0}, {-1, 0}, {0.5, 0.25}};
  for (int32_t dx : {C64, C128}) {
    for (int32_t dy : {C64, F32, F64, C128}) {
      compare(
          "mul special values " + std::to_string(dx) + " * " + std::to_string(dy),
          [&](Side& sd) {
            std::vector<cd> y = ys;
            if (!cplx(dy)) {
              for (cd& v : y) v = v.real();
            }
            return std::vector<AtenTensorHandle>{make(sd, xs, dx, {8, 1}, {1, 1}), make(sd, y, dy, {8}, {1})};
          },
          [&](const Api& f, const std::vector<AtenTensorHandle>& in, AtenTensorHandle* o) {
            return f.mul(in[0], in[1], o);
          });
    }
  }
}

TEST(ShimDifferentialSpectral, MulTensorIntegerOverflowWraps) {
  NEED_BOTH();
  for (int32_t d : {I8, I16, I32, I64, U8}) {
    compare(
        "mul overflow " + std::to_string(d),
        [&](Side& sd) {
          const std::vector<cd> big = {100, 127, -128, 255, 3, 60};
          std::vector<cd> v = big;
          if (d == I32) {
            for (cd& x : v) x *= 1.0e7;
          }
          if (d == I64) {
            for (cd& x : v) x *= 1.0e16;
          }
          return std::vector<AtenTensorHandle>{make(sd, v, d, {6}, {1}), make(sd, v, d, {6}, {1})};
        },
        [&](const Api& f, const std::vector<AtenTensorHandle>& in, AtenTensorHandle* o) {
          return f.mul(in[0], in[1], o);
        });
  }
}

// ---- slice_Tensor and view_dtype ------------------------------------------------

void slice_case(int32_t d, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t dim,
                const int64_t* start, const int64_t* end, int64_t step, int64_t offset = 0) {
  const std::string what = "slice " + std::to_string(d) + str(sizes) + str(strides) + " dim " + std::to_string(dim) +
                           " start " + (start ? std::to_string(*start) : "none") + " end " +
                           (end ? std::to_string(*end) : "none") + " step " + std::to_string(step);
  compare(
      what, [&](Side& sd) { return std::vector<AtenTensorHandle>{rand_view(sd, d, sizes, strides, 7, offset)}; },
      [&](const Api& f, const std::vector<AtenTensorHandle>& in, AtenTensorHandle* o) {
        int64_t s = start ? *start : 0, e = end ? *end : 0;
        return f.slice(in[0], dim, start ? &s : nullptr, end ? &e : nullptr, step, o);
      },
      /*same_storage_view=*/true);
}

TEST(ShimDifferentialSpectral, SliceTensorBoundsStepsAndLayouts) {
  NEED_BOTH();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<std::pair<int64_t, int64_t>> bounds = {{0, 5}, {2, 9},       {-4, kMax}, {-100, 3}, {3, 100},
                                                           {7, 2}, {kMax, kMax}, {0, -1},    {-3, -1},  {9, 9}};
  for (int32_t d : {C64, C128, F32, I64, B, F16}) {
    for (const auto& [s, e] : bounds) {
      for (int64_t step : {1, 2, 3}) {
        slice_case(d, {2, 9}, {9, 1}, 1, &s, &e, step);
        slice_case(d, {9, 2}, {1, 9}, 0, &s, &e, step);       // transposed
        slice_case(d, {3, 9}, {20, 2}, -1, &s, &e, step, 1);  // gapped, offset
      }
    }
    slice_case(d, {2, 9}, {9, 1}, 1, nullptr, nullptr, 1);
    const int64_t five = 5, two = 2;
    slice_case(d, {2, 9}, {9, 1}, 1, nullptr, &five, 1);
    slice_case(d, {2, 9}, {9, 1}, -2, &two, nullptr, 1);
    slice_case(d, {0, 9}, {9, 1}, 0, &two, &five, 1);   // empty
    slice_case(d, {2, 9}, {9, 1}, 1, &two, &five, 0);   // refused: step 0
    slice_case(d, {2, 9}, {9, 1}, 1, &two, &five, -1);  // refused: negative step
    slice_case(d, {2, 9}, {9, 1}, 2, &two, &five, 1);   // refused: dim out of range
    slice_case(d, {}, {}, 0, &two, &five, 1);           // refused: 0-d
  }
}

void view_case(int32_t from, int32_t to, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
               int64_t offset = 0) {
  compare(
      "view_dtype " + std::to_string(from) + " -> " + std::to_string(to) + " " + str(sizes) + str(strides) + " +" +
          std::to_string(offset),
      [&](Side& sd) { return std::vector<AtenTensorHandle>{rand_view(sd, from, sizes, strides, 9, offset)}; },
      [&](const Api& f, const std::vector<AtenTensorHandle>& in, AtenTensorHandle* o) {
        return f.view_dtype(in[0], to, o);
      },
      /*same_storage_view=*/true);
}

TEST(ShimDifferentialSpectral, ViewDtypeSameAndOtherElementSizes) {
  NEED_BOTH();
  // What Inductor does for X + Y on complex64: view as float32, add, view back.
  view_case(C64, F32, {2, 9}, {9, 1});
  view_case(F32, C64, {2, 18}, {18, 1});
  view_case(C128, F64, {3, 4}, {1, 3});  // refused: last stride 3
  view_case(C128, F64, {3, 4}, {4, 1}, 2);
  view_case(F64, C128, {3, 4}, {4, 1}, 2);
  view_case(F32, C64, {2, 9}, {9, 1});     // refused: odd last size
  view_case(F32, C64, {2, 8}, {8, 1}, 1);  // refused: odd offset
  view_case(F32, C64, {2, 8}, {9, 1});     // refused: odd stride
  view_case(F32, C64, {}, {});             // refused: 0-d
  view_case(C64, F32, {}, {});             // refused: 0-d
  view_case(F32, I32, {3, 4}, {1, 3});     // same size: any strides
  view_case(I64, C64, {}, {});
  view_case(C64, C64, {2, 3}, {3, 1});
  view_case(C64, I16, {2, 3}, {3, 1});
  view_case(U8, F32, {2, 8}, {8, 1});
  view_case(F16, BF16, {5}, {2});
  view_case(C64, F32, {0, 3}, {3, 1});
}

// ---- cat -------------------------------------------------------------------------

struct CatIn {
  int32_t dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

void cat_case(const std::vector<CatIn>& ins, int64_t dim, const std::string& note = "") {
  std::string what = "cat dim " + std::to_string(dim) + " " + note + ":";
  for (const CatIn& c : ins) what += " " + std::to_string(c.dtype) + str(c.sizes) + str(c.strides);
  compare(
      what,
      [&](Side& sd) {
        std::vector<AtenTensorHandle> v;
        for (size_t i = 0; i < ins.size(); ++i) {
          v.push_back(
              rand_view(sd, ins[i].dtype, ins[i].sizes, ins[i].strides, 17 + static_cast<uint32_t>(i), ins[i].offset));
        }
        return v;
      },
      [&](const Api& f, const std::vector<AtenTensorHandle>& in, AtenTensorHandle* o) {
        return f.cat(in.data(), static_cast<int64_t>(in.size()), dim, o);
      });
}

TEST(ShimDifferentialSpectral, CatDtypesAndPromotion) {
  NEED_BOTH();
  for (int32_t d : {C64, C128, F32, F64, F16, BF16, I64, I32, I16, I8, U8, U16, U32, U64, B}) {
    cat_case({{d, {2, 5}, {5, 1}}, {d, {2, 4}, {4, 1}}}, -1, "the spectrum rebuilt");
    cat_case({{d, {2, 3}, {3, 1}}, {d, {1, 3}, {3, 1}}, {d, {4, 3}, {3, 1}}}, 0, "three");
  }
  const std::vector<std::pair<int32_t, int32_t>> pairs = {
      {C64, F32},
      {F32, C64},
      {C64, F64},
      {C64, C128},
      {C64, I64},
      {C64, B},
      {F32, F64},
      {F16, BF16},
      {F16, F32},
      {BF16, I8},
      {I64, I32},
      {U8, I8},
      {I16, U8},
      {B, I32},
      {B, F16},
      {I32, F32},
      // libtorch promotes uint16/32/64 only with a floating type; else both refuse
      {U64, F32},
      {F64, U16},
      {U16, I32},
      {U16, U8},
      {U32, U64},
      {B, U32}};
  for (const auto& [x, y] : pairs) cat_case({{x, {3, 2}, {2, 1}}, {y, {3, 4}, {4, 1}}}, 1, "mixed dtypes");
}

TEST(ShimDifferentialSpectral, CatDimsEmptiesAndStrides) {
  NEED_BOTH();
  for (int32_t d : {C64, F32, I64, B}) {
    for (int64_t dim : {0, 1, 2, -1, -2, -3}) {
      std::vector<int64_t> a = {2, 3, 4}, b = a;
      b[(dim + 3) % 3] = 1;
      cat_case({{d, a, row_major(a)}, {d, b, row_major(b)}}, dim, "dims");
    }
    // 1-d empties are skipped (shape and dim wrap), other empties are not.
    cat_case({{d, {0}, {1}}, {d, {2, 3}, {3, 1}}, {d, {0}, {1}}, {d, {2, 1}, {1, 1}}}, -1, "skipped 1-d empties");
    cat_case({{d, {0}, {1}}, {d, {0}, {1}}}, 0, "all skipped");
    cat_case({{d, {0}, {1}}, {d, {0}, {1}}}, 3, "all skipped, dim not wrapped");
    cat_case({{d, {2, 0}, {1, 1}}, {d, {2, 3}, {3, 1}}}, 1, "empty with dims");
    cat_case({{d, {0, 3}, {3, 1}}, {d, {2, 3}, {3, 1}}}, 0, "empty with dims");
    cat_case({{d, {2, 0}, {1, 1}}, {d, {2, 3}, {3, 1}}}, 0, "refused: empty with dims is checked");
    cat_case({{d, {4}, {1}}, {d, {5}, {1}}}, 0, "1-d");
    // Strides: transposed, gapped with an offset, expanded, permuted 3-d.
    cat_case({{d, {3, 2}, {1, 3}}, {d, {3, 4}, {4, 1}}}, 1, "transposed first");
    cat_case({{d, {3, 2}, {1, 3}}, {d, {3, 4}, {1, 3}}}, 1, "both transposed");
    cat_case({{d, {3, 2}, {7, 3}, 2}, {d, {3, 4}, {0, 1}}}, 1, "gapped, expanded");
    cat_case({{d, {2, 3, 4}, {1, 8, 2}}, {d, {2, 3, 4}, {12, 1, 3}}}, 0, "permuted");
    // Channels-last (4-d) and channels-last-3d (5-d): the result follows when every input does.
    cat_case({{d, {2, 3, 4, 5}, {60, 1, 15, 3}}, {d, {1, 3, 4, 5}, {60, 1, 15, 3}}}, 0, "channels-last");
    cat_case({{d, {2, 3, 4, 5}, {60, 1, 15, 3}}, {d, {2, 2, 4, 5}, {40, 1, 10, 2}}}, 1, "channels-last on C");
    cat_case({{d, {2, 3, 4, 5}, {60, 1, 15, 3}}, {d, {2, 3, 4, 5}, {60, 20, 5, 1}}}, 3, "mixed: contiguous");
    cat_case({{d, {2, 3, 4, 5}, {60, 1, 15, 3}}, {d, {0}, {1}}}, 0, "channels-last with a skipped empty");
    cat_case({{d, {2, 3, 2, 2, 2}, {24, 1, 12, 6, 3}}, {d, {2, 3, 2, 2, 1}, {12, 1, 6, 3, 3}}}, 4, "channels-last-3d");
    cat_case({{d, {2, 1, 2, 2}, {4, 4, 2, 1}}, {d, {2, 1, 2, 2}, {4, 1, 2, 1}}}, 0, "ambiguous size-1 C");
  }
}

TEST(ShimDifferentialSpectral, CatRefusesWhatLibtorchRefuses) {
  NEED_BOTH();
  cat_case({{C64, {2, 5}, {5, 1}}, {C64, {3, 4}, {4, 1}}}, 1, "sizes differ outside dim");
  cat_case({{C64, {2, 5}, {5, 1}}, {C64, {2, 5, 1}, {5, 1, 1}}}, 1, "ndims differ");
  cat_case({{F32, {2, 5}, {5, 1}}, {F32, {2, 5}, {5, 1}}}, 2, "dim out of range");
  cat_case({{F32, {2, 5}, {5, 1}}, {F32, {2, 5}, {5, 1}}}, -3, "dim out of range");
  cat_case({{F32, {}, {}}, {F32, {2}, {1}}}, 0, "0-d");
  cat_case({}, 0, "no tensors");
}

// ---- median.dim ---------------------------------------------------------------

std::string median_nodes(bool keepdim) {
  return std::string(R"({"nodes": [{"name": "buf0", "node": {"target": "aten::median.dim", "inputs": [)"
                     R"({"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1}, )"
                     R"({"name": "dim", "arg": {"as_int": 0}, "kind": 1}, )"
                     R"({"name": "keepdim", "arg": {"as_bool": )") +
         (keepdim ? "true" : "false") +
         R"(}, "kind": 1}], "outputs": [{"as_tensor": {"name": "buf1"}}, )"
         R"({"as_tensor": {"name": "buf2"}}]}}]})";
}

// median.dim of x through a shim executor, as the wrapper calls it (into
// uninitialized handles). Returns the return code; values and indices kept.
int shim_median(const Executor& ex, Side& sd, AtenTensorHandle x, int64_t dim, bool keepdim, AtenTensorHandle* v,
                AtenTensorHandle* i) {
  const std::string nodes = median_nodes(keepdim);
  void* h = nullptr;
  EXPECT_EQ(ex.create(nodes.c_str(), nodes.size(), &h), 0);
  sd.a.aoti_torch_new_uninitialized_tensor(v);
  sd.a.aoti_torch_new_uninitialized_tensor(i);
  sd.keep(*v);
  sd.keep(*i);
  AtenTensorHandle t[3] = {x, *v, *i};
  const int rc = ex.call(h, 0, 1, &dim, 3, t);
  ex.del(h);
  return rc;
}

void median_case(int32_t d, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t dim,
                 bool keepdim, const std::vector<cd>* storage = nullptr, uint32_t seed = 13) {
  const std::string what = "median " + std::to_string(d) + str(sizes) + str(strides) + " dim " + std::to_string(dim) +
                           " keepdim " + std::to_string(keepdim);
  Pair p;
  auto input = [&](Side& sd) {
    return storage ? make(sd, *storage, d, sizes, strides) : rand_view(sd, d, sizes, strides, seed);
  };
  AtenTensorHandle xt = input(p.t), xs = input(p.s);
  // libtorch: aten::median.dim through its dispatcher (the stack takes a new
  // handle to self; the results come back as new handles).
  AtenTensorHandle arg = nullptr;
  ASSERT_EQ(p.t.a.aoti_torch_new_tensor_handle(xt, &arg), 0);
  uint64_t stack[3] = {reinterpret_cast<uint64_t>(arg), static_cast<uint64_t>(dim), keepdim ? 1u : 0u};
  const int rt = both().dispatch("aten::median", "dim", stack);
  AtenTensorHandle vt = nullptr, it = nullptr;
  if (rt == 0) {
    vt = p.t.keep(reinterpret_cast<AtenTensorHandle>(stack[0]));
    it = p.t.keep(reinterpret_cast<AtenTensorHandle>(stack[1]));
  }
  AtenTensorHandle vs = nullptr, is = nullptr;
  const int rs = shim_median(both().ex, p.s, xs, dim, keepdim, &vs, &is);
  ASSERT_EQ(rs, rt) << what << ": return codes differ (libtorch " << rt << ", shim " << rs << ")";
  if (rt != 0) return;
  for (auto [ht, hs, name] : {std::make_tuple(vt, vs, "values"), std::make_tuple(it, is, "indices")}) {
    const TensorDesc dt = describe(p.t.a, ht), ds = describe(p.s.a, hs);
    EXPECT_EQ(ds.sizes, dt.sizes) << what << " " << name;
    EXPECT_EQ(ds.strides, dt.strides) << what << " " << name;
    EXPECT_EQ(ds.dtype, dt.dtype) << what << " " << name;
    if (ds.sizes == dt.sizes && ds.dtype == dt.dtype) {
      expect_values(elems(p.s.a, hs), elems(p.t.a, ht), dt.dtype, what + " " + name, /*exact=*/true);
    }
  }
}

TEST(ShimDifferentialSpectral, MedianDimDtypesSizesAndDims) {
  NEED_BOTH();
  for (int32_t d : {F32, F64, F16, BF16, I64, I32, I16, I8, U8}) {
    for (int64_t n : {1, 2, 3, 4, 7, 8, 33}) {
      for (bool keep : {false, true}) {
        median_case(d, {3, n}, {n, 1}, 1, keep);
        median_case(d, {n, 3}, {3, 1}, 0, keep);  // strided lines
        median_case(d, {3, n}, {n, 1}, -1, keep);
      }
    }
    median_case(d, {2, 3, 4}, {12, 4, 1}, 1, false);
    median_case(d, {2, 3, 4}, {1, 8, 2}, 2, true);  // permuted
    median_case(d, {4, 5}, {12, 2}, 1, false);      // gapped
    median_case(d, {4, 5}, {1, 4}, 1, false);       // transposed
    median_case(d, {}, {}, 0, false);               // 0-d
    median_case(d, {}, {}, -1, true);
    median_case(d, {0, 5}, {5, 1}, 1, false);  // empty, non-reduced dim
    median_case(d, {0, 5}, {5, 1}, 1, true);
    median_case(d, {3, 0}, {1, 1}, 1, false);  // refused: reduced dim of size 0
    median_case(d, {3, 4}, {4, 1}, 2, false);  // refused: dim out of range
  }
}

TEST(ShimDifferentialSpectral, MedianDimTiesNanAndSignedZeros) {
  NEED_BOTH();
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> lines = {
      {2, 1, 2, 3, 2, 1, 2}, {1, 1, 1, 1},       {3, 3, 1, 1, 2, 2},        {nan, 1, 2},
      {1, nan, 2, nan},      {nan, nan},         {-0.0, 0.0, -0.0},         {0.0, -0.0},
      {inf, -inf, inf},      {-inf, -inf, 5, 5}, {5, 4, 3, 2, 1, 0, -1, 2}, {2, 2, 1, 1, 3, 3},
      {1, 2, 3, 4, inf, nan}};
  for (int32_t d : {F32, F64, F16, BF16}) {
    for (const auto& l : lines) {
      const std::vector<cd> st(l.begin(), l.end());
      const int64_t n = static_cast<int64_t>(l.size());
      median_case(d, {1, n}, {n, 1}, 1, false, &st);
      median_case(d, {n, 1}, {1, 1}, 0, true, &st);
    }
  }
  for (int32_t d : {I64, I32, U8}) {  // integer ties, both parities
    for (int64_t n : {5, 6, 40}) median_case(d, {4, n}, {n, 1}, 1, false, nullptr, 77);
    const std::vector<cd> st = {3, 3, 3, 1, 1, 2, 2, 2};
    median_case(d, {2, 4}, {4, 1}, 1, false, &st);
    median_case(d, {2, 4}, {4, 1}, 0, false, &st);
  }
}

TEST(ShimDifferentialSpectral, MedianDimRefusesWhatLibtorchRefuses) {
  NEED_BOTH();
  median_case(B, {3, 4}, {4, 1}, 1, false);
  median_case(C64, {3, 4}, {4, 1}, 1, false);
}

// ---- the shim alone -------------------------------------------------------------

struct ShimOnlyCase {
  const ShimApi& a = aotrun_shim_test::shim_only().api;
  Side sd{aotrun_shim_test::shim_only().api, "shim"};
  Api f;
  Executor ex;
  ShimOnlyCase() {
    void* h = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    f.resolve(h);
    ex.resolve(h);
  }
};

#define NEED_SHIM()                                                                                      \
  do {                                                                                                   \
    ASSERT_TRUE(aotrun_shim_test::shim_only().problem.empty()) << aotrun_shim_test::shim_only().problem; \
  } while (0)

void expect_refused(int rc, const char* op, const char* arg) {
  EXPECT_NE(rc, 0) << op << " " << arg;
  const std::string msg = aotrun_shim_test::shim_only().last_error();
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::string("argument '") + arg + "'"), std::string::npos) << msg;
}

TEST(ShimReference, MulTensorMatchesNaiveComplexProducts) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_TRUE(c.f.missing.empty()) << c.f.missing;
  // X [2, 3, 5] (transposed in its last two dims) * w [5] (complex), * g
  // [2, 1, 5] (float32), and * a 0-d float64 0.5 (stays complex64).
  const std::vector<cd> xs = values_for(C64, 30, 1), ws = values_for(C64, 5, 2), gs = values_for(F32, 10, 3);
  AtenTensorHandle x = make(c.sd, xs, C64, {2, 3, 5}, {15, 1, 3});
  AtenTensorHandle w = make(c.sd, ws, C64, {5}, {1});
  AtenTensorHandle g = make(c.sd, gs, F32, {2, 1, 5}, {5, 5, 1});
  AtenTensorHandle half = make(c.sd, {cd(0.5)}, F64, {}, {});
  auto x_at = [&](int64_t i, int64_t j, int64_t k) { return xs[i * 15 + j + k * 3]; };
  auto rounded = [](cd v) { return cd(static_cast<float>(v.real()), static_cast<float>(v.imag())); };
  for (int which = 0; which < 3; ++which) {
    AtenTensorHandle other = which == 0 ? w : which == 1 ? g : half, out = nullptr;
    ASSERT_EQ(c.f.mul(x, other, &out), 0) << aotrun_shim_test::shim_only().last_error();
    c.sd.keep(out);
    const TensorDesc d = describe(c.a, out);
    EXPECT_EQ(d.dtype, C64);
    EXPECT_EQ(d.sizes, (std::vector<int64_t>{2, 3, 5}));
    EXPECT_EQ(d.strides, (std::vector<int64_t>{15, 1, 3})) << "laid out like X";
    std::vector<cd> want;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 5; ++k) {
          const cd y = which == 0 ? ws[k] : which == 1 ? cd(static_cast<float>(gs[i * 5 + k].real())) : cd(0.5);
          want.push_back(rounded(rounded(x_at(i, j, k)) * rounded(y)));
        }
    expect_values(elems(c.a, out), want, C64, "mul " + std::to_string(which));
  }
  // Real dtypes: int64 * int32 broadcast, float64 result of float32 * float64.
  AtenTensorHandle a = make(c.sd, {1, -2, 3, 4, 5, 6}, I64, {2, 3}, {3, 1});
  AtenTensorHandle b = make(c.sd, {7, 8, 9}, I32, {3}, {1}), out = nullptr;
  ASSERT_EQ(c.f.mul(a, b, &out), 0);
  c.sd.keep(out);
  EXPECT_EQ(describe(c.a, out).dtype, I64);
  expect_values(elems(c.a, out), {7, -16, 27, 28, 40, 54}, I64, "int64 * int32");
  expect_refused(c.f.mul(a, make(c.sd, {1, 2}, I32, {2}, {1}), &out), "aoti_torch_cpu_mul_Tensor", "other");
  expect_refused(c.f.mul(make(c.sd, {1, 2}, U16, {1}, {1}), a, &out), "aoti_torch_cpu_mul_Tensor", "self");
}

TEST(ShimReference, SliceAndViewDtypeAreViews) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_TRUE(c.f.missing.empty()) << c.f.missing;
  const std::vector<cd> xs = values_for(C64, 18, 4);
  AtenTensorHandle x = make(c.sd, xs, C64, {2, 9}, {9, 1}), s = nullptr, v = nullptr;
  int64_t start = 1, end = -2;
  ASSERT_EQ(c.f.slice(x, 1, &start, &end, 3, &s), 0);  // bins 1, 4
  c.sd.keep(s);
  const TensorDesc d = describe(c.a, s);
  EXPECT_EQ(d.sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(d.strides, (std::vector<int64_t>{9, 3}));
  EXPECT_EQ(d.storage_offset, 1);
  expect_values(elems(c.a, s), {xs[1], xs[4], xs[10], xs[13]}, C64, "slice", true);
  // The slice's last stride is 3: no float view of it.
  expect_refused(c.f.view_dtype(s, F32, &v), "aoti_torch_cpu_view_dtype", "self");
  ASSERT_EQ(c.f.view_dtype(x, F32, &v), 0);
  c.sd.keep(v);
  const TensorDesc dv = describe(c.a, v);
  EXPECT_EQ(dv.sizes, (std::vector<int64_t>{2, 18}));
  EXPECT_EQ(dv.strides, (std::vector<int64_t>{18, 1}));
  EXPECT_EQ(dv.dtype, F32);
  const std::vector<cd> flat = elems(c.a, v);
  for (int64_t i = 0; i < 18; ++i) {
    EXPECT_EQ(flat[2 * i].real(), static_cast<float>(xs[i].real()));
    EXPECT_EQ(flat[2 * i + 1].real(), static_cast<float>(xs[i].imag()));
  }
  int64_t two = 2;
  expect_refused(c.f.slice(x, 1, &two, &two, 0, &s), "aoti_torch_cpu_slice_Tensor", "step");
  expect_refused(c.f.slice(x, 5, &two, &two, 1, &s), "aoti_torch_cpu_slice_Tensor", "dim");
  expect_refused(c.f.view_dtype(make(c.sd, values_for(F32, 9, 1), F32, {9}, {1}), C64, &v), "aoti_torch_cpu_view_dtype",
                 "self");
}

// Naive: NaN (the first) if any, else the element of rank (n - 1) / 2 in a
// stable sort (ties by index).
std::pair<double, int64_t> naive_median(const std::vector<double>& line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (std::isnan(line[i])) return {line[i], static_cast<int64_t>(i)};
  }
  std::vector<int64_t> order(line.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return line[a] < line[b]; });
  const int64_t k = order[(line.size() - 1) / 2];
  return {line[k], k};
}

TEST(ShimReference, MedianDimThroughTheExecutorMatchesNaiveLoops) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_TRUE(c.ex.ok());
  const double nan = std::nan("");
  for (int32_t d : {F32, F64, BF16, I64, I8}) {
    for (int64_t n : {1, 4, 7, 10}) {
      // [3, n] transposed storage: line i is column i of an [n, 3] block.
      std::vector<cd> st = values_for(d, 3 * n, 31 + static_cast<uint32_t>(n));
      if (d == F32 || d == F64) {
        st[2] = st[5 % st.size()];  // ties
        if (n > 1) st[3 * (n - 1)] = nan;
      }
      for (bool keep : {false, true}) {
        AtenTensorHandle x = make(c.sd, st, d, {3, n}, {1, 3}), v = nullptr, i = nullptr;
        ASSERT_EQ(shim_median(c.ex, c.sd, x, -1, keep, &v, &i), 0) << aotrun_shim_test::shim_only().last_error();
        const std::vector<cd> got_v = elems(c.a, v), got_i = elems(c.a, i);
        EXPECT_EQ(describe(c.a, v).sizes, keep ? (std::vector<int64_t>{3, 1}) : (std::vector<int64_t>{3}));
        EXPECT_EQ(describe(c.a, i).dtype, I64);
        const std::vector<cd> in = elems(c.a, x);
        for (int64_t r = 0; r < 3; ++r) {
          std::vector<double> line;
          for (int64_t k = 0; k < n; ++k) line.push_back(in[r * n + k].real());
          const auto [mv, mi] = naive_median(line);
          EXPECT_TRUE(same_number(got_v[r].real(), mv)) << "dtype " << d << " n " << n << " row " << r;
          EXPECT_EQ(got_i[r].real(), static_cast<double>(mi)) << "dtype " << d << " n " << n << " row " << r;
        }
      }
    }
  }
  AtenTensorHandle v = nullptr, i = nullptr;
  expect_refused(shim_median(c.ex, c.sd, make(c.sd, {1, 0}, B, {2}, {1}), 0, false, &v, &i), "aten::median.dim",
                 "self");
  expect_refused(shim_median(c.ex, c.sd, make(c.sd, {1, 2}, C64, {2}, {1}), 0, false, &v, &i), "aten::median.dim",
                 "self");
  expect_refused(shim_median(c.ex, c.sd, make(c.sd, {1}, F32, {1, 0}, {1, 1}), 1, false, &v, &i), "aten::median.dim",
                 "self");
  expect_refused(shim_median(c.ex, c.sd, make(c.sd, {1, 2}, F32, {2}, {1}), 1, false, &v, &i), "aten::median.dim",
                 "dim");
}

// aten::constant_pad_nd as irfft(X[..., :k], n) makes it: pad... and an int
// value in the ints; also negative pads (crops), a float value from the node,
// and a real dtype.
TEST(ShimReference, ConstantPadNdThroughTheExecutorMatchesNaiveLoops) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_TRUE(c.ex.ok());
  struct Case {
    int32_t dtype;
    std::vector<int64_t> sizes, strides, pad;
    std::string value;  // "int:<v>" or "float:<v>"
  };
  const std::vector<Case> cases = {{C64, {2, 5}, {5, 1}, {0, 4, 0, 0}, "int:0"},
                                   {C64, {2, 5}, {1, 2}, {1, 2}, "int:3"},
                                   {C128, {3, 4}, {4, 1}, {-1, 2, 1, -2}, "float:0.5"},
                                   {F32, {2, 3, 4}, {12, 4, 1}, {2, -3, 0, 1}, "float:-1.25"},
                                   {I64, {4}, {1}, {-4, 0}, "int:7"}};
  for (const Case& k : cases) {
    const bool is_int = k.value.rfind("int:", 0) == 0;
    const std::string v = k.value.substr(is_int ? 4 : 6);
    std::string pads;
    for (int64_t p : k.pad) pads += (pads.empty() ? "" : ", ") + std::to_string(p);
    const std::string nodes = R"({"nodes": [{"name": "buf2", "node": {"target": "aten::constant_pad_nd", "inputs": [)"
                              R"({"name": "self", "arg": {"as_tensor": {"name": "buf1"}}, "kind": 1}, )"
                              R"({"name": "pad", "arg": {"as_ints": [)" +
                              pads + R"(]}, "kind": 1}, {"name": "value", "arg": {")" +
                              (is_int ? "as_int" : "as_float") + R"(": )" + v +
                              R"(}, "kind": 1}], "outputs": [{"as_tensor": {"name": "buf2"}}]}}]})";
    void* h = nullptr;
    ASSERT_EQ(c.ex.create(nodes.c_str(), nodes.size(), &h), 0) << aotrun_shim_test::shim_only().last_error();
    AtenTensorHandle x = rand_view(c.sd, k.dtype, k.sizes, k.strides, 41), out = nullptr;
    c.a.aoti_torch_new_uninitialized_tensor(&out);
    c.sd.keep(out);
    std::vector<int64_t> ints = k.pad;
    if (is_int) ints.push_back(std::stoll(v));
    AtenTensorHandle t[2] = {x, out};
    EXPECT_EQ(c.ex.call(h, 0, static_cast<int>(ints.size()), ints.data(), 2, t), 0)
        << aotrun_shim_test::shim_only().last_error();
    c.ex.del(h);
    // Naive: out[i] = x[i - before] where inside, else the value.
    const int64_t nd = static_cast<int64_t>(k.sizes.size());
    std::vector<int64_t> before(nd, 0), osz = k.sizes;
    for (size_t p = 0; p < k.pad.size() / 2; ++p) {
      const int64_t d = nd - 1 - static_cast<int64_t>(p);
      before[d] = k.pad[2 * p];
      osz[d] += k.pad[2 * p] + k.pad[2 * p + 1];
    }
    EXPECT_EQ(describe(c.a, out).sizes, osz) << k.value;
    EXPECT_EQ(describe(c.a, out).strides, row_major(osz)) << k.value;
    const std::vector<cd> in = elems(c.a, x);
    const std::vector<int64_t> ist = row_major(k.sizes), ost = row_major(osz);
    int64_t on = 1;
    for (int64_t s : osz) on *= s;
    std::vector<cd> want(static_cast<size_t>(on), cd(std::stod(v)));
    for (int64_t o = 0; o < on; ++o) {
      int64_t src = 0;
      bool inside = true;
      for (int64_t d = 0; d < nd; ++d) {
        const int64_t j = (o / ost[d]) % osz[d] - before[d];
        inside = inside && j >= 0 && j < k.sizes[d];
        src += j * ist[d];
      }
      if (inside) want[o] = in[src];
    }
    expect_values(elems(c.a, out), want, k.dtype, "constant_pad_nd " + k.value, true);
  }
  // Refused: an odd pad length, a negative result size.
  for (const auto& [len, ints] :
       {std::make_pair(3, std::vector<int64_t>{0, 1, 0, 0}), std::make_pair(2, std::vector<int64_t>{-2, -2, 0})}) {
    std::string zeros;
    for (int i = 0; i < len; ++i) zeros += i ? ", 0" : "0";
    const std::string nodes = R"({"nodes": [{"name": "b", "node": {"target": "aten::constant_pad_nd", "inputs": [)"
                              R"({"name": "self", "arg": {"as_tensor": {"name": "a"}}, "kind": 1}, )"
                              R"({"name": "pad", "arg": {"as_ints": [)" +
                              zeros +
                              R"(]}, "kind": 1}, {"name": "value", "arg": {"as_int": 0}, "kind": 1}], )"
                              R"("outputs": [{"as_tensor": {"name": "b"}}]}}]})";
    void* h = nullptr;
    ASSERT_EQ(c.ex.create(nodes.c_str(), nodes.size(), &h), 0);
    AtenTensorHandle x = rand_view(c.sd, F32, {2, 3}, {3, 1}, 1), out = nullptr;
    c.a.aoti_torch_new_uninitialized_tensor(&out);
    c.sd.keep(out);
    AtenTensorHandle t[2] = {x, out};
    std::vector<int64_t> args = ints;
    expect_refused(c.ex.call(h, 0, static_cast<int>(args.size()), args.data(), 2, t), "aten::constant_pad_nd", "pad");
    c.ex.del(h);
  }
}

// aoti_torch_cpu_cat's refusals name the function and the argument.
TEST(ShimReference, CatRefusalsNameTheArgument) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_NE(c.f.cat, nullptr);
  AtenTensorHandle a = rand_view(c.sd, C64, {2, 5}, {5, 1}, 1), b = rand_view(c.sd, C64, {3, 4}, {4, 1}, 2);
  AtenTensorHandle z = rand_view(c.sd, C64, {}, {}, 3), out = nullptr;
  AtenTensorHandle ab[2] = {a, b}, az[2] = {a, z};
  expect_refused(c.f.cat(ab, 2, 1, &out), "aoti_torch_cpu_cat", "tensors");
  EXPECT_NE(
      std::string(aotrun_shim_test::shim_only().last_error()).find("Sizes of tensors must match except in dimension 1"),
      std::string::npos);
  expect_refused(c.f.cat(az, 2, 0, &out), "aoti_torch_cpu_cat", "tensors");
  expect_refused(c.f.cat(ab, 2, 2, &out), "aoti_torch_cpu_cat", "dim");
  expect_refused(c.f.cat(ab, 0, 0, &out), "aoti_torch_cpu_cat", "tensors");
}

// aten::full through the executor as a zeroed spectrum makes it (size in the
// ints, an int fill_value, dtype complex64 from the node); also a float
// value from the node, a complex one, bool, inferred dtypes, and refusals.
TEST(ShimReference, FullThroughTheExecutorMatchesNaiveLoops) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_TRUE(c.ex.ok());
  struct Case {
    std::vector<int64_t> size;
    std::string value;  // the fill_value's {"as_<kind>": v}
    int64_t int_value;  // passed when value is an as_int
    std::string dtype;  // the dtype's {"as_...": ...}
    int32_t want_dtype;
    cd want;
  };
  const std::vector<Case> cases = {
      {{2, 4}, R"({"as_int": 0})", 0, R"({"as_scalar_type": 10})", C64, cd(0)},
      {{3, 2}, R"({"as_int": -3})", -3, R"({"as_scalar_type": 11})", C128, cd(-3)},
      {{2, 3}, R"({"as_float": 0.5})", 0, R"({"as_scalar_type": 10})", C64, cd(0.5)},
      {{2}, R"({"as_complex": {"real": 1.5, "imag": -2}})", 0, R"({"as_scalar_type": 11})", C128, cd(1.5, -2)},
      {{2, 2}, R"({"as_complex": {"real": 1.5, "imag": -2}})", 0, R"({"as_none": true})", C64, cd(1.5, -2)},
      {{4}, R"({"as_float": 2.75})", 0, R"({"as_scalar_type": 5})", I64, cd(2)},
      {{4}, R"({"as_float": -2.75})", 0, R"({"as_scalar_type": 7})", F32, cd(-2.75)},
      {{3}, R"({"as_int": 7})", 7, R"({"as_none": true})", I64, cd(7)},
      {{3}, R"({"as_float": 7.5})", 0, R"({"as_none": true})", F32, cd(7.5)},
      {{3}, R"({"as_bool": true})", 0, R"({"as_none": true})", B, cd(1)},
      {{2, 3}, R"({"as_int": 1})", 1, R"({"as_scalar_type": 12})", B, cd(1)},
      {{2, 0}, R"({"as_int": 1})", 1, R"({"as_scalar_type": 13})", BF16, cd(1)},
      {{5}, R"({"as_int": -1})", -1, R"({"as_scalar_type": 6})", F16, cd(-1)},
      {{}, R"({"as_int": 100})", 100, R"({"as_scalar_type": 2})", I8, cd(100)},
      {{2}, R"({"as_int": 200})", 200, R"({"as_scalar_type": 1})", U8, cd(200)},
  };
  auto nodes_for = [](const std::vector<int64_t>& size, const std::string& value, const std::string& dtype,
                      const std::string& device = "cpu") {
    std::string sz;
    for (int64_t x : size) sz += (sz.empty() ? "" : ", ") + std::to_string(x);
    return R"({"nodes": [{"name": "buf2", "node": {"target": "aten::full", "inputs": [)"
           R"({"name": "size", "arg": {"as_ints": [)" +
           sz + R"(]}, "kind": 1}, {"name": "fill_value", "arg": )" + value +
           R"(, "kind": 1}, {"name": "dtype", "arg": )" + dtype +
           R"(, "kind": 2}, {"name": "layout", "arg": {"as_layout": 7}, "kind": 2}, )"
           R"({"name": "device", "arg": {"as_device": {"type": ")" +
           device +
           R"(", "index": null}}, "kind": 2}, {"name": "pin_memory", "arg": {"as_bool": false}, "kind": 2}], )"
           R"("outputs": [{"as_tensor": {"name": "buf2"}}]}}]})";
  };
  for (const Case& k : cases) {
    const std::string nodes = nodes_for(k.size, k.value, k.dtype);
    void* h = nullptr;
    ASSERT_EQ(c.ex.create(nodes.c_str(), nodes.size(), &h), 0) << aotrun_shim_test::shim_only().last_error();
    std::vector<int64_t> ints = k.size;
    if (k.value.find("as_int") != std::string::npos) ints.push_back(k.int_value);
    for (bool preallocated : {false, true}) {
      AtenTensorHandle out = nullptr;
      if (preallocated) {  // the wrapper's buffer of the result's sizes and dtype, written in place
        out = rand_view(c.sd, k.want_dtype, k.size, row_major(k.size), 5);
      } else {
        c.a.aoti_torch_new_uninitialized_tensor(&out);
        c.sd.keep(out);
      }
      EXPECT_EQ(c.ex.call(h, 0, static_cast<int>(ints.size()), ints.data(), 1, &out), 0)
          << k.value << " " << aotrun_shim_test::shim_only().last_error();
      const TensorDesc d = describe(c.a, out);
      EXPECT_EQ(d.sizes, k.size) << k.value;
      EXPECT_EQ(d.strides, row_major(k.size)) << k.value;
      EXPECT_EQ(d.dtype, k.want_dtype) << k.value;
      if (d.dtype != k.want_dtype) continue;
      expect_values(elems(c.a, out), std::vector<cd>(static_cast<size_t>(d.numel), k.want), k.want_dtype,
                    "full " + k.value, true);
    }
    c.ex.del(h);
  }
  // Refused as libtorch 2.15 refuses them: a negative size, an int8 overflow,
  // a complex value into float32, finite values beyond float32's, float16's,
  // bfloat16's and complex64's range.
  struct Bad {
    std::vector<int64_t> size;
    std::string value, dtype;
    std::vector<int64_t> ints;
    const char* arg;
  };
  const std::vector<Bad> bad = {
      {{2, 4}, R"({"as_int": 0})", R"({"as_scalar_type": 10})", {-2, 4, 0}, "size"},
      {{2}, R"({"as_int": 300})", R"({"as_scalar_type": 2})", {2, 300}, "fill_value"},
      {{2}, R"({"as_complex": {"real": 1, "imag": 1}})", R"({"as_scalar_type": 7})", {2}, "fill_value"},
      {{2}, R"({"as_float": 1e39})", R"({"as_scalar_type": 7})", {2}, "fill_value"},
      {{2}, R"({"as_float": -1e39})", R"({"as_scalar_type": 7})", {2}, "fill_value"},
      {{2}, R"({"as_int": 70000})", R"({"as_scalar_type": 6})", {2, 70000}, "fill_value"},
      {{2}, R"({"as_float": 65504.5})", R"({"as_scalar_type": 6})", {2}, "fill_value"},
      {{2}, R"({"as_float": 3.4e38})", R"({"as_scalar_type": 13})", {2}, "fill_value"},
      {{2}, R"({"as_complex": {"real": 1, "imag": 1e39}})", R"({"as_scalar_type": 10})", {2}, "fill_value"},
  };
  for (const Bad& k : bad) {
    const std::string nodes = nodes_for(k.size, k.value, k.dtype);
    void* h = nullptr;
    ASSERT_EQ(c.ex.create(nodes.c_str(), nodes.size(), &h), 0) << aotrun_shim_test::shim_only().last_error();
    AtenTensorHandle out = nullptr;
    c.a.aoti_torch_new_uninitialized_tensor(&out);
    c.sd.keep(out);
    std::vector<int64_t> ints = k.ints;
    expect_refused(c.ex.call(h, 0, static_cast<int>(ints.size()), ints.data(), 1, &out), "aten::full", k.arg);
    c.ex.del(h);
  }
  // A device other than the CPU: refused naming the argument.
  const std::string meta = nodes_for({2}, R"({"as_int": 0})", R"({"as_scalar_type": 10})", "meta");
  void* h = nullptr;
  ASSERT_EQ(c.ex.create(meta.c_str(), meta.size(), &h), 0);
  AtenTensorHandle out = nullptr;
  c.a.aoti_torch_new_uninitialized_tensor(&out);
  c.sd.keep(out);
  int64_t ints[2] = {2, 0};
  expect_refused(c.ex.call(h, 0, 2, ints, 1, &out), "aten::full", "device");
  c.ex.del(h);
}

// aten::slice_scatter through the executor as X[..., k:] = 0 makes it (dim,
// start, end = INT64_MAX, step in the ints), and None bounds (as_none: no
// int), negative and clamped bounds, steps, strided self, a src of another
// dtype, and refusals; against a naive copy-then-assign loop.
TEST(ShimReference, SliceScatterThroughTheExecutorMatchesNaiveLoops) {
  NEED_SHIM();
  ShimOnlyCase c;
  ASSERT_TRUE(c.ex.ok());
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    int32_t dtype;
    std::vector<int64_t> sizes, strides;
    int64_t dim;
    bool has_start, has_end;
    int64_t start, end, step;
    int32_t src_dtype;
  };
  const std::vector<Case> cases = {
      {C64, {2, 9}, {9, 1}, 1, true, true, 5, kMax, 1, C64},
      {C64, {2, 9}, {9, 1}, -1, true, false, -4, 0, 1, C64},
      {C128, {3, 9}, {1, 3}, 1, false, true, 0, 4, 2, C128},
      {C64, {4, 3}, {3, 1}, 0, true, true, 1, 3, 1, F32},
      {F32, {2, 3, 5}, {1, 10, 2}, 2, true, true, -100, 100, 3, F32},
      {F64, {6}, {2}, 0, false, false, 0, 0, 4, I64},
      {I64, {3, 4}, {4, 1}, 1, true, true, 3, 1, 1, I64},
      {B, {5, 2}, {2, 1}, 0, true, true, 1, 4, 2, B},
      {BF16, {4, 4}, {4, 1}, 1, true, true, 2, kMax, 1, BF16},
      {C64, {3, 4}, {0, 1}, 0, true, true, 1, 2, 1, C64},  // expanded self: cloned densely
  };
  for (const Case& k : cases) {
    const auto arg = [](const char* name, bool has, int64_t) {
      return std::string(R"({"name": ")") + name + R"(", "arg": )" +
             (has ? std::string(R"({"as_int": 0})") : std::string(R"({"as_none": true})")) + R"(, "kind": 1})";
    };
    const std::string nodes = R"({"nodes": [{"name": "buf2", "node": {"target": "aten::slice_scatter", "inputs": [)"
                              R"({"name": "self", "arg": {"as_tensor": {"name": "buf0"}}, "kind": 1}, )"
                              R"({"name": "src", "arg": {"as_tensor": {"name": "buf1"}}, "kind": 1}, )" +
                              arg("dim", true, 0) + ", " + arg("start", k.has_start, 0) + ", " +
                              arg("end", k.has_end, 0) + ", " + arg("step", true, 0) +
                              R"(], "outputs": [{"as_tensor": {"name": "buf2"}}]}}]})";
    void* h = nullptr;
    ASSERT_EQ(c.ex.create(nodes.c_str(), nodes.size(), &h), 0) << aotrun_shim_test::shim_only().last_error();
    // Naive slice bounds.
    const int64_t nd = static_cast<int64_t>(k.sizes.size()), d = k.dim < 0 ? k.dim + nd : k.dim;
    const int64_t size = k.sizes[d];
    int64_t s = k.has_start ? k.start : 0, e = k.has_end ? k.end : kMax;
    if (s < 0) s += size;
    if (e < 0) e += size;
    s = std::min(std::max<int64_t>(s, 0), size);
    e = std::min(std::max(e, s), size);
    std::vector<int64_t> src_sizes = k.sizes;
    src_sizes[d] = (e - s + k.step - 1) / k.step;
    AtenTensorHandle self = rand_view(c.sd, k.dtype, k.sizes, k.strides, 61);
    AtenTensorHandle src = rand_view(c.sd, k.src_dtype, src_sizes, row_major(src_sizes), 67), out = nullptr;
    c.a.aoti_torch_new_uninitialized_tensor(&out);
    c.sd.keep(out);
    std::vector<int64_t> ints = {k.dim};
    if (k.has_start) ints.push_back(k.start);
    if (k.has_end) ints.push_back(k.end);
    ints.push_back(k.step);
    AtenTensorHandle t[3] = {self, src, out};
    const std::string what = "slice_scatter " + std::to_string(k.dtype) + str(k.sizes) + str(k.strides) + " dim " +
                             std::to_string(k.dim) + " [" + std::to_string(s) + ":" + std::to_string(e) + ":" +
                             std::to_string(k.step) + "]";
    ASSERT_EQ(c.ex.call(h, 0, static_cast<int>(ints.size()), ints.data(), 3, t), 0)
        << what << " " << aotrun_shim_test::shim_only().last_error();
    c.ex.del(h);
    const TensorDesc od = describe(c.a, out);
    EXPECT_EQ(od.sizes, k.sizes) << what;
    EXPECT_EQ(od.dtype, k.dtype) << what;
    // self's strides kept when self has no internal overlap (clone_preserve_strides).
    EXPECT_EQ(od.strides, k.strides[0] != 0 ? k.strides : row_major(k.sizes)) << what;
    std::vector<cd> want = elems(c.a, self);
    const std::vector<cd> sv = elems(c.a, src);
    const std::vector<int64_t> rs = row_major(k.sizes), ss = row_major(src_sizes);
    for (int64_t i = 0; i < static_cast<int64_t>(sv.size()); ++i) {
      int64_t pos = 0;
      for (int64_t q = 0; q < nd; ++q) {
        int64_t j = (i / ss[q]) % src_sizes[q];
        if (q == d) j = s + j * k.step;
        pos += j * rs[q];
      }
      cd v = sv[i];
      if (k.dtype == I64 || k.dtype == B) v = k.dtype == B ? cd(v != cd(0) ? 1 : 0) : cd(std::trunc(v.real()));
      if (!cplx(k.dtype)) v = v.real();
      want[pos] = v;
    }
    expect_values(elems(c.a, out), want, k.dtype, what, k.dtype != F32 && k.dtype != F64 && k.dtype != BF16);
  }
  // Refused: src not of the slice's size, a 0-step, dim out of range.
  for (const auto& [ints, src_sizes, arg] :
       {std::make_tuple(std::vector<int64_t>{1, 5, kMax, 1}, std::vector<int64_t>{2, 3}, "src"),
        std::make_tuple(std::vector<int64_t>{1, 5, kMax, 0}, std::vector<int64_t>{2, 4}, "step"),
        std::make_tuple(std::vector<int64_t>{2, 5, kMax, 1}, std::vector<int64_t>{2, 4}, "dim")}) {
    const std::string nodes = R"({"nodes": [{"name": "b", "node": {"target": "aten::slice_scatter", "inputs": [)"
                              R"({"name": "self", "arg": {"as_tensor": {"name": "a"}}, "kind": 1}, )"
                              R"({"name": "src", "arg": {"as_tensor": {"name": "s"}}, "kind": 1}, )"
                              R"({"name": "dim", "arg": {"as_int": 1}, "kind": 1}, )"
                              R"({"name": "start", "arg": {"as_int": 5}, "kind": 1}, )"
                              R"({"name": "end", "arg": {"as_int": 9}, "kind": 1}, )"
                              R"({"name": "step", "arg": {"as_int": 1}, "kind": 1}], )"
                              R"("outputs": [{"as_tensor": {"name": "b"}}]}}]})";
    void* h = nullptr;
    ASSERT_EQ(c.ex.create(nodes.c_str(), nodes.size(), &h), 0);
    AtenTensorHandle self = rand_view(c.sd, C64, {2, 9}, {9, 1}, 1), out = nullptr;
    AtenTensorHandle src = rand_view(c.sd, C64, src_sizes, row_major(src_sizes), 2);
    c.a.aoti_torch_new_uninitialized_tensor(&out);
    c.sd.keep(out);
    AtenTensorHandle t[3] = {self, src, out};
    std::vector<int64_t> args = ints;
    expect_refused(c.ex.call(h, 0, 4, args.data(), 3, t), "aten::slice_scatter", arg);
    c.ex.del(h);
  }
}

}  // namespace
