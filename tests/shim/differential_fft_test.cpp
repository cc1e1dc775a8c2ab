// The differential suite for torch.fft's fallback ops (since aotrun-shim
// 1.4): aoti_torch_cpu__fft_r2c, aoti_torch_cpu__fft_c2c (and the older
// aoti_torch__fft_c2c), aoti_torch_cpu_abs, aoti_torch_cpu_view_as_real (and
// aoti_torch_view_as_real) and aoti_torch_cpu_view_as_complex. Each case
// makes the same call on real libtorch (AOTRUN_LIBTORCH) and on the shim and
// compares return codes, sizes, strides, dtypes and values. Values: float32
// results within atol 1e-5 * max(1, peak) and rtol 1.3e-6 (assert_close's
// float32 tolerances, the absolute one scaled by the largest magnitude of
// the expected result, since an FFT bin is a sum of n terms whose rounding
// grows with the peak); float64 within 1e-7 * max(1, peak) and 1e-7. Skips,
// saying why, without libtorch; the ShimReference tests check the shim alone
// against naive O(n^2) DFT loops in double and need no libtorch; they also
// cover negative dims, which the shim wraps and libtorch's kernels do not
// take (torch.fft's frontends wrap them first).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
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
using aotrun_shim_test::providers;
using aotrun_shim_test::Side;
using cd = std::complex<double>;

// The FFT functions, resolved from a loaded library (not in ShimApi).
struct FftApi {
  int32_t (*r2c)(AtenTensorHandle, const int64_t*, int64_t, int64_t, int32_t, AtenTensorHandle*) = nullptr;
  int32_t (*c2c)(AtenTensorHandle, const int64_t*, int64_t, int64_t, int32_t, AtenTensorHandle*) = nullptr;
  int32_t (*c2c_legacy)(AtenTensorHandle, const int64_t*, int64_t, int64_t, int32_t, AtenTensorHandle*) = nullptr;
  int32_t (*abs)(AtenTensorHandle, AtenTensorHandle*) = nullptr;
  int32_t (*view_as_real)(AtenTensorHandle, AtenTensorHandle*) = nullptr;
  int32_t (*view_as_real_legacy)(AtenTensorHandle, AtenTensorHandle*) = nullptr;
  int32_t (*view_as_complex)(AtenTensorHandle, AtenTensorHandle*) = nullptr;
  std::string missing;
  void resolve(void* h) {
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(h ? ::dlsym(h, name) : nullptr);
      if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    get(r2c, "aoti_torch_cpu__fft_r2c");
    get(c2c, "aoti_torch_cpu__fft_c2c");
    get(c2c_legacy, "aoti_torch__fft_c2c");
    get(abs, "aoti_torch_cpu_abs");
    get(view_as_real, "aoti_torch_cpu_view_as_real");
    get(view_as_real_legacy, "aoti_torch_view_as_real");
    get(view_as_complex, "aoti_torch_cpu_view_as_complex");
  }
};

// libtorch's (loaded already by providers()) and the shim's.
struct FftProviders {
  FftApi torch, shim;
  std::string problem;
};
const FftProviders& fft_providers() {
  static FftProviders* p = [] {
    auto* fp = new FftProviders;
    if (!providers().skip.empty()) {
      fp->problem = providers().skip;
      return fp;
    }
    const std::string path = std::string(std::getenv("AOTRUN_LIBTORCH")) + "/libtorch_cpu.so";
    fp->torch.resolve(::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD));
    fp->shim.resolve(::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD));
    if (!fp->torch.missing.empty()) fp->problem = "libtorch lacks " + fp->torch.missing;
    if (!fp->shim.missing.empty()) fp->problem += " the shim lacks " + fp->shim.missing;
    return fp;
  }();
  return *p;
}

#define NEED_FFT()                                                           \
  do {                                                                       \
    if (!providers().skip.empty()) GTEST_SKIP() << providers().skip;         \
    ASSERT_TRUE(fft_providers().problem.empty()) << fft_providers().problem; \
  } while (0)

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

