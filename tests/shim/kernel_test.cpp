// The shim's kernels against straightforward reference implementations
// (naive loops in double) over odd shapes, strides, transposes, groups,
// padding, dilation, masks and bfloat16; no libtorch needed. Float32 results
// must be within rtol 1.3e-6 / atol 1e-5 of the reference, bfloat16 ones
// within rtol 1.6e-2 / atol 1e-5 of the reference rounded to bfloat16.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>

#include "aotrun_shim/shim.h"
#include "panels_run.hpp"
#include "shim_api.hpp"
#include "smaps.hpp"
#include "tensor_probe.hpp"

namespace {

using aotrun_shim_test::panels_run;
using aotrun_shim_test::smaps_all_flagged;
using aotrun_shim_test::smaps_kb;
using aotrun_shim_test::thp_mode;
using aotrun_shim_test::thp_off;

const ShimApi& api() {
  static ShimApi* a = [] {
    auto* x = new ShimApi;
    const std::string missing = x->resolve(RTLD_DEFAULT);
    if (!missing.empty()) std::abort();
    return x;
  }();
  return *a;
}

constexpr int32_t kF32 = 6, kF64 = 7, kBF16 = 15;

// A tensor over its own buffer with arbitrary strides, filled with values in [-1, 1).
struct T {
  std::vector<char> buf;
  AtenTensorHandle h = nullptr;
  std::vector<int64_t> sizes, strides;
  int32_t dtype = kF32;
  T() = default;
  T(std::vector<int64_t> sz, std::vector<int64_t> st, int32_t dt, uint32_t seed, int64_t offset = 0)
      : sizes(std::move(sz)), strides(std::move(st)), dtype(dt) {
    int64_t span = 1;
    for (size_t i = 0; i < sizes.size(); ++i) span += std::max<int64_t>(sizes[i] - 1, 0) * strides[i];
    const int64_t n = span + offset;
    const size_t item = dt == kBF16 ? 2 : dt == kF64 ? 8 : 4;
    buf.resize(static_cast<size_t>(n) * item);
    uint32_t s = seed * 747796405u + 1;
    for (int64_t i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      const float v = static_cast<float>((s >> 8) & 0xffff) / 32768.0f - 1.0f;
      if (dt == kF32) std::memcpy(&buf[i * 4], &v, 4);
      if (dt == kF64) {
        const double d = v;
        std::memcpy(&buf[i * 8], &d, 8);
      }
      if (dt == kBF16) {
        const uint16_t b = bf16_bits(v);
        std::memcpy(&buf[i * 2], &b, 2);
      }
    }
    EXPECT_EQ(aoti_torch_create_tensor_from_blob(buf.data(), static_cast<int64_t>(sizes.size()), sizes.data(),
                                                 strides.data(), offset, dt, aoti_torch_device_type_cpu(), 0, &h),
              AOTI_TORCH_SUCCESS);
  }
  ~T() {
    if (h != nullptr) aoti_torch_delete_tensor_object(h);
  }
  T(const T&) = delete;
  // The element at a multi-index, as double. No allocation: the reference
  // loops call this for every multiply-add, and under ASan two mallocs per
  // call made the GEMM tests minutes long.
  double at(std::initializer_list<int64_t> idx) const { return element(idx.begin(), idx.size()); }
  double at(const std::vector<int64_t>& idx) const { return element(idx.data(), idx.size()); }
  double at(const int64_t* idx, size_t n) const { return element(idx, n); }

 private:
  double element(const int64_t* idx, size_t n) const {
    int64_t off = 0;
    for (size_t i = 0; i < n; ++i) off += idx[i] * strides[i];
    void* p = nullptr;
    aoti_torch_get_data_ptr(h, &p);
    const char* c = static_cast<const char*>(p);
    if (dtype == kF32) {
      float f;
      std::memcpy(&f, c + off * 4, 4);
      return f;
    }
    if (dtype == kF64) {
      double d;
      std::memcpy(&d, c + off * 8, 8);
      return d;
    }
    uint16_t b;
    std::memcpy(&b, c + off * 2, 2);
    return bf16_value(b);
  }
};

std::vector<int64_t> rowmajor(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) st[d] = acc, acc *= s[d];
  return st;
}

double round_to(double v, int32_t dt) { return dt == kBF16 ? bf16_value(bf16_bits(static_cast<float>(v))) : v; }

void expect_close(const std::vector<double>& got, const std::vector<double>& want, int32_t dt,
                  const std::string& what) {
  const double rtol = dt == kBF16 ? 1.6e-2 : 1.3e-6, atol = 1e-5;
  std::vector<double> w = want;
  for (double& x : w) x = round_to(x, dt);
  EXPECT_EQ(close(got, w, rtol, atol), "") << what;
}

// --- GEMM ------------------------------------------------------------------

// Strides for a [r, c] matrix: 0 row-major, 1 column-major, 2 row-major with
// gaps (every other column and row), 3 column-major with gaps.
std::vector<int64_t> mat_strides(int64_t r, int64_t c, int kind) {
  switch (kind) {
    case 0: return {c, 1};
    case 1: return {1, r};
    case 2: return {2 * c + 3, 2};
    default: return {2, 2 * r + 1};
  }
}

TEST(ShimKernels, AddmmMatchesNaiveOverShapesStridesAndDtypes) {
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 7, 5}, {17, 1, 9}, {4, 64, 128}, {33, 65, 17}, {2, 0, 3}};
  int count = 0;
  for (int32_t dt : {kF32, kF64, kBF16}) {
    for (const auto& sh : shapes) {
      const int64_t m = sh[0], k = sh[1], n = sh[2];
      for (int ka = 0; ka < 4; ++ka) {
        for (int kb = 0; kb < 4; ++kb) {
          const int ko = (ka + kb) % 4, bias_kind = (ka * 4 + kb) % 3;
          const double beta = (kb % 2) ? 0.5 : 1.0, alpha = (ka % 2) ? -2.0 : 1.0;
          T a({m, k}, mat_strides(m, k, ka), dt, 1), b({k, n}, mat_strides(k, n, kb), dt, 2);
          T bias = bias_kind == 0   ? T({n}, {1}, dt, 3)
                   : bias_kind == 1 ? T({m, n}, mat_strides(m, n, 3 - ka), dt, 3)
                                    : T({1, n}, {n, 1}, dt, 3);
          T out({m, n}, mat_strides(m, n, ko), dt, 4);
          ASSERT_EQ(aoti_torch_cpu_addmm_out(out.h, bias.h, a.h, b.h, beta, alpha), AOTI_TORCH_SUCCESS)
              << aotrun_shim_last_error();
          std::vector<double> got, want;
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double acc = 0;
              for (int64_t p = 0; p < k; ++p) acc += a.at({i, p}) * b.at({p, j});
              const double bv = bias_kind == 1 ? bias.at({i, j}) : bias_kind == 2 ? bias.at({0, j}) : bias.at({j});
              want.push_back(beta * bv + alpha * acc);
              got.push_back(out.at({i, j}));
            }
          }
          expect_close(got, want, dt,
                       "addmm " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + " kinds " +
                           std::to_string(ka) + std::to_string(kb) + std::to_string(ko) + " dtype " +
                           std::to_string(dt));
          ++count;
        }
      }
    }
  }
  EXPECT_EQ(count, 3 * 6 * 16);
}

TEST(ShimKernels, MmAndBmmMatchNaive) {
  for (int32_t dt : {kF32, kBF16}) {
    T a({5, 9}, {1, 5}, dt, 5), b({9, 3}, {3, 1}, dt, 6), out({5, 3}, {3, 1}, dt, 7);
    ASSERT_EQ(aoti_torch_cpu_mm_out(out.h, a.h, b.h), AOTI_TORCH_SUCCESS);
    std::vector<double> got, want;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < 9; ++p) acc += a.at({i, p}) * b.at({p, j});
        want.push_back(acc);
        got.push_back(out.at({i, j}));
      }
    expect_close(got, want, dt, "mm");
    // bmm: batch-innermost operand, transposed second operand, strided out.
    T x({4, 3, 6}, {1, 24, 4}, dt, 8), y({4, 6, 2}, {12, 1, 6}, dt, 9), o({4, 3, 2}, {1, 8, 4}, dt, 10);
    ASSERT_EQ(aoti_torch_cpu_bmm_out(o.h, x.h, y.h), AOTI_TORCH_SUCCESS);
    got.clear();
    want.clear();
    for (int64_t bb = 0; bb < 4; ++bb)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < 6; ++p) acc += x.at({bb, i, p}) * y.at({bb, p, j});
          want.push_back(acc);
          got.push_back(o.at({bb, i, j}));
        }
    expect_close(got, want, dt, "bmm");
  }
}