// A blob over `storage`, which is not always the elements' values: complex
// dtypes take it as interleaved re, im pairs (so it holds twice the
// elements), int32 and int64 as storage * 100 and * 1000 rounded, float16
// ignores it and holds ones.
AtenTensorHandle make(Side& sd, const std::vector<double>& storage, Dt d, std::vector<int64_t> sizes,
                      std::vector<int64_t> strides, int64_t offset = 0) {
  std::vector<double> v = storage;
  Dt as = d;
  switch (d) {
    case Dt::C64: as = Dt::F32; break;
    case Dt::C128: as = Dt::F64; break;
    case Dt::F16: v.assign(v.size(), 1.0); break;
    case Dt::I32:
    case Dt::I64:
      for (double& x : v) x = static_cast<double>(std::lround(x * (d == Dt::I32 ? 100 : 1000)));
      break;
    default: break;
  }
  return sd.blob(encode(v, as), std::move(sizes), std::move(strides), code(sd.a, d), offset);
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

// A tensor of random values viewed with these sizes/strides/offset.
AtenTensorHandle rand_view(Side& sd, Dt d, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                           uint32_t seed, int64_t offset = 0) {
  const int64_t n = span(sizes, strides, offset) * (is_complex(d) ? 2 : 1);
  return make(sd, noise(n, seed), d, sizes, strides, offset);
}

// Logical elements in row-major order as complex doubles (real dtypes: imag 0).
std::vector<cd> cvalues(const ShimApi& a, AtenTensorHandle h) {
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
    if (d.dtype == a.aoti_torch_dtype_complex64()) {
      const float* p = static_cast<const float*>(data) + 2 * off;
      out[i] = cd(p[0], p[1]);
    } else if (d.dtype == a.aoti_torch_dtype_complex128()) {
      const double* p = static_cast<const double*>(data) + 2 * off;
      out[i] = cd(p[0], p[1]);
    } else if (d.dtype == a.aoti_torch_dtype_float32()) {
      out[i] = static_cast<const float*>(data)[off];
    } else if (d.dtype == a.aoti_torch_dtype_float64()) {
      out[i] = static_cast<const double*>(data)[off];
    } else if (d.dtype == a.aoti_torch_dtype_int32()) {
      out[i] = static_cast<double>(static_cast<const int32_t*>(data)[off]);
    } else if (d.dtype == a.aoti_torch_dtype_int64()) {
      out[i] = static_cast<double>(static_cast<const int64_t*>(data)[off]);
    } else {
      ADD_FAILURE() << "cvalues: dtype " << d.dtype;
      return {};
    }
  }
  return out;
}

// |got - want| <= atol * max(1, peak) + rtol * |want| elementwise.
void expect_close(const std::vector<cd>& got, const std::vector<cd>& want, bool dbl, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double peak = 1;
  for (const cd& w : want) peak = std::max(peak, std::abs(w));
  const double atol = (dbl ? 1e-7 : 1e-5) * peak, rtol = dbl ? 1e-7 : 1.3e-6;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    if (!(err <= atol + rtol * std::abs(want[i])) && ++bad <= 3) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i] << " (err " << err
                    << ", atol " << atol << ")";
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

// One call on both providers, compared. make_input builds the input on a
// Side; call runs the op. Returns the two results' handles (kept).
struct Pair {
  Side t{providers().torch, "libtorch"}, s{providers().shim, "shim"};
};

template <typename Make, typename Call>
void compare(const std::string& what, Make&& make_input, Call&& call, bool dbl) {
  Pair p;
  AtenTensorHandle it = make_input(p.t), is = make_input(p.s);
  AtenTensorHandle ot = nullptr, os = nullptr;
  const int rt = call(fft_providers().torch, it, &ot);
  const int rs = call(fft_providers().shim, is, &os);
  p.t.keep(ot);
  p.s.keep(os);
  ASSERT_EQ(rs, rt) << what << ": return codes differ";
  if (rt != 0) return;
  const TensorDesc dt = describe(p.t.a, ot), ds = describe(p.s.a, os);
  EXPECT_EQ(ds.sizes, dt.sizes) << what;
  EXPECT_EQ(ds.strides, dt.strides) << what;
  EXPECT_EQ(ds.dtype, dt.dtype) << what;
  EXPECT_EQ(ds.storage_offset, dt.storage_offset) << what;
  if (ds.sizes != dt.sizes || ds.dtype != dt.dtype) return;
  expect_close(cvalues(p.s.a, os), cvalues(p.t.a, ot), dbl, what);
}

std::string str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

void r2c_case(Dt dt, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dims, int64_t norm, bool onesided, int64_t offset = 0) {
  const std::string what = "r2c sizes " + str(sizes) + " strides " + str(strides) + " dims " + str(dims) + " norm " +
                           std::to_string(norm) + " onesided " + std::to_string(onesided);
  compare(
      what, [&](Side& sd) { return rand_view(sd, dt, sizes, strides, 7, offset); },
      [&](const FftApi& f, AtenTensorHandle x, AtenTensorHandle* o) {
        return f.r2c(x, dims.data(), static_cast<int64_t>(dims.size()), norm, onesided, o);
      },
      dt == Dt::F64);
}

void c2c_case(Dt dt, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dims, int64_t norm, bool forward, bool legacy = false) {
  const std::string what = "c2c sizes " + str(sizes) + " strides " + str(strides) + " dims " + str(dims) + " norm " +
                           std::to_string(norm) + " forward " + std::to_string(forward);
  compare(
      what, [&](Side& sd) { return rand_view(sd, dt, sizes, strides, 11); },
      [&](const FftApi& f, AtenTensorHandle x, AtenTensorHandle* o) {
        return (legacy ? f.c2c_legacy : f.c2c)(x, dims.data(), static_cast<int64_t>(dims.size()), norm, forward, o);
      },
      dt == Dt::C128);
}

const int64_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 30, 97, 100, 128, 360};

TEST(ShimDifferentialFft, R2cOneDimEverySizeNormAndSide) {
  NEED_FFT();
  for (int64_t n : kSizes) {
    for (int64_t norm = 0; norm < 3; ++norm) {
      for (bool onesided : {true, false}) r2c_case(Dt::F32, {3, n}, {n, 1}, {1}, norm, onesided);
    }
    r2c_case(Dt::F32, {n, 2}, {2, 1}, {0}, 1, true);  // along a strided dim
    r2c_case(Dt::F32, {n}, {1}, {0}, 0, true);        // 1-d
  }
}

TEST(ShimDifferentialFft, R2cMultiDimAndLayouts) {
  NEED_FFT();
  const std::vector<std::vector<int64_t>> dimsets = {{0, 2}, {2, 0}, {1, 2}, {0, 1, 2}, {2, 1, 0}, {1}, {0}};
  for (const auto& dims : dimsets) {
    for (int64_t norm = 0; norm < 3; ++norm) {
      for (bool onesided : {true, false}) {
        r2c_case(Dt::F32, {4, 6, 5}, {30, 5, 1}, dims, norm, onesided);
        r2c_case(Dt::F32, {5, 3, 4}, {1, 20, 5}, dims, norm, onesided);      // permuted
        r2c_case(Dt::F32, {4, 3, 7}, {50, 14, 2}, dims, norm, onesided, 3);  // gapped, offset
        r2c_case(Dt::F32, {2, 1, 9}, {9, 9, 1}, dims, norm, onesided);       // a size-1 dim
      }
    }
  }
  // Broadcast (stride 0) and size-1 batch dims.
  r2c_case(Dt::F32, {3, 8}, {0, 1}, {1}, 0, true);
  r2c_case(Dt::F32, {4, 1, 5, 1}, {5, 5, 1, 1}, {2}, 0, true);
  r2c_case(Dt::F32, {2, 3, 4, 5}, {60, 1, 15, 3}, {1, 3}, 2, true);
}

TEST(ShimDifferentialFft, C2cSizesNormsDirectionsAndLayouts) {
  NEED_FFT();
  for (int64_t n : kSizes) {
    for (int64_t norm = 0; norm < 3; ++norm) {
      for (bool fwd : {true, false}) c2c_case(Dt::C64, {2, n}, {n, 1}, {1}, norm, fwd);
    }
  }
  const std::vector<std::vector<int64_t>> dimsets = {{0, 2}, {2, 0}, {1, 2}, {0, 1, 2}, {1}, {}};
  for (const auto& dims : dimsets) {
    for (int64_t norm = 0; norm < 3; ++norm) {
      for (bool fwd : {true, false}) {
        c2c_case(Dt::C64, {4, 6, 5}, {30, 5, 1}, dims, norm, fwd);
        c2c_case(Dt::C64, {5, 3, 4}, {1, 20, 5}, dims, norm, fwd);
        c2c_case(Dt::C64, {3, 4, 7}, {60, 14, 2}, dims, norm, fwd);
      }
    }
  }
  // The older entry point agrees too.
  c2c_case(Dt::C64, {3, 13}, {13, 1}, {1}, 1, true, /*legacy=*/true);
  c2c_case(Dt::C64, {5, 3, 4}, {1, 20, 5}, {0, 2}, 2, false, /*legacy=*/true);
}