// A weight declared constant (aotrun_shim_declare_constant, as the runtime
// declares a model's parameters) is packed on its first GEMM and the packed
// copy serves later calls: results match loops for either layout of mat2 (a
// linear's transposed weight, GPT-2's Conv1D weight) and every team size.
// Writing the memory afterwards is outside the contract; here it shows the
// copy is kept (the old values still come out) wherever it is packed,
// while an undeclared weight's new values are always seen.
TEST(ShimKernels, DeclaredConstantWeightIsPackedOnceAndServesEveryCall) {
  const int64_t shapes[][3] = {{16, 256, 768}, {33, 64, 48}, {1, 64, 300}, {5, 9, 3}};
  const bool capped = std::getenv("AOTRUN_SHIM_MAX_ISA") != nullptr;  // oneDNN may then not pack
  const char* packing = std::getenv("AOTRUN_SHIM_PACKED_GEMM");
  const bool packing_off = packing != nullptr && std::strcmp(packing, "0") == 0;
  for (const auto& sh : shapes) {
    const int64_t m = sh[0], k = sh[1], n = sh[2];
    for (int kb : {0, 1}) {
      for (bool declare : {true, false}) {
        T b({k, n}, mat_strides(k, n, kb), kF32, 12);
        if (declare) {
          ASSERT_EQ(aotrun_shim_declare_constant(b.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
        }
        const std::string what = "mm " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
                                 " mat2 kind " + std::to_string(kb) + (declare ? " declared" : " undeclared");
        const auto reference = [&](const T& a) {
          std::vector<double> want;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double acc = 0;
              for (int64_t p = 0; p < k; ++p) acc += a.at({i, p}) * b.at({p, j});
              want.push_back(acc);
            }
          return want;
        };
        const auto product = [&](const T& a, int team) {
          T out({m, n}, {n, 1}, kF32, 13);
          std::vector<double> got;
          const int before = omp_get_max_threads();
          omp_set_num_threads(team);
          EXPECT_EQ(aoti_torch_cpu_mm_out(out.h, a.h, b.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
          omp_set_num_threads(before);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) got.push_back(out.at({i, j}));
          return got;
        };
        T a({m, k}, {k, 1}, kF32, 11);
        const std::vector<double> first = reference(a);
        for (int team : {1, 2}) expect_close(product(a, team), first, kF32, what + " team " + std::to_string(team));
        T a2({m, k}, {k, 1}, kF32, 14);  // other rows, same packed weight
        expect_close(product(a2, 1), reference(a2), kF32, what + ", other rows");
        // Negate the weight in place.
        for (size_t i = 0; i + 4 <= b.buf.size(); i += 4) b.buf[i + 3] ^= static_cast<char>(0x80);
        const std::vector<double> now = product(a, 1), negated = reference(a);
        if (!declare) {
          expect_close(now, negated, kF32, what + ": the new values are read");
        } else if (panels_run() || (!capped && !packing_off && m >= 16)) {  // oneDNN packs from 16 rows
          expect_close(now, first, kF32, what + ": the packed copy is kept");
        }
      }
    }
  }
}

// A linear layer on a constant weight, through each entry point that takes
// the packed path (mm, addmm with a bias row, the frozen linear, and the
// frozen linear with a residual add), at team sizes 1 and 2: where panels
// run, every output must equal, bit for bit, one float fused multiply-add
// chain over k in order started from the bias (or 0) -- and then the
// residual added as its own float sum -- at every team size, with AVX-512
// and with AVX2 (the isa_avx2 run): the same bits on either host.
// Elsewhere (the isa_scalar run) oneDNN's sums must be close. Shapes cross
// the panel widths (16 and 32 columns), the row blocks (6 and 8), the row
// groups (64) and the k chunk (2,048 and 4,096; at 4,100: the residual
// goes in with the last chunk only).
TEST(ShimKernels, ConstantWeightGemmIsOneFmaChainPerOutput) {
  const int64_t shapes[][3] = {{1, 1, 1},     {1, 256, 768},  {5, 3, 17},    {8, 257, 32},  {9, 513, 33},
                               {13, 600, 47}, {33, 256, 70},  {64, 255, 16}, {65, 100, 15}, {130, 300, 69},
                               {394, 40, 31}, {17, 2049, 40}, {3, 4100, 20}};
  const bool exact = panels_run();
  int checked = 0;
  for (const auto& sh : shapes) {
    const int64_t m = sh[0], k = sh[1], n = sh[2];
    for (int entry = 0; entry < 5; ++entry) {
      // 0: mm, mat2 [K, N] row-major (a Conv1D weight); 1: mm, mat2
      // column-major (a transposed [N, K] weight); 2: addmm with a bias row;
      // 3: the frozen linear, W [N, K] and a bias; 4: the same plus a
      // residual of the output's shape (linear_pointwise_binary, "add").
      const bool bias_used = entry >= 2, frozen = entry >= 3;
      T x({m, k}, {k + 3, 1}, kF32, 21);  // rows with gaps
      T w(frozen ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
          frozen ? std::vector<int64_t>{k, 1} : mat_strides(k, n, entry == 1 ? 1 : 0), kF32, 22);
      T bias({n}, {1}, kF32, 23), residual({m, n}, {n, 1}, kF32, 25);
      ASSERT_EQ(aotrun_shim_declare_constant(w.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
      // The operands read once into plain arrays (x [M, K], the weight as
      // [N, K]): the loops below make M*N*K multiply-adds.
      std::vector<double> xs(static_cast<size_t>(m * k)), ws(static_cast<size_t>(n * k));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) xs[i * k + p] = x.at({i, p});
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p) ws[j * k + p] = frozen ? w.at({j, p}) : w.at({p, j});
      std::vector<double> chain, sum;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float acc = bias_used ? static_cast<float>(bias.at({j})) : 0.0f;
          double ref = bias_used ? bias.at({j}) : 0.0;
          const double* xr = &xs[i * k];
          const double* wr = &ws[j * k];
          for (int64_t p = 0; p < k; ++p) {
            acc = std::fmaf(static_cast<float>(xr[p]), static_cast<float>(wr[p]), acc);
            ref += xr[p] * wr[p];
          }
          if (entry == 4) {
            acc += static_cast<float>(residual.at({i, j}));
            ref += residual.at({i, j});
          }
          chain.push_back(acc);
          sum.push_back(ref);
        }
      for (int team : {1, 2}) {
        const std::string what = "entry " + std::to_string(entry) + ", " + std::to_string(m) + "x" + std::to_string(k) +
                                 "x" + std::to_string(n) + ", team " + std::to_string(team);
        const int before = omp_get_max_threads();
        omp_set_num_threads(team);
        std::vector<double> got;
        if (frozen) {
          AtenTensorHandle bh = bias.h, out = nullptr;
          const AOTITorchError rc =
              entry == 3 ? aoti_torch_cpu__linear_pointwise(x.h, w.h, &bh, "none", nullptr, 0, nullptr, &out)
                         : aoti_torch_cpu__linear_pointwise_binary(x.h, residual.h, w.h, &bh, "add", &out);
          omp_set_num_threads(before);
          ASSERT_EQ(rc, AOTI_TORCH_SUCCESS) << what << ": " << aotrun_shim_last_error();
          got = values(api(), out);
          aoti_torch_delete_tensor_object(out);
        } else {
          T out({m, n}, {n + 5, 1}, kF32, 24);  // rows with gaps
          const AOTITorchError rc = entry == 2 ? aoti_torch_cpu_addmm_out(out.h, bias.h, x.h, w.h, 1.0, 1.0)
                                               : aoti_torch_cpu_mm_out(out.h, x.h, w.h);
          omp_set_num_threads(before);
          ASSERT_EQ(rc, AOTI_TORCH_SUCCESS) << what << ": " << aotrun_shim_last_error();
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) got.push_back(out.at({i, j}));
        }
        if (exact) {
          ASSERT_EQ(got.size(), chain.size()) << what;
          int64_t differ = 0, first = -1;
          for (size_t e = 0; e < got.size(); ++e)
            if (got[e] != chain[e] && differ++ == 0) first = static_cast<int64_t>(e);
          EXPECT_EQ(differ, 0) << what << ": first at element " << first << ": " << got[first] << " against "
                               << chain[first];
        } else {  // oneDNN's sums, in its own order: an error growing as sqrt(k)
          EXPECT_EQ(close(got, sum, 1.3e-6, 1e-5 * std::sqrt(static_cast<double>(k))), "") << what;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 13 * 5 * 2);
}

// The frozen linear's binary post-op on a constant weight, with `other` of
// the output's shape in each layout: contiguous (an add goes into the
// packed GEMM's store), with row gaps or transposed (a pass after the
// GEMM), 3-d [B, T, N], and ops other than add (passes after it). Each
// output against (x @ wᵀ + b) op other in double precision. A broadcast
// `other` is refused, as libtorch refuses it.
TEST(ShimKernels, FrozenLinearBinaryMatchesItsFormula) {
  const int64_t m = 9, k = 40, n = 33;
  T x({m, k}, {k, 1}, kF32, 41), w({n, k}, {k, 1}, kF32, 42), bias({n}, {1}, kF32, 43);
  ASSERT_EQ(aotrun_shim_declare_constant(w.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  struct Other {
    const char* label;
    std::vector<int64_t> sizes, strides;
  };
  const Other others[] = {
      {"[M, N]", {m, n}, {n, 1}},
      {"[M, N] with row gaps", {m, n}, {n + 7, 1}},
      {"[M, N] transposed", {m, n}, {1, m}},
  };
  struct Op {
    const char* attr;
    double (*f)(double, double);
  };
  const Op ops[] = {{"add", [](double a, double b) { return a + b; }},
                    {"sub", [](double a, double b) { return a - b; }},
                    {"mul", [](double a, double b) { return a * b; }}};
  int checked = 0;
  for (const Other& o : others) {
    T other(o.sizes, o.strides, kF32, 44);
    for (const Op& op : ops)
      for (int team : {1, 2}) {
        const std::string what = std::string(op.attr) + " other " + o.label + ", team " + std::to_string(team);
        AtenTensorHandle bh = bias.h, out = nullptr;
        const int before = omp_get_max_threads();
        omp_set_num_threads(team);
        const AOTITorchError rc = aoti_torch_cpu__linear_pointwise_binary(x.h, other.h, w.h, &bh, op.attr, &out);
        omp_set_num_threads(before);
        ASSERT_EQ(rc, AOTI_TORCH_SUCCESS) << what << ": " << aotrun_shim_last_error();
        const std::vector<double> got = values(api(), out);
        aoti_torch_delete_tensor_object(out);
        std::vector<double> want;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = bias.at({j});
            for (int64_t p = 0; p < k; ++p) acc += x.at({i, p}) * w.at({j, p});
            want.push_back(op.f(acc, other.at({i, j})));
          }
        EXPECT_EQ(close(got, want, 1e-5, 1e-5), "") << what;
        ++checked;
      }
  }
  // A 3-d input and residual ([B, T, N]: a transformer's hidden states),
  // large enough (2^16 sums) that a sum after the GEMM is split over a team.
  const int64_t t3 = 1000;
  T x3({2, t3, k}, {t3 * k, k, 1}, kF32, 45), r3({2, t3, n}, {t3 * n, n, 1}, kF32, 46);
  AtenTensorHandle bh = bias.h, out = nullptr;
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  const AOTITorchError rc = aoti_torch_cpu__linear_pointwise_binary(x3.h, r3.h, w.h, &bh, "add", &out);
  omp_set_num_threads(before);
  ASSERT_EQ(rc, AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  const std::vector<double> got = values(api(), out);
  aoti_torch_delete_tensor_object(out);
  std::vector<double> want;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < t3; ++t)
      for (int64_t j = 0; j < n; ++j) {
        double acc = bias.at({j});
        for (int64_t p = 0; p < k; ++p) acc += x3.at({b, t, p}) * w.at({j, p});
        want.push_back(acc + r3.at({b, t, j}));
      }
  EXPECT_EQ(close(got, want, 1e-5, 1e-5), "") << "3-d add";
  EXPECT_EQ(checked, 3 * 3 * 2);
  // A row to broadcast: refused, naming the argument.
  T row({n}, {1}, kF32, 47);
  bh = bias.h;
  out = nullptr;
  EXPECT_NE(aoti_torch_cpu__linear_pointwise_binary(x.h, row.h, w.h, &bh, "add", &out), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(std::string(aotrun_shim_last_error()).find("'other'"), std::string::npos) << aotrun_shim_last_error();
}

// The frozen linear's activations on a constant weight (the packed GEMM,
// then the activation's pass): each against its formula in double
// precision, at shapes crossing the panel and row-block edges, with a NaN
// input row that must stay NaN (relu included) and rows of large
// magnitude (exp's overflow in swish).
TEST(ShimKernels, FrozenLinearActivationsMatchTheirFormulas) {
  struct Act {
    const char* attr;
    const char* algorithm;
    double (*f)(double);
  };
  const Act acts[] = {
      {"relu", nullptr, [](double v) { return v < 0 ? 0.0 : v; }},
      {"swish", nullptr, [](double v) { return v / (1.0 + std::exp(-v)); }},
      {"gelu", "none", [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }},
      {"gelu", "tanh",
       [](double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); }},
      {"sigmoid", nullptr, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
  };
  const int64_t shapes[][3] = {{1, 7, 5}, {9, 64, 33}, {33, 256, 70}};
  int checked = 0;
  for (const auto& sh : shapes) {
    const int64_t m = sh[0], k = sh[1], n = sh[2];
    T x({m, k}, {k, 1}, kF32, 31), w({n, k}, {k, 1}, kF32, 32), bias({n}, {1}, kF32, 33);
    ASSERT_EQ(aotrun_shim_declare_constant(w.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
    // Row 0 NaN; the last row (when there are 3 or more) scaled to about
    // +-100 before the bias, so that exp(-x) overflows on one side.
    float* xd = reinterpret_cast<float*>(x.buf.data());
    xd[0] = std::nanf("");
    if (m >= 3)
      for (int64_t p = 0; p < k; ++p) xd[(m - 1) * k + p] *= 400.0f / std::sqrt(static_cast<float>(k));
    for (const Act& a : acts) {
      const std::string what = std::string(a.attr) + (a.algorithm ? std::string(" ") + a.algorithm : "") + ", " +
                               std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
      AtenTensorHandle bh = bias.h, out = nullptr;
      const double* no_scalar[] = {nullptr};
      const char* alg = a.algorithm;
      ASSERT_EQ(aoti_torch_cpu__linear_pointwise(x.h, w.h, &bh, a.attr, no_scalar, 1, alg ? &alg : nullptr, &out),
                AOTI_TORCH_SUCCESS)
          << what << ": " << aotrun_shim_last_error();
      const std::vector<double> got = values(api(), out);
      aoti_torch_delete_tensor_object(out);
      int64_t bad = 0;
      std::string first;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double g = got[i * n + j];
          if (i == 0) {
            EXPECT_TRUE(std::isnan(g)) << what << ": column " << j << " of the NaN row is " << g;
            continue;
          }
          // float32's sum carries an error that grows with the products'
          // magnitudes (the +-100 row cancels a lot), not with the result.
          double acc = bias.at({j}), magnitude = std::fabs(acc);
          for (int64_t p = 0; p < k; ++p) {
            acc += x.at({i, p}) * w.at({j, p});
            magnitude += std::fabs(x.at({i, p}) * w.at({j, p}));
          }
          const double want = a.f(acc);
          if (!(std::fabs(g - want) <= 1e-5 * std::fabs(want) + 1e-5 + 1e-6 * magnitude) && bad++ == 0) {
            first = "row " + std::to_string(i) + " column " + std::to_string(j) + ": " + std::to_string(g) +
                    " against " + std::to_string(want);
          }
        }
      EXPECT_EQ(bad, 0) << what << ": first at " << first;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * 5);
}

// --- convolution --------------------------------------------------------------

struct Conv {
  std::vector<int64_t> in;
  int64_t oc;
  std::vector<int64_t> k, stride, pad, dil;
  int64_t groups;
  bool bias, cl;
};

// The strides of a tensor of sizes s in channels-last order.
std::vector<int64_t> cl_strides(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = s[1];
  st[1] = 1;
  for (size_t d = s.size() - 1; d >= 2; --d) st[d] = acc, acc *= s[d];
  st[0] = acc;
  return st;
}

// A convolution's operands, the same for every call with one geometry.
struct ConvOperands {
  ConvOperands(const Conv& c, int32_t dt)
      : x(c.in, c.cl ? cl_strides(c.in) : rowmajor(c.in), dt, 11),
        w(weight_sizes(c), c.cl ? cl_strides(weight_sizes(c)) : rowmajor(weight_sizes(c)), dt, 12),
        b({c.oc}, {1}, dt, 13) {}
  static std::vector<int64_t> weight_sizes(const Conv& c) {
    std::vector<int64_t> ws = {c.oc, c.in[1] / c.groups};
    ws.insert(ws.end(), c.k.begin(), c.k.end());
    return ws;
  }
  T x, w, b;
};

std::vector<int64_t> conv_output_sizes(const Conv& c) {
  std::vector<int64_t> os = {c.in[0], c.oc};
  for (size_t i = 0; i < c.k.size(); ++i) {
    os.push_back((c.in[2 + i] + 2 * c.pad[i] - c.dil[i] * (c.k[i] - 1) - 1) / c.stride[i] + 1);
  }
  return os;
}

// The naive convolution in double, the output in row-major order.
std::vector<double> conv_reference(const Conv& c, int32_t dt) {
  const ConvOperands t(c, dt);
  const int64_t nd = static_cast<int64_t>(c.k.size());
  const std::vector<int64_t> os = conv_output_sizes(c);
  std::vector<double> want;
  const int64_t cg = c.in[1] / c.groups, og = c.oc / c.groups;
  // Iterate the output in row-major order over up to 3 spatial dims.
  std::vector<int64_t> o3(3, 1), k3(3, 1), i3(3, 1), s3(3, 1), p3(3, 0), d3(3, 1);
  for (int64_t i = 0; i < nd; ++i) {
    o3[3 - nd + i] = os[2 + i];
    k3[3 - nd + i] = c.k[i];
    i3[3 - nd + i] = c.in[2 + i];
    s3[3 - nd + i] = c.stride[i];
    p3[3 - nd + i] = c.pad[i];
    d3[3 - nd + i] = c.dil[i];
  }
  // A multi-index on the stack: this runs for every multiply-add.
  auto at = [&](const T& tensor, int64_t n0, int64_t ch, int64_t a, int64_t bq, int64_t cq) {
    const int64_t sp[3] = {a, bq, cq};
    int64_t v[5] = {n0, ch};
    for (int64_t i = 0; i < nd; ++i) v[2 + i] = sp[3 - nd + i];
    return tensor.at(v, static_cast<size_t>(2 + nd));
  };
  for (int64_t n0 = 0; n0 < c.in[0]; ++n0)
    for (int64_t o = 0; o < c.oc; ++o)
      for (int64_t y0 = 0; y0 < o3[0]; ++y0)
        for (int64_t y1 = 0; y1 < o3[1]; ++y1)
          for (int64_t y2 = 0; y2 < o3[2]; ++y2) {
            double acc = c.bias ? t.b.at({o}) : 0.0;
            const int64_t g = o / og;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t a = 0; a < k3[0]; ++a)
                for (int64_t bq = 0; bq < k3[1]; ++bq)
                  for (int64_t cq = 0; cq < k3[2]; ++cq) {
                    const int64_t x0 = y0 * s3[0] - p3[0] + a * d3[0], x1 = y1 * s3[1] - p3[1] + bq * d3[1],
                                  x2 = y2 * s3[2] - p3[2] + cq * d3[2];
                    if (x0 < 0 || x0 >= i3[0] || x1 < 0 || x1 >= i3[1] || x2 < 0 || x2 >= i3[2]) continue;
                    acc += at(t.x, n0, g * cg + ci, x0, x1, x2) * at(t.w, o, ci, a, bq, cq);
                  }
            want.push_back(acc);
          }
  return want;
}

// Runs the shim's convolution once and compares it with `want`.
void check_conv(const Conv& c, int32_t dt, const std::vector<double>& want) {
  ConvOperands t(c, dt);
  const int64_t nd = static_cast<int64_t>(c.k.size());
  AtenTensorHandle bh = t.b.h, out = nullptr;
  const std::vector<int64_t> op(nd, 0);
  ASSERT_EQ(aoti_torch_cpu_convolution(t.x.h, t.w.h, c.bias ? &bh : nullptr, c.stride.data(), nd, c.pad.data(), nd,
                                       c.dil.data(), nd, 0, op.data(), nd, c.groups, &out),
            AOTI_TORCH_SUCCESS)
      << aotrun_shim_last_error();
  const TensorDesc d = describe(api(), out);
  const std::vector<int64_t> os = conv_output_sizes(c);
  ASSERT_EQ(d.sizes, os);
  if (c.cl && nd == 2) {
    EXPECT_EQ(d.strides, cl_strides(os));  // channels-last in, channels-last out
  } else {
    EXPECT_EQ(d.strides, rowmajor(os));
  }
  expect_close(values(api(), out), want, dt, "convolution " + std::to_string(nd) + "d");
  aoti_torch_delete_tensor_object(out);
}

void check_conv(const Conv& c, int32_t dt) { check_conv(c, dt, conv_reference(c, dt)); }

TEST(ShimKernels, ConvolutionMatchesNaive) {
  const std::vector<Conv> cases = {
      {{2, 3, 7, 9}, 5, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, false},
      {{1, 4, 11, 6}, 6, {3, 2}, {2, 1}, {2, 0}, {2, 3}, 2, true, false},
      {{2, 6, 5, 5}, 6, {3, 3}, {1, 2}, {1, 1}, {1, 1}, 6, false, false},                // depthwise
      {{2, 3, 8, 8}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},                  // channels_last
      {{1, 8, 4, 4}, 4, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, true, true},                  // pointwise, grouped
      {{3, 2, 13}, 4, {4}, {3}, {2}, {2}, 2, true, false},                               // 1d
      {{1, 2, 5, 6, 4}, 3, {2, 3, 2}, {2, 1, 1}, {0, 1, 1}, {1, 2, 1}, 1, true, false},  // 3d
      {{1, 4, 3, 4, 5}, 4, {3, 1, 2}, {1, 1, 1}, {1, 0, 0}, {1, 1, 2}, 4, false, true},  // 3d depthwise cl
      // As Inductor calls it: channels-last input and weight (float32 runs on
      // oneDNN, whose fast paths want one layout for all three tensors)
      {{2, 16, 1, 1}, 24, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true, true},     // squeeze-excite: 1x1 spatial
      {{1, 16, 9, 9}, 16, {5, 5}, {2, 2}, {2, 2}, {1, 1}, 16, true, true},    // depthwise, stride 2
      {{3, 8, 10, 10}, 24, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, false, true},   // dilated
      {{2, 32, 6, 6}, 64, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false, true},    // downsampling 1x1
      {{1, 3, 17, 17}, 16, {7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false, false},  // stem, contiguous
  };
  for (const auto& c : cases) {
    check_conv(c, kF32);
    check_conv(c, kBF16);
  }
}

// Per-call temporaries (the reordered weight, an unfolded input) live in
// thread scratch that keeps its largest size and is never cleared
// (src/compute/scratch.hpp): a large convolution, then a small one in the
// memory the large one left, then the large one again, each against the
// naive reference.
TEST(ShimKernels, ConvolutionsOfOtherSizesInTurnMatchNaive) {
  const Conv large = {{2, 24, 12, 12}, 40, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, true};
  const Conv small = {{1, 8, 5, 5}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, true};
  const std::vector<double> want_large = conv_reference(large, kF32), want_small = conv_reference(small, kF32);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    check_conv(large, kF32, want_large);
    check_conv(small, kF32, want_small);
  }
  check_conv(large, kF32, want_large);
}

// Issue #40: oneDNN's GEMM-based convolution (every Conv1d of a speech stem,
// large dilations) crashed when it ran on a thread other than the one that
// first ran its shape, and primitives built for one OpenMP team size were
// reused at another. Each geometry here runs on this thread, then on new
// threads at team sizes 1-3, then on two threads at once; every result
// against the naive reference.
void conv_on_threads(const Conv& c, int32_t dt) {
  const std::vector<double> want = conv_reference(c, dt);  // once: under ASan it costs more than the runs
  check_conv(c, dt, want);
  for (int team : {1, 2, 3}) {
    std::thread t([&] {
      omp_set_num_threads(team);
      check_conv(c, dt, want);
    });
    t.join();
  }
  std::thread a([&] { check_conv(c, dt, want); }), b([&] {
    omp_set_num_threads(2);
    check_conv(c, dt, want);
  });
  a.join();
  b.join();
}

TEST(ShimKernels, ConvolutionFromAnyThreadAtAnyTeamSize) {
  const std::vector<Conv> cases = {
      {{2, 40, 200}, 64, {3}, {1}, {1}, {1}, 1, true, false},                   // speech stem (gemm:jit)
      {{1, 64, 8, 8}, 32, {3, 3}, {1, 1}, {12, 12}, {12, 12}, 1, true, false},  // ASPP branch
      {{2, 4, 64}, 8, {4}, {4}, {0}, {1}, 1, true, false},                      // strided conv1d
      {{1, 16, 9, 9}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false, true},      // direct, channels-last
  };
  for (const auto& c : cases) conv_on_threads(c, kF32);
}

// Random geometries (1d/2d/3d; stride, padding, dilation, groups including
// depthwise; channels-last or not; bias or not; float32 and bfloat16), each
// on three threads as above. A fixed seed; AOTRUN_CONV_FUZZ_CASES sets how
// many (default 24; more by hand).
TEST(ShimKernels, ConvolutionFuzzAcrossThreads) {
  const char* env = std::getenv("AOTRUN_CONV_FUZZ_CASES");
  const int n = env != nullptr ? std::atoi(env) : 24;
  uint32_t s = 20261128u;
  auto next = [&](int lo, int hi) {  // uniform in [lo, hi]
    s = s * 1664525u + 1013904223u;
    return lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
  };
  for (int i = 0; i < n; ++i) {
    Conv c;
    const int nd = next(1, 3);
    const int64_t groups = std::vector<int64_t>{1, 1, 2, 3}[next(0, 3)];
    const bool depthwise = next(0, 4) == 0;
    const int64_t cg = next(1, 4);
    const int64_t in_c = groups * cg;
    c.groups = depthwise ? in_c : groups;
    c.oc = c.groups * next(1, 3);
    c.in = {next(1, 3), in_c};
    for (int d = 0; d < nd; ++d) {
      const int64_t k = next(1, nd == 3 ? 3 : 5), dil = next(1, 3), pad = next(0, 3), stride = next(1, 3);
      // An input at least as large as the dilated kernel less the padding.
      const int64_t span = dil * (k - 1) + 1;
      const int64_t size = std::max<int64_t>(span - 2 * pad, 1) + next(0, nd == 3 ? 4 : 9);
      c.k.push_back(k);
      c.dil.push_back(dil);
      c.pad.push_back(pad);
      c.stride.push_back(stride);
      c.in.push_back(size);
    }
    c.bias = next(0, 1) == 1;
    c.cl = nd >= 2 && next(0, 1) == 1;
    const int32_t dt = next(0, 3) == 0 ? kBF16 : kF32;
    SCOPED_TRACE("fuzz case " + std::to_string(i));
    conv_on_threads(c, dt);
  }
}

// --- attention and cumsum -----------------------------------------------------

TEST(ShimKernels, AttentionMatchesNaive) {
  for (int32_t dt : {kF32, kF64}) {
    // 0: mask; 1, 2: causal; 3: grouped-query heads, default scale; 4: one
    // query over 37 keys (a vector tail), mask; 5: query elements 2 apart
    // (float32 leaves its in-place path); 6: enough work (8 heads of 48 x 80
    // x 32) for float32 to split the heads over the OpenMP team, grouped,
    // masked and causal; 7: 13 queries over 21 keys (a full block of 8 rows
    // and a row tail, a full and a partial vector of columns in the small
    // heads' loops), masked and causal; 8: heads of 64 x 72 x 32, above
    // kHeadProductsMaxMacs, so float32 takes oneDNN's sgemm for Q·Kᵀ and,
    // where the CPU has AVX-512, the panel loops for P·V, masked; 9: the same
    // paths at 50 x 137 x 40 (a panel's tail of 8 columns, 137 steps of k),
    // grouped, masked and causal
    for (int variant = 0; variant < 10; ++variant) {
      const bool big = variant == 6;
      const int64_t B = 2, Hq = variant == 3 || big || variant == 9 ? 4 : 2, Hk = 2,
                    L = variant == 2   ? 3
                        : variant == 4 ? 1
                        : big          ? 48
                        : variant == 7 ? 13
                        : variant == 8 ? 64
                        : variant == 9 ? 50
                                       : 5,
                    S = variant == 4   ? 37
                        : big          ? 80
                        : variant == 7 ? 21
                        : variant == 8 ? 72
                        : variant == 9 ? 137
                                       : 6,
                    E = big || variant == 8 ? 32
                        : variant == 7      ? 24
                        : variant == 9      ? 40
                                            : 8,
                    qe = variant == 5 ? 2 : 1;
      const bool causal = variant == 1 || variant == 2 || big || variant == 7 || variant == 9;
      const bool masked = variant == 0 || variant == 4 || big || variant >= 7;
      // query stored [B, L, H, E] (as models pass it), key/value row-major
      T q({B, Hq, L, E}, {L * Hq * E * qe, E * qe, Hq * E * qe, qe}, dt, 21);
      T k({B, Hk, S, E}, rowmajor({B, Hk, S, E}), dt, 22);
      T v({B, Hk, S, E}, rowmajor({B, Hk, S, E}), dt, 23);
      T mask({L, S}, {S, 1}, dt, 24);
      AtenTensorHandle mh = mask.h, out = nullptr, lse = nullptr;
      double scale = 0.35;
      ASSERT_EQ(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
                    q.h, k.h, v.h, 0.0, causal, masked ? &mh : nullptr, variant == 3 ? nullptr : &scale, &out, &lse),
                AOTI_TORCH_SUCCESS)
          << aotrun_shim_last_error();
      const double sc = variant == 3 ? 1.0 / std::sqrt(static_cast<double>(E)) : scale;
      std::vector<double> want, want_lse;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hq; ++h) {
          const int64_t hk = h / (Hq / Hk);
          for (int64_t i = 0; i < L; ++i) {
            std::vector<double> s(S);
            double mx = -INFINITY;
            for (int64_t j = 0; j < S; ++j) {
              double acc = 0;
              for (int64_t e = 0; e < E; ++e) acc += q.at({b, h, i, e}) * k.at({b, hk, j, e});
              s[j] = acc * sc + (masked ? mask.at({i, j}) : 0.0);
              if (causal && j > i) s[j] = -INFINITY;
              mx = std::max(mx, s[j]);
            }
            double sum = 0;
            for (double& x : s) sum += (x = std::exp(x - mx));
            want_lse.push_back(mx + std::log(sum));
            for (int64_t e = 0; e < E; ++e) {
              double acc = 0;
              for (int64_t j = 0; j < S; ++j) acc += s[j] / sum * v.at({b, hk, j, e});
              want.push_back(acc);
            }
          }
        }
      expect_close(values(api(), out), want, dt, "attention variant " + std::to_string(variant));
      expect_close(values(api(), lse), want_lse, dt, "logsumexp variant " + std::to_string(variant));
      aoti_torch_delete_tensor_object(out);
      aoti_torch_delete_tensor_object(lse);
    }
  }
}

TEST(ShimKernels, CumsumMatchesNaive) {
  T x({3, 4, 5}, {1, 15, 3}, kF32, 31);  // non-contiguous
  for (int64_t dim : {0, 1, 2, -1}) {
    AtenTensorHandle out = nullptr;
    ASSERT_EQ(aoti_torch_cpu_cumsum(x.h, dim, nullptr, &out), AOTI_TORCH_SUCCESS);
    const int64_t d = dim < 0 ? dim + 3 : dim;
    std::vector<double> want;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t l = 0; l < 5; ++l) {
          std::vector<int64_t> idx = {i, j, l};
          double acc = 0;
          const int64_t upto = idx[d];
          for (int64_t t = 0; t <= upto; ++t) {
            idx[d] = t;
            acc += x.at(idx);
          }
          want.push_back(acc);
        }
    EXPECT_EQ(describe(api(), out).strides, rowmajor({3, 4, 5}));
    expect_close(values(api(), out), want, kF32, "cumsum dim " + std::to_string(dim));
    aoti_torch_delete_tensor_object(out);
  }
  std::vector<int64_t> ids = {3, -1, 4, 1, -5, 9};
  AtenTensorHandle it = nullptr, out = nullptr;
  const int64_t sz = 6, st = 1;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(ids.data(), 1, &sz, &st, 0, aoti_torch_dtype_int64(),
                                               aoti_torch_device_type_cpu(), 0, &it),
            AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_cpu_cumsum(it, 0, nullptr, &out), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(values(api(), out), (std::vector<double>{3, 2, 6, 7, 2, 11}));
  aoti_torch_delete_tensor_object(out);
  aoti_torch_delete_tensor_object(it);
}

// --- tensor objects -------------------------------------------------------------

TEST(ShimTensors, StorageLivesUntilTheLastHandleAndBlobsAreNotOwned) {
  std::vector<float> blob = {1, 2, 3, 4, 5, 6};
  const int64_t sz[] = {2, 3}, st[] = {3, 1};
  AtenTensorHandle b = nullptr, e = nullptr, v = nullptr, n = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(blob.data(), 2, sz, st, 0, kF32, 0, 0, &b), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_empty_strided(2, sz, st, kF32, 0, 0, &e), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_copy_(e, b, 0), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_delete_tensor_object(b), AOTI_TORCH_SUCCESS);  // the blob stays (ASan would see a bad free)
  const int64_t vs[] = {3}, vt[] = {1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(e, 1, vs, vt, 3, &v), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_new_tensor_handle(v, &n), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_delete_tensor_object(e), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_delete_tensor_object(v), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(values(api(), n), (std::vector<double>{4, 5, 6}));  // storage still alive (ASan: no use after free)
  ASSERT_EQ(aoti_torch_delete_tensor_object(n), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(blob[5], 6.0f);
}

// The blob hook (aotrun_shim_set_blob_hook): run with its context after
// each tensor made over caller memory on the thread that set it, by both
// from-blob functions (strided tensors here); not after a failed call,
// not for tensors the shim allocates, not on other threads, and never
// again once cleared.
TEST(ShimTensors, BlobHookRunsAfterEachBlobTensorOnItsThreadOnly) {
  struct Count {
    int calls = 0;
  } count;
  const auto hook = [](void* c) { ++static_cast<Count*>(c)->calls; };
  std::vector<float> blob(6, 1.0f);
  const int64_t sz[] = {2, 3}, st[] = {3, 1};
  std::vector<AtenTensorHandle> made;
  const auto from_blob = [&](int version) {
    AtenTensorHandle h = nullptr;
    const AOTITorchError rc = version == 1
                                  ? aoti_torch_create_tensor_from_blob(blob.data(), 2, sz, st, 0, kF32, 0, 0, &h)
                                  : aoti_torch_create_tensor_from_blob_v2(blob.data(), 2, sz, st, 0, kF32, 0, 0, &h,
                                                                          aoti_torch_layout_strided(), nullptr, 0);
    if (rc == AOTI_TORCH_SUCCESS) made.push_back(h);
    return rc;
  };
  ASSERT_EQ(from_blob(1), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(count.calls, 0) << "no hook set yet";
  aotrun_shim_set_blob_hook(hook, &count);
  ASSERT_EQ(from_blob(1), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(from_blob(2), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(count.calls, 2) << "once per tensor, after each from-blob function";
  AtenTensorHandle e = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(2, sz, st, kF32, 0, 0, &e), AOTI_TORCH_SUCCESS);
  made.push_back(e);
  AtenTensorHandle bad = nullptr;
  EXPECT_EQ(aoti_torch_create_tensor_from_blob_v2(blob.data(), 2, sz, st, 0, kF32, 0, 0, &bad, 99, nullptr, 0),
            AOTI_TORCH_FAILURE);  // an unknown layout
  EXPECT_EQ(count.calls, 2) << "not for an allocated tensor nor after a failure";
  std::thread other([&] {
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(aoti_torch_create_tensor_from_blob(blob.data(), 2, sz, st, 0, kF32, 0, 0, &h), AOTI_TORCH_SUCCESS);
    EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
  });
  other.join();
  EXPECT_EQ(count.calls, 2) << "another thread's tensors do not run this thread's hook";
  aotrun_shim_set_blob_hook(nullptr, &count);
  ASSERT_EQ(from_blob(2), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(count.calls, 2) << "cleared";
  for (AtenTensorHandle h : made) EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
}

// A float32 tensor over `bytes` of caller memory at `at`, made through the
// from-blob entry point as load_constants makes a constant, kept in `made`.
void wrap_floats(std::vector<AtenTensorHandle>* made, char* at, size_t bytes) {
  const int64_t sz[] = {static_cast<int64_t>(bytes / 4)}, st[] = {1};
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(at, 1, sz, st, 0, kF32, 0, 0, &h), AOTI_TORCH_SUCCESS);
  made->push_back(h);
}

// While a blob hook is set the shim notes the span of the tensors made over
// caller memory (a model's constants); clearing it asks for transparent huge
// pages over the span's whole 2 MiB pages (huge_pages.hpp). Two 8 MiB
// blocks written first, as load_constants does: the one wrapped in a
// window becomes huge pages, the other (wrapped with no hook) does not, and
// neither does a window whose tensors lie far apart.
TEST(ShimTensors, ConstantsMadeInAHookWindowGetHugePages) {
  const std::string thp = thp_mode();
  const char* mode = thp.c_str();
  if (thp_off(thp)) {
    GTEST_SKIP() << "this kernel has transparent huge pages off or absent ('" << mode << "')";
  }
  constexpr size_t kBlock = size_t(8) << 20, kSlice = size_t(1) << 20;
  const auto fresh = [&] {
    void* p = mmap(nullptr, kBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    std::memset(p, 1, kBlock);  // written before it is wrapped, page by page
    return static_cast<char*>(p);
  };
  char* in_window = fresh();
  char* no_window = fresh();
  char* far_apart = fresh();
  std::vector<AtenTensorHandle> made;
  const auto wrap = [&](char* at, size_t bytes) { wrap_floats(&made, at, bytes); };
  int calls = 0;
  const auto hook = [](void* c) { ++*static_cast<int*>(c); };
  aotrun_shim_set_blob_hook(hook, &calls);
  for (size_t off = 0; off < kBlock; off += kSlice) wrap(in_window + off, kSlice);
  aotrun_shim_set_blob_hook(nullptr, nullptr);
  for (size_t off = 0; off < kBlock; off += kSlice) wrap(no_window + off, kSlice);
  aotrun_shim_set_blob_hook(hook, &calls);
  wrap(far_apart, kSlice);  // two 1 MiB tensors 7 MiB apart: not one block of constants
  wrap(far_apart + kBlock - kSlice, kSlice);
  aotrun_shim_set_blob_hook(nullptr, nullptr);
  EXPECT_EQ(calls, 10);
  const long huge = smaps_kb(in_window, kBlock, "AnonHugePages");
  if (huge == 0 && std::strstr(mode, "[always]") == nullptr) {
    // MADV_COLLAPSE is Linux 6.1's: older kernels refuse it, and the pages
    // stay as they are until khugepaged's next pass.
    struct utsname u;
    uname(&u);
    int major = 0, minor = 0;
    std::sscanf(u.release, "%d.%d", &major, &minor);
    if (major < 6 || (major == 6 && minor < 1)) GTEST_SKIP() << "kernel " << u.release << " has no MADV_COLLAPSE";
  }
  EXPECT_GE(huge, 6 * 1024) << "the window's block (8 MiB, at least 3 whole huge pages of it) is not in huge pages";
  if (std::strstr(mode, "[always]") == nullptr) {  // with "always" every fresh block may fault in as huge pages
    EXPECT_EQ(smaps_kb(no_window, kBlock, "AnonHugePages"), 0) << "tensors made with no hook set were advised";
    EXPECT_EQ(smaps_kb(far_apart, kBlock, "AnonHugePages"), 0) << "a window of scattered tensors was advised";
  } else {
    std::printf("transparent_hugepage is 'always' here: only the window's block is checked\n");
  }
  for (AtenTensorHandle h : made) EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
  for (char* p : {in_window, no_window, far_apart}) munmap(p, kBlock);
}

// Pages khugepaged has collapsed since boot, system-wide; -1 if the kernel
// does not say.
long khugepaged_pages_collapsed() {
  FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/khugepaged/pages_collapsed", "r");
  if (f == nullptr) return -1;
  long n = -1;
  if (std::fscanf(f, "%ld", &n) != 1) n = -1;
  std::fclose(f);
  return n;
}

// Why the tests of a block filled as load_constants fills one
// (FilledBlock) cannot run here; "" when they can.
std::string filled_block_skip() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return "the sanitizer's allocator replaces glibc's malloc, whose mapped blocks this is about";
#endif
  const std::string thp = thp_mode();
  if (thp_off(thp)) return "this kernel has transparent huge pages off or absent ('" + thp + "')";
  if (thp.find("[always]") != std::string::npos) return "with 'always' every block faults in as huge pages";
  return "";
}

// A 12 MiB block that glibc's malloc maps on its own, filled as
// load_constants fills AOTInductor's blob, one constant after another: its
// first 64 KiB written and wrapped while a blob hook is set, then the rest
// written (`huge_before_close`: the block's AnonHugePages, kB, then) and
// wrapped, then the hook cleared (the window's close).
struct FilledBlock {
  static constexpr size_t kBytes = size_t(12) << 20, kFirst = size_t(64) << 10;
  char* blob = nullptr;
  std::vector<AtenTensorHandle> made;
  int hook_calls = 0;
  long huge_before_close = -1;

  FilledBlock() {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);  // a block of its own, whatever this process freed before
    blob = static_cast<char*>(std::malloc(kBytes));
    if (blob == nullptr) return;
    std::memset(blob, 1, kFirst);
    aotrun_shim_set_blob_hook([](void* c) { ++*static_cast<int*>(c); }, &hook_calls);
    wrap_floats(&made, blob, kFirst);
    std::memset(blob + kFirst, 2, kBytes - kFirst);  // copied after the first tensor, page by page
    huge_before_close = smaps_kb(blob, kBytes, "AnonHugePages");
    wrap_floats(&made, blob + kFirst, kBytes - kFirst);
    aotrun_shim_set_blob_hook(nullptr, nullptr);
  }
  ~FilledBlock() {
    for (AtenTensorHandle h : made) EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
    std::free(blob);
  }
  FilledBlock(const FilledBlock&) = delete;
  FilledBlock& operator=(const FilledBlock&) = delete;
};

// A block of constants copied after its first tensor is made -- as
// load_constants fills AOTInductor's blob, a block glibc's malloc maps on
// its own, one constant after another -- faults in as huge pages already,
// before the window closes: its first tensor has the rest of the block
// advised (huge_pages.hpp).
TEST(ShimTensors, ABlockOfConstantsIsAdvisedBeforeItIsFilled) {
  const std::string skip = filled_block_skip();
  if (!skip.empty()) GTEST_SKIP() << skip;
  FilledBlock b;
  ASSERT_NE(b.blob, nullptr);
  EXPECT_EQ(b.hook_calls, 2);
  EXPECT_GE(b.huge_before_close, 8 * 1024) << "the block's later pages were not huge as they were written";
}

// With AOTRUN_SHIM_CONSTANT_HUGE_PAGES=later (the choice on a host that
// takes free memory back, huge_pages.hpp), the same block fills in 4 KiB
// pages and gets no huge pages while it loads, not even at the window's
// close (no MADV_COLLAPSE), but is advised MADV_HUGEPAGE there, for
// khugepaged to collapse in the background. Registered as huge_later.*
// with that setting; skips in the other runs.
TEST(ShimTensors, WithHugePagesLaterABlockOfConstantsIsOnlyAdvised) {
  const char* setting = std::getenv("AOTRUN_SHIM_CONSTANT_HUGE_PAGES");
  if (setting == nullptr || std::strcmp(setting, "later") != 0) {
    GTEST_SKIP() << "run as huge_later.* (AOTRUN_SHIM_CONSTANT_HUGE_PAGES=later)";
  }
  const std::string skip = filled_block_skip();
  if (!skip.empty()) GTEST_SKIP() << skip;
  // khugepaged may collapse the advised block at any moment after the close
  // (that is what advising it is for); when it collapsed pages anywhere while
  // this test ran, huge pages in the block may be its, not the shim's.
  const long collapsed_before = khugepaged_pages_collapsed();
  FilledBlock b;
  ASSERT_NE(b.blob, nullptr);
  EXPECT_EQ(b.huge_before_close, 0) << "the block was advised before it was filled";
  const long huge_after = smaps_kb(b.blob, FilledBlock::kBytes, "AnonHugePages");
  if (huge_after != 0 && khugepaged_pages_collapsed() != collapsed_before) {
    std::printf("khugepaged collapsed pages while this test ran: %ld kB of huge pages in the block not judged\n",
                huge_after);
  } else {
    EXPECT_EQ(huge_after, 0) << "the block was collapsed at the window's close";
  }
  const size_t huge = size_t(2) << 20;
  char* const first_huge = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(b.blob) + huge - 1) / huge * huge);
  EXPECT_TRUE(smaps_all_flagged(first_huge, 4 * huge, "hg")) << "the block's whole 2 MiB pages were not advised";
}

// A constant weight's packed copy (panel_gemm's panels, or oneDNN's) is
// carved from mappings marked for transparent huge pages
// (packed_memory.hpp): packing an 8 MiB weight adds at least 6 MiB of huge
// pages to the process, and freeing the weight gives them back.
TEST(ShimTensors, PackedCopiesOfConstantWeightsAreInHugePages) {
  const std::string thp = thp_mode();
  if (thp_off(thp)) {
    GTEST_SKIP() << "this kernel has transparent huge pages off or absent ('" << thp << "')";
  }
  if (!panels_run()) GTEST_SKIP() << "no panels here: oneDNN decides whether to pack (and may not)";
  const auto huge_kb = [] {
    FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
    if (f == nullptr) return -1L;
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::strncmp(line, "AnonHugePages:", 14) == 0) kb = std::atol(line + 14);
    std::fclose(f);
    return kb;
  };
  const int64_t m = 16, k = 1024, n = 2048;  // an 8 MiB weight
  const long before = huge_kb();
  if (before < 0) GTEST_SKIP() << "no /proc/self/smaps_rollup here";
  long packed = 0;
  {
    T w({k, n}, {1, k}, kF32, 31);  // a linear's transposed [N, K] weight
    ASSERT_EQ(aotrun_shim_declare_constant(w.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
    T x({m, k}, {k, 1}, kF32, 32), out({m, n}, {n, 1}, kF32, 33);
    const long unpacked = huge_kb();
    ASSERT_EQ(aoti_torch_cpu_mm_out(out.h, x.h, w.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
    packed = huge_kb();
    EXPECT_GE(packed - unpacked, 6 * 1024) << "the 8 MiB packed copy is not in huge pages (" << unpacked
                                           << " kB before, " << packed << " kB after packing)";
    for (int64_t j : {int64_t(0), n - 1}) {  // the copy serves the product
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += x.at({m - 1, p}) * w.at({p, j});
      EXPECT_NEAR(out.at({m - 1, j}), want, 1e-3) << "column " << j;
    }
  }
  EXPECT_LE(huge_kb(), packed - 6 * 1024) << "the packed copy's huge pages outlived its weight";
}

// --- bad input: a clear error, nothing crashes -------------------------------------

std::string fails(AOTITorchError rc) {
  EXPECT_EQ(rc, AOTI_TORCH_FAILURE);
  return aotrun_shim_last_error();
}

TEST(ShimBadInput, UnsupportedKernelArgumentsNameTheOpAndArgument) {
  T x({1, 2, 5, 5}, rowmajor({1, 2, 5, 5}), kF32, 1), w({2, 2, 3, 3}, rowmajor({2, 2, 3, 3}), kF32, 2);
  const int64_t one[] = {1, 1}, zero[] = {0, 0}, opad[] = {1, 0};
  AtenTensorHandle out = nullptr;
  // An integer dtype (transposed convolution is supported since aotrun-shim 1.3).
  std::vector<int64_t> xi(50, 1), wi(36, 1);
  const int64_t xs[] = {1, 2, 5, 5}, xst[] = {50, 25, 5, 1}, ws[] = {2, 2, 3, 3}, wst[] = {18, 9, 3, 1};
  AtenTensorHandle xh = nullptr, wh = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(xi.data(), 4, xs, xst, 0, aoti_torch_dtype_int64(), 0, 0, &xh),
            AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(wi.data(), 4, ws, wst, 0, aoti_torch_dtype_int64(), 0, 0, &wh),
            AOTI_TORCH_SUCCESS);
  std::string m = fails(aoti_torch_cpu_convolution(xh, wh, nullptr, one, 2, zero, 2, one, 2, 1, zero, 2, 1, &out));
  EXPECT_NE(m.find("aoti_torch_cpu_convolution"), std::string::npos) << m;
  EXPECT_NE(m.find("'input'"), std::string::npos) << m;
  EXPECT_NE(m.find("int64"), std::string::npos) << m;
  aoti_torch_delete_tensor_object(xh);
  aoti_torch_delete_tensor_object(wh);
  m = fails(aoti_torch_cpu_convolution(x.h, w.h, nullptr, one, 2, zero, 2, one, 2, 0, opad, 2, 1, &out));
  EXPECT_NE(m.find("'output_padding'"), std::string::npos) << m;
  m = fails(aoti_torch_cpu_convolution(x.h, w.h, nullptr, one, 2, zero, 2, one, 2, 0, zero, 2, 3, &out));
  EXPECT_NE(m.find("'groups'"), std::string::npos) << m;
  const int64_t three[] = {1, 1, 1};
  m = fails(aoti_torch_cpu_convolution(x.h, w.h, nullptr, three, 3, zero, 2, one, 2, 0, zero, 2, 1, &out));
  EXPECT_NE(m.find("'stride'"), std::string::npos) << m;
  EXPECT_EQ(out, nullptr);

  // An unsupported dtype in GEMM.
  std::vector<int64_t> ints(6, 1);
  const int64_t sz[] = {2, 3}, st[] = {3, 1}, sz2[] = {3, 2}, st2[] = {2, 1}, so[] = {2, 2}, sto[] = {2, 1};
  AtenTensorHandle a = nullptr, b = nullptr, o = nullptr;
  aoti_torch_create_tensor_from_blob(ints.data(), 2, sz, st, 0, aoti_torch_dtype_int64(), 0, 0, &a);
  aoti_torch_create_tensor_from_blob(ints.data(), 2, sz2, st2, 0, aoti_torch_dtype_int64(), 0, 0, &b);
  aoti_torch_empty_strided(2, so, sto, aoti_torch_dtype_int64(), 0, 0, &o);
  m = fails(aoti_torch_cpu_mm_out(o, a, b));
  EXPECT_NE(m.find("aoti_torch_cpu_mm_out"), std::string::npos) << m;
  EXPECT_NE(m.find("int64"), std::string::npos) << m;
  m = fails(aoti_torch_cpu_bmm_out(o, a, b));
  EXPECT_NE(m.find("'self'"), std::string::npos) << m;
  m = fails(aoti_torch_cpu_addmm_out(o, nullptr, a, b, 1, 1));
  EXPECT_NE(m.find("null"), std::string::npos) << m;
  for (auto h : {a, b, o}) aoti_torch_delete_tensor_object(h);

  // Attention with dropout.
  T q({1, 1, 2, 4}, rowmajor({1, 1, 2, 4}), kF32, 3);
  AtenTensorHandle r0 = nullptr, r1 = nullptr;
  m = fails(
      aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.h, q.h, q.h, 0.1, 0, nullptr, nullptr, &r0, &r1));
  EXPECT_NE(m.find("'dropout_p'"), std::string::npos) << m;
}

// Float64 GEMM needs OpenBLAS, which the shim loads only when a float64 GEMM
// first runs (float32 models never map it). A library that cannot be loaded
// is a clear error naming it, every time it is asked for, and the real one
// still serves afterwards.
TEST(ShimBadInput, Float64GemmNamesAnOpenBlasItCannotLoad) {
  T a({2, 3}, {3, 1}, kF64, 11), b({3, 2}, {2, 1}, kF64, 12), out({2, 2}, {2, 1}, kF64, 13);
  const char* missing = "/nonexistent/libopenblas.so.0";
  ASSERT_EQ(::setenv("AOTRUN_SHIM_OPENBLAS", missing, 1), 0);
  for (int i = 0; i < 2; ++i) {
    const std::string m = fails(aoti_torch_cpu_mm_out(out.h, a.h, b.h));
    EXPECT_NE(m.find("float64 matrix multiplication needs OpenBLAS"), std::string::npos) << m;
    EXPECT_NE(m.find(missing), std::string::npos) << m;
    EXPECT_NE(m.find("AOTRUN_SHIM_OPENBLAS"), std::string::npos) << m;
  }
  ASSERT_EQ(::unsetenv("AOTRUN_SHIM_OPENBLAS"), 0);
  ASSERT_EQ(aoti_torch_cpu_mm_out(out.h, a.h, b.h), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      double want = 0;
      for (int64_t p = 0; p < 3; ++p) want += a.at({i, p}) * b.at({p, j});
      EXPECT_DOUBLE_EQ(out.at({i, j}), want) << i << ", " << j;
    }
}

TEST(ShimBadInput, HandlesAndDevices) {
  std::string m = fails(aoti_torch_delete_tensor_object(nullptr));
  EXPECT_NE(m.find("null"), std::string::npos) << m;
  m = fails(aotrun_shim_declare_constant(nullptr));
  EXPECT_NE(m.find("null"), std::string::npos) << m;
  int64_t v = 0;
  m = fails(aoti_torch_get_dim(nullptr, &v));
  const int64_t sz[] = {2}, st[] = {1}, neg[] = {-2};
  AtenTensorHandle h = nullptr;
  m = fails(aoti_torch_empty_strided(1, sz, st, kF32, aoti_torch_device_type_cuda(), 0, &h));
  // Without the CUDA layer loaded (this program links the CPU shim only).
  EXPECT_NE(m.find("libaotrun_shim_cuda.so.1"), std::string::npos) << m;
  m = fails(aoti_torch_empty_strided(1, sz, st, 99, 0, 0, &h));
  EXPECT_NE(m.find("dtype"), std::string::npos) << m;
  m = fails(aoti_torch_empty_strided(1, neg, st, kF32, 0, 0, &h));
  EXPECT_NE(m.find("negative"), std::string::npos) << m;
  EXPECT_EQ(h, nullptr);
  ASSERT_EQ(aoti_torch_empty_strided(1, sz, st, kF32, 0, 0, &h), AOTI_TORCH_SUCCESS);
  m = fails(aoti_torch_get_size(h, 3, &v));
  EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  float f = 0;
  m = fails(aoti_torch_item_float32(h, &f));  // two elements
  aoti_torch_delete_tensor_object(h);
}

// A failed check throws (as libtorch's does) with the message; the message is
// also this thread's last error.
TEST(ShimBadInput, CheckThrowsWithItsMessage) {
  aoti_torch_check(true, "f", "file.cpp", 1, "never");
  try {
    aoti_torch_check(false, "kernel", "model.cpp", 42, "index out of bounds: 0 <= tmp0 < 100L");
    FAIL() << "no exception";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("index out of bounds: 0 <= tmp0 < 100L"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("model.cpp:42"), std::string::npos);
  }
  EXPECT_NE(std::string(aotrun_shim_last_error()).find("index out of bounds"), std::string::npos);
}

}  // namespace