TEST(ShimDifferentialFft, Float64OnKissfftsTemplate) {
  NEED_FFT();
  for (int64_t n : {1, 7, 16, 97, 100}) {
    for (int64_t norm = 0; norm < 3; ++norm) {
      r2c_case(Dt::F64, {2, n}, {n, 1}, {1}, norm, true);
      r2c_case(Dt::F64, {2, n}, {n, 1}, {1}, norm, false);
      c2c_case(Dt::C128, {2, n}, {n, 1}, {1}, norm, norm != 1);
    }
  }
  r2c_case(Dt::F64, {5, 3, 4}, {1, 20, 5}, {0, 2}, 1, true);
  c2c_case(Dt::C128, {5, 3, 4}, {1, 20, 5}, {2, 0, 1}, 2, false);
}

TEST(ShimDifferentialFft, EmptyTensors) {
  NEED_FFT();
  r2c_case(Dt::F32, {0, 8}, {8, 1}, {1}, 0, true);
  r2c_case(Dt::F32, {3, 0}, {1, 1}, {0}, 0, false);
  c2c_case(Dt::C64, {3, 0}, {1, 1}, {1}, 0, true);
  c2c_case(Dt::C64, {0, 5}, {5, 1}, {1}, 2, false);
}

TEST(ShimDifferentialFft, BothRefuse) {
  NEED_FFT();
  r2c_case(Dt::F16, {3, 4}, {4, 1}, {1}, 0, true);  // half: MKL refuses it, kissfft is float32/64
  r2c_case(Dt::C64, {3, 4}, {4, 1}, {1}, 0, true);  // r2c of a complex input
  c2c_case(Dt::F32, {3, 4}, {4, 1}, {1}, 0, true);  // c2c of a real input
  r2c_case(Dt::F32, {3, 4}, {4, 1}, {2}, 0, true);  // dim out of range
  r2c_case(Dt::F32, {3, 4}, {4, 1}, {}, 0, true);   // no dim
  r2c_case(Dt::F32, {3, 0}, {1, 1}, {1}, 0, true);  // a transformed dim of size 0
  r2c_case(Dt::F32, {}, {}, {0}, 0, true);          // 0-d
}

TEST(ShimDifferentialFft, AbsOfComplexAndReal) {
  NEED_FFT();
  auto abs_case = [&](Dt dt, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    compare(
        "abs " + str(sizes) + " " + str(strides), [&](Side& sd) { return rand_view(sd, dt, sizes, strides, 3); },
        [&](const FftApi& f, AtenTensorHandle x, AtenTensorHandle* o) { return f.abs(x, o); },
        dt == Dt::C128 || dt == Dt::F64);
  };
  for (Dt dt : {Dt::C64, Dt::C128, Dt::F32, Dt::F64, Dt::I32, Dt::I64}) {
    abs_case(dt, {3, 5}, {5, 1});
    abs_case(dt, {5, 3}, {1, 5});        // transposed
    abs_case(dt, {3, 4}, {10, 2});       // gapped
    abs_case(dt, {2, 1, 3}, {3, 3, 1});  // size-1 dim
    abs_case(dt, {}, {});                // 0-d
    abs_case(dt, {0, 4}, {4, 1});        // empty
  }
}

TEST(ShimDifferentialFft, ViewAsRealAndComplex) {
  NEED_FFT();
  auto view_case = [&](bool to_real, bool legacy, Dt dt, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                       int64_t offset) {
    compare(
        std::string(to_real ? "view_as_real " : "view_as_complex ") + str(sizes) + " " + str(strides) + " +" +
            std::to_string(offset),
        [&](Side& sd) { return rand_view(sd, dt, sizes, strides, 5, offset); },
        [&](const FftApi& f, AtenTensorHandle x, AtenTensorHandle* o) {
          return to_real ? (legacy ? f.view_as_real_legacy : f.view_as_real)(x, o) : f.view_as_complex(x, o);
        },
        dt == Dt::C128 || dt == Dt::F64);
  };
  for (bool legacy : {false, true}) {
    view_case(true, legacy, Dt::C64, {3, 4}, {4, 1}, 0);
    view_case(true, legacy, Dt::C64, {3, 2}, {4, 2}, 1);  // gapped, offset
    view_case(true, legacy, Dt::C128, {4, 3}, {1, 4}, 0);
    view_case(true, legacy, Dt::C64, {}, {}, 0);
    view_case(true, legacy, Dt::F32, {3, 4}, {4, 1}, 0);  // refused: not complex
  }
  view_case(false, false, Dt::F32, {3, 4, 2}, {8, 2, 1}, 0);
  view_case(false, false, Dt::F64, {3, 2, 2}, {8, 4, 1}, 2);
  view_case(false, false, Dt::F32, {2}, {1}, 0);
  view_case(false, false, Dt::F32, {3, 4}, {4, 1}, 0);  // refused: last size 4
  view_case(false, false, Dt::F32, {2, 4}, {1, 2}, 0);  // refused: last stride 2
  view_case(false, false, Dt::F32, {3, 2}, {3, 1}, 0);  // refused: odd stride
  view_case(false, false, Dt::F32, {3, 2}, {2, 1}, 1);  // refused: odd offset
  view_case(false, false, Dt::C64, {3, 2}, {2, 1}, 0);  // refused: complex
  // The view shares the input's memory on both.
  Side s(providers().shim, "shim");
  AtenTensorHandle x = rand_view(s, Dt::C64, {3, 4}, {4, 1}, 1, 0), r = nullptr;
  ASSERT_EQ(fft_providers().shim.view_as_real(x, &r), 0);
  s.keep(r);
  void *px = nullptr, *pr = nullptr;
  s.a.aoti_torch_get_data_ptr(x, &px);
  s.a.aoti_torch_get_data_ptr(r, &pr);
  EXPECT_EQ(px, pr);
}

// aoti_torch_copy_ between real and complex dtypes: what a model's
// fftn(x) of a real x does first (Inductor copies x into a complex64 buffer).
TEST(ShimDifferentialFft, CopyBetweenRealAndComplex) {
  NEED_FFT();
  const std::pair<Dt, Dt> pairs[] = {{Dt::F32, Dt::C64},  {Dt::F64, Dt::C64},  {Dt::I64, Dt::C128},
                                     {Dt::C64, Dt::C128}, {Dt::C128, Dt::C64}, {Dt::C64, Dt::F32}};
  for (const auto& [from, to] : pairs) {
    for (bool transposed_src : {false, true}) {
      Pair p;
      AtenTensorHandle dsts[2];
      for (Side* sd : {&p.t, &p.s}) {
        AtenTensorHandle src =
            transposed_src ? rand_view(*sd, from, {4, 3}, {1, 4}, 9) : rand_view(*sd, from, {4, 3}, {3, 1}, 9);
        AtenTensorHandle dst = sd->empty({4, 3}, {1, 4}, code(sd->a, to));
        EXPECT_EQ(sd->a.aoti_torch_copy_(dst, src, 0), 0) << sd->name;
        dsts[sd == &p.s] = dst;
      }
      expect_close(cvalues(p.s.a, dsts[1]), cvalues(p.t.a, dsts[0]), false,
                   std::string("copy ") + dt_name(from) + " -> " + dt_name(to));
    }
  }
}

// ---- the shim alone, against naive DFT loops -------------------------------

struct ShimCase {
  const ShimApi& a = aotrun_shim_test::shim_only().api;
  Side sd{aotrun_shim_test::shim_only().api, "shim"};
  FftApi f;
  ShimCase() { f.resolve(::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD)); }
};

#define NEED_SHIM()                                                                                      \
  do {                                                                                                   \
    ASSERT_TRUE(aotrun_shim_test::shim_only().problem.empty()) << aotrun_shim_test::shim_only().problem; \
  } while (0)

// A naive multi-dim DFT of x (row-major, sizes) over dims, sign -1 forward.
std::vector<cd> naive_dft(const std::vector<cd>& x, const std::vector<int64_t>& sizes, const std::vector<int64_t>& dims,
                          bool forward) {
  std::vector<cd> cur = x;
  const std::vector<int64_t> st = row_major(sizes);
  const double pi = std::acos(-1.0);
  for (int64_t d : dims) {
    std::vector<cd> next(cur.size());
    const int64_t n = sizes[d];
    for (size_t i = 0; i < cur.size(); ++i) {
      const int64_t k = (static_cast<int64_t>(i) / st[d]) % n;
      const int64_t base = static_cast<int64_t>(i) - k * st[d];
      cd acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double ang = (forward ? -2 : 2) * pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
        acc += cur[base + j * st[d]] * cd(std::cos(ang), std::sin(ang));
      }
      next[i] = acc;
    }
    cur = next;
  }
  return cur;
}

// The row-major elements of a contiguous random tensor as stored (complex: pairs).
std::vector<cd> as_complex(const std::vector<double>& storage, bool cplx) {
  std::vector<cd> v;
  for (size_t i = 0; i < storage.size(); i += cplx ? 2 : 1) v.emplace_back(storage[i], cplx ? storage[i + 1] : 0.0);
  return v;
}

double norm_factor(int64_t norm, double n) { return norm == 1 ? 1 / std::sqrt(n) : norm == 2 ? 1 / n : 1.0; }

TEST(ShimReference, R2cAndC2cMatchNaiveDft) {
  NEED_SHIM();
  ShimCase c;
  ASSERT_TRUE(c.f.missing.empty()) << c.f.missing;
  struct Shape {
    std::vector<int64_t> sizes, dims;
  };
  const std::vector<Shape> shapes = {{{1}, {0}},     {{7}, {0}},          {{2, 13}, {1}},         {{97}, {0}},
                                     {{3, 16}, {1}}, {{4, 6, 5}, {0, 2}}, {{3, 5, 4}, {2, 1, 0}}, {{6, 9}, {-2}},
                                     {{2, 12}, {-1}}};
  for (Dt dt : {Dt::F32, Dt::F64}) {
    const bool dbl = dt == Dt::F64;
    for (const Shape& sh : shapes) {
      int64_t numel = 1;
      for (int64_t s : sh.sizes) numel *= s;
      // Negative dims wrapped for the loops (libtorch's kernels take only
      // wrapped ones: its MKL path fails an internal assert on -1).
      std::vector<int64_t> wd = sh.dims;
      for (int64_t& d : wd) d += d < 0 ? static_cast<int64_t>(sh.sizes.size()) : 0;
      double n = 1;
      for (int64_t d : wd) n *= static_cast<double>(sh.sizes[d]);
      for (int64_t norm = 0; norm < 3; ++norm) {
        const std::string what = "sizes " + str(sh.sizes) + " dims " + str(sh.dims) + " norm " + std::to_string(norm);
        // r2c, both sides.
        const std::vector<double> rx = noise(numel, 17);
        std::vector<cd> full = naive_dft(as_complex(rx, false), sh.sizes, wd, true);
        for (cd& v : full) v *= norm_factor(norm, n);
        for (bool onesided : {false, true}) {
          AtenTensorHandle x = make(c.sd, rx, dt, sh.sizes, row_major(sh.sizes)), out = nullptr;
          ASSERT_EQ(c.f.r2c(x, sh.dims.data(), static_cast<int64_t>(sh.dims.size()), norm, onesided, &out), 0) << what;
          c.sd.keep(out);
          std::vector<cd> want = full;
          if (onesided) {  // keep the first n/2 + 1 bins of the last dim
            const int64_t last = wd.back(), len = sh.sizes[last], keep = len / 2 + 1;
            const std::vector<int64_t> st = row_major(sh.sizes);
            want.clear();
            for (int64_t i = 0; i < numel; ++i) {
              if ((i / st[last]) % len < keep) want.push_back(full[i]);
            }
          }
          expect_close(cvalues(c.a, out), want, dbl, "r2c " + what + " onesided " + std::to_string(onesided));
        }
        // c2c, both directions.
        const std::vector<double> cx = noise(2 * numel, 23);
        for (bool fwd : {true, false}) {
          std::vector<cd> want = naive_dft(as_complex(cx, true), sh.sizes, wd, fwd);
          for (cd& v : want) v *= norm_factor(norm, n);
          AtenTensorHandle x = make(c.sd, cx, dbl ? Dt::C128 : Dt::C64, sh.sizes, row_major(sh.sizes)), out = nullptr;
          ASSERT_EQ(c.f.c2c(x, sh.dims.data(), static_cast<int64_t>(sh.dims.size()), norm, fwd, &out), 0) << what;
          c.sd.keep(out);
          expect_close(cvalues(c.a, out), want, dbl, "c2c " + what + " forward " + std::to_string(fwd));
        }
      }
    }
  }
}

// aten::_fft_c2r (torch.fft.irfft) through the proxy executor, as the
// wrapper calls it: dim..., normalization and last_dim_size in the ints.
TEST(ShimReference, FftC2rThroughTheProxyExecutorMatchesNaiveLoops) {
  NEED_SHIM();
  ShimCase c;
  void* h = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  using Create = int32_t (*)(const char*, size_t, void**);
  using Del = void (*)(void*);
  using Call = int32_t (*)(void*, int, int, int64_t*, int, AtenTensorHandle*);
  auto create = reinterpret_cast<Create>(::dlsym(h, "aotrun_shim_proxy_executor_create"));
  auto del = reinterpret_cast<Del>(::dlsym(h, "aotrun_shim_proxy_executor_delete"));
  auto call = reinterpret_cast<Call>(::dlsym(h, "aoti_torch_proxy_executor_call_function"));
  ASSERT_TRUE(create && del && call);
  struct Case {
    std::vector<int64_t> sizes, strides, dims;  // the complex input
    int64_t norm, n;
    std::vector<int64_t> out_strides = {};  // libtorch's (torch._fft_c2r); none: row-major
  };
  const std::vector<Case> cases = {{{3, 5}, {5, 1}, {1}, 1, 9},
                                   {{3, 5}, {5, 1}, {1}, 0, 8},
                                   {{2, 1}, {1, 1}, {1}, 2, 1},
                                   {{2, 7}, {7, 1}, {1}, 2, 13},
                                   {{4, 3}, {1, 4}, {0, 1}, 2, 5, {5, 1}},
                                   {{5, 2, 3}, {12, 6, 2}, {0, 2}, 1, 4, {4, 20, 1}},
                                   {{3, 49}, {49, 1}, {-1}, 0, 97}};
  for (const Case& k : cases) {
    std::vector<int64_t> wd = k.dims;
    for (int64_t& d : wd) d += d < 0 ? static_cast<int64_t>(k.sizes.size()) : 0;
    std::string dims_json;
    for (int64_t d : k.dims) dims_json += (dims_json.empty() ? "" : ", ") + std::to_string(d);
    const std::string nodes = R"({"nodes": [{"name": "buf3", "node": {"target": "aten::_fft_c2r", "inputs": [)"
                              R"({"name": "self", "arg": {"as_tensor": {"name": "buf2"}}, "kind": 1}, )"
                              R"({"name": "dim", "arg": {"as_ints": [)" +
                              dims_json + R"(]}, "kind": 1}, {"name": "normalization", "arg": {"as_int": )" +
                              std::to_string(k.norm) +
                              R"(}, "kind": 1}, {"name": "last_dim_size", "arg": {"as_int": )" + std::to_string(k.n) +
                              R"(}, "kind": 1}], "outputs": [{"as_tensor": {"name": "buf3"}}]}}]})";
    void* ex = nullptr;
    ASSERT_EQ(create(nodes.c_str(), nodes.size(), &ex), 0) << aotrun_shim_test::shim_only().last_error();
    const int64_t count = span(k.sizes, k.strides);
    const std::vector<double> storage = noise(2 * count, 29);
    AtenTensorHandle x = make(c.sd, storage, Dt::C64, k.sizes, k.strides), out = nullptr;
    ASSERT_EQ(c.a.aoti_torch_new_uninitialized_tensor(&out), 0);
    c.sd.keep(out);
    std::vector<int64_t> ints = k.dims;
    ints.push_back(k.norm);
    ints.push_back(k.n);
    AtenTensorHandle tensors[2] = {x, out};
    const std::string what = "c2r sizes " + str(k.sizes) + " dims " + str(k.dims) + " n " + std::to_string(k.n);
    EXPECT_EQ(call(ex, 0, static_cast<int>(ints.size()), ints.data(), 2, tensors), 0)
        << what << ": " << aotrun_shim_test::shim_only().last_error();
    del(ex);
    // Naive: the input's logical elements, a backward DFT over all dims but
    // the last, then per line the Hermitian line of length n, backward.
    const std::vector<cd> in = cvalues(c.a, x);
    const std::vector<int64_t> rest(wd.begin(), wd.end() - 1);
    const std::vector<cd> mid = naive_dft(in, k.sizes, rest, false);
    const int64_t last = wd.back(), half = k.n / 2 + 1;
    std::vector<int64_t> out_sizes = k.sizes;
    out_sizes[last] = k.n;
    const std::vector<int64_t> ist = row_major(k.sizes), ost = row_major(out_sizes);
    int64_t onum = 1;
    for (int64_t s : out_sizes) onum *= s;
    double scale = norm_factor(k.norm, static_cast<double>(k.n));
    for (int64_t d : rest) scale *= norm_factor(k.norm, static_cast<double>(k.sizes[d]));
    std::vector<cd> want(static_cast<size_t>(onum));
    const double pi = std::acos(-1.0);
    for (int64_t i = 0; i < onum; ++i) {
      const int64_t t = (i / ost[last]) % k.n;
      // The same position with the last index 0, in the input's layout.
      int64_t rem = i, base = 0;
      for (int64_t d = static_cast<int64_t>(out_sizes.size()) - 1; d >= 0; --d) {
        const int64_t idx = rem % out_sizes[d];
        rem /= out_sizes[d];
        if (d != last) base += idx * ist[d];
      }
      double acc = 0;
      for (int64_t j = 0; j < k.n; ++j) {
        const cd v = j < half ? mid[base + j * ist[last]] : std::conj(mid[base + (k.n - j) * ist[last]]);
        const double ang = 2 * pi * static_cast<double>((j * t) % k.n) / static_cast<double>(k.n);
        acc += (v * cd(std::cos(ang), std::sin(ang))).real();
      }
      want[i] = acc * scale;
    }
    EXPECT_EQ(describe(c.a, out).sizes, out_sizes) << what;
    EXPECT_EQ(describe(c.a, out).strides, k.out_strides.empty() ? ost : k.out_strides) << what;
    EXPECT_EQ(describe(c.a, out).dtype, c.a.aoti_torch_dtype_float32()) << what;
    expect_close(cvalues(c.a, out), want, false, what);
  }
}

TEST(ShimReference, AbsAndViews) {
  NEED_SHIM();
  ShimCase c;
  ASSERT_TRUE(c.f.missing.empty()) << c.f.missing;
  const std::vector<double> st = {3, -4, 0, 1, -1, 0, 5, 12};
  AtenTensorHandle x = make(c.sd, st, Dt::C64, {2, 2}, {1, 2}), out = nullptr;  // transposed
  ASSERT_EQ(c.f.abs(x, &out), 0);
  c.sd.keep(out);
  const std::vector<cd> got = cvalues(c.a, out);
  const std::vector<cd> want = {5, 1, 1, 13};
  expect_close(got, want, false, "abs");
  EXPECT_EQ(describe(c.a, out).strides, (std::vector<int64_t>{1, 2}));
  AtenTensorHandle r = nullptr, back = nullptr;
  ASSERT_EQ(c.f.view_as_real(x, &r), 0);
  c.sd.keep(r);
  EXPECT_EQ(describe(c.a, r).sizes, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(describe(c.a, r).strides, (std::vector<int64_t>{2, 4, 1}));
  ASSERT_EQ(c.f.view_as_complex(r, &back), 0);
  c.sd.keep(back);
  EXPECT_EQ(describe(c.a, back).strides, (std::vector<int64_t>{1, 2}));
  expect_close(cvalues(c.a, back), cvalues(c.a, x), false, "view_as_complex(view_as_real(x))");
}

TEST(ShimReference, RefusalsNameOpAndArgument) {
  NEED_SHIM();
  ShimCase c;
  ASSERT_TRUE(c.f.missing.empty()) << c.f.missing;
  const auto* so = &aotrun_shim_test::shim_only();
  AtenTensorHandle x = make(c.sd, noise(12, 1), Dt::F32, {3, 4}, {4, 1}), out = nullptr;
  AtenTensorHandle h = make(c.sd, noise(12, 1), Dt::F16, {3, 4}, {4, 1});
  const int64_t d1[] = {1}, dd[] = {1, -1};
  auto expect_refused = [&](int rc, const char* op, const char* arg) {
    EXPECT_NE(rc, 0) << op << " " << arg;
    const std::string msg = so->last_error();
    EXPECT_NE(msg.find(op), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("argument '") + arg + "'"), std::string::npos) << msg;
  };
  expect_refused(c.f.r2c(x, d1, 1, 3, 1, &out), "aoti_torch_cpu__fft_r2c", "normalization");
  expect_refused(c.f.r2c(x, dd, 2, 0, 1, &out), "aoti_torch_cpu__fft_r2c", "dim");   // repeated
  expect_refused(c.f.r2c(x, d1, 0, 0, 1, &out), "aoti_torch_cpu__fft_r2c", "dim");   // none
  expect_refused(c.f.r2c(h, d1, 1, 0, 1, &out), "aoti_torch_cpu__fft_r2c", "self");  // float16
  expect_refused(c.f.c2c(x, d1, 1, 0, 1, &out), "aoti_torch_cpu__fft_c2c", "self");  // real
  expect_refused(c.f.view_as_real(x, &out), "aoti_torch_cpu_view_as_real", "self");
  expect_refused(c.f.view_as_complex(x, &out), "aoti_torch_cpu_view_as_complex", "self");
}

}  // namespace
