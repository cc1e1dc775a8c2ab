// aoti_torch_cpu__weight_int4pack_mm_cpu_tensor (aotrun-shim 1.4): libtorch
// 2.15's int4 weight-only linear (_weight_int4pack_mm_for_cpu), on libtorch
// (AOTRUN_LIBTORCH) and on the shim:
//  - DifferentialInt4Pack.*: weights packed by libtorch's own
//    _convert_weight_to_int4pack_for_cpu (called through its C++ operator
//    symbol), which must also equal this file's packer for the capability;
//    the same calls on both, results compared bit for bit (float32, bfloat16,
//    float16; group sizes 32..256; N in whole and partial column blocks;
//    M = 0, N = 0, K = 0; extra groups; offset views), and the calls both
//    refuse. Skipped without libtorch (and, under ATEN_CPU_CAPABILITY=avx512
//    on a CPU without AVX-512, all but the packing, which runs in a child).
//  - ShimReference.Int4Pack*: the shim alone against naive loops over weights
//    packed here, for the capability the process has (CTest runs this binary
//    also under ATEN_CPU_CAPABILITY=default, avx2 and avx512, so each layout
//    and each rounding is checked on any x86 host), exactly where every
//    product and sum is exact, within float32's error elsewhere; and what the
//    shim refuses beyond libtorch, each error naming the function and the
//    argument.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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
using aotrun_shim_test::providers;
using aotrun_shim_test::rounded;
using aotrun_shim_test::shim_only;
using aotrun_shim_test::Side;

const char* const kFn = "aoti_torch_cpu__weight_int4pack_mm_cpu_tensor";
using Int4Mm = int32_t (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*);
// at::_ops::_convert_weight_to_int4pack_for_cpu::call(const at::Tensor&,
// int64_t) -> at::Tensor, as the x86-64 Itanium ABI passes it: the result (a
// class with a destructor) is constructed at a pointer the caller passes
// first; an AtenTensorHandle of libtorch's is an at::Tensor*.
using ConvertFn = void* (*)(void* result, AtenTensorHandle w, int64_t inner_k_tiles);
const char* const kConvertSymbol = "_ZN2at4_ops35_convert_weight_to_int4pack_for_cpu4callERKNS_6TensorEl";

enum class Cap { kDefault, kAvx2, kAvx512 };

bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma");
}

// The capability libtorch picks (and the shim with it): ATEN_CPU_CAPABILITY,
// else the best the CPU has.
Cap capability() {
  if (const char* env = std::getenv("ATEN_CPU_CAPABILITY")) {
    if (std::strcmp(env, "avx512") == 0) return Cap::kAvx512;
    if (std::strcmp(env, "avx2") == 0) return Cap::kAvx2;
    if (std::strcmp(env, "default") == 0) return Cap::kDefault;
  }
  if (cpu_has_avx512()) return Cap::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Cap::kAvx2;
  return Cap::kDefault;
}

const char* cap_name(Cap c) { return c == Cap::kAvx512 ? "avx512" : c == Cap::kAvx2 ? "avx2" : "default"; }

// libtorch's kernels for the capability run on this CPU (ATEN_CPU_CAPABILITY=
// avx512 on a CPU without it dies of SIGILL in libtorch).
bool libtorch_runs_here() { return capability() != Cap::kAvx512 || cpu_has_avx512(); }

// libtorch 2.15's _convert_weight_to_int4pack_for_cpu for `cap`: q [N, K]
// (0..15) into [N, K / 2] bytes. Columns in blocks of BN (64 for avx512,
// else 32); a block of nbs columns at byte start * K / 2, row k at
// k * nbs / 2. Default and short blocks: column pairs per byte (even column
// low); avx2 full blocks: columns r and r + 16 share byte r; avx512 full
// blocks: (r, r + 32) share byte r and (r + 16, r + 48) byte 16 + r.
std::vector<uint8_t> pack(const std::vector<int>& q, int64_t n, int64_t k, Cap cap) {
  std::vector<uint8_t> out(static_cast<size_t>(n * k / 2), 0);
  const int64_t bn = cap == Cap::kAvx512 ? 64 : 32;
  for (int64_t start = 0; start < n; start += bn) {
    const int64_t nbs = std::min(bn, n - start);
    uint8_t* dst = out.data() + start * k / 2;
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t r = 0; r < nbs; ++r) {
        const int v = q[(start + r) * k + kk];
        int64_t byte;
        bool high;
        if (cap == Cap::kDefault || nbs != bn) {
          byte = kk * nbs / 2 + r / 2;
          high = r % 2 == 1;
        } else if (cap == Cap::kAvx2) {
          byte = kk * 16 + r % 16;
          high = r >= 16;
        } else {
          byte = kk * 32 + r % 16 + ((r / 16) % 2 == 1 ? 16 : 0);
          high = r >= 32;
        }
        dst[byte] |= static_cast<uint8_t>(high ? v << 4 : v);
      }
    }
  }
  return out;
}

// The bytes of `v` as dtype d (the inputs here are float).
std::vector<char> encode_floats(const std::vector<float>& v, Dt d) {
  return encode(std::vector<double>(v.begin(), v.end()), d);
}

std::vector<float> decode(const ShimApi& a, AtenTensorHandle h, Dt d, int64_t numel) {
  void* p = nullptr;
  a.aoti_torch_get_data_ptr(h, &p);
  std::vector<float> out(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    if (d == Dt::F32) {
      out[i] = static_cast<const float*>(p)[i];
    } else {
      const uint16_t b = static_cast<const uint16_t*>(p)[i];
      out[i] = d == Dt::BF16 ? bf16_value(b) : static_cast<float>(f16_value(b));
    }
  }
  return out;
}

// Values in [lo, hi), deterministic in `seed`.
std::vector<float> spread(int64_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2246822519u + 3;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = lo + (hi - lo) * static_cast<float>((s >> 8) & 0xffff) / 65536.0f;
  }
  return v;
}
std::vector<int> nibbles(int64_t n, uint32_t seed) {
  std::vector<int> v(static_cast<size_t>(n));
  uint32_t s = seed * 747796405u + 11;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = static_cast<int>((s >> 13) % 16);
  }
  return v;
}

struct Fns {
  Int4Mm torch = nullptr, shim = nullptr;
  ConvertFn convert = nullptr;
};
// The function in each library (already loaded by providers()/shim_only()).
const Fns& fns() {
  static Fns* f = [] {
    auto* r = new Fns;
    if (void* s = ::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD)) {
      r->shim = reinterpret_cast<Int4Mm>(::dlsym(s, kFn));
    }
    const char* dir = std::getenv("AOTRUN_LIBTORCH");
    if (dir != nullptr && *dir != '\0') {
      const std::string path = std::string(dir) + "/libtorch_cpu.so";
      if (void* t = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
        r->torch = reinterpret_cast<Int4Mm>(::dlsym(t, kFn));
        r->convert = reinterpret_cast<ConvertFn>(::dlsym(t, kConvertSymbol));
      }
    }
    return r;
  }();
  return *f;
}

Int4Mm fn_of(const Side& sd) { return &sd.a == &providers().torch ? fns().torch : fns().shim; }

// libtorch's packing of q [N, K] (through the operator), as bytes.
std::vector<uint8_t> libtorch_pack(const std::vector<int>& q, int64_t n, int64_t k) {
  Side t(providers().torch, "libtorch");
  const std::vector<int64_t> sizes{n, k}, strides{k, 1};
  AtenTensorHandle w = t.blob(bytes_of(q), sizes, strides, t.a.aoti_torch_dtype_int32());
  // Constructed in memory from operator new, like libtorch's own handles, so
  // that aoti_torch_delete_tensor_object can destroy and free it.
  void* result = ::operator new(sizeof(void*));
  fns().convert(result, w, 1);
  AtenTensorHandle packed = t.keep(static_cast<AtenTensorHandle>(result));
  const TensorDesc d = describe(t.a, packed);
  if (d.sizes != std::vector<int64_t>{n, k / 2} || d.dtype != t.a.aoti_torch_dtype_uint8()) return {};
  void* p = nullptr;
  t.a.aoti_torch_get_data_ptr(packed, &p);
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n * k / 2);
}

struct Case {
  int64_t m, k, n, group;
  int64_t groups_stored = -1;  // qScaleAndZeros' dim 0 (K / group when < 0)
  int64_t x_offset = 0;        // x a view this many elements into its storage
};

struct Inputs {
  std::vector<float> x, sz;
  std::vector<uint8_t> w;
  std::vector<int> q;
  int64_t groups = 0;  // qScaleAndZeros' dim 0
};

// x in [-1, 1), gpt-fast-like scales (positive, small) and zeros.
Inputs make_inputs(const Case& c, Dt d, Cap cap, uint32_t seed) {
  Inputs in;
  in.x = spread(c.x_offset + c.m * c.k, seed, -1.0f, 1.0f);
  in.q = nibbles(c.n * c.k, seed + 1);
  in.w = pack(in.q, c.n, c.k, cap);
  const int64_t g = c.groups_stored >= 0 ? c.groups_stored : (c.group > 0 ? c.k / c.group : 0);
  in.groups = g;
  const auto s = spread(g * c.n, seed + 2, 0.002f, 0.03f), z = spread(g * c.n, seed + 3, -0.2f, 0.2f);
  in.sz.resize(static_cast<size_t>(g * c.n * 2));
  for (int64_t i = 0; i < g * c.n; ++i) {
    in.sz[2 * i] = s[i];
    in.sz[2 * i + 1] = z[i];
  }
  for (auto& v : in.x) v = static_cast<float>(rounded(v, d));
  for (auto& v : in.sz) v = static_cast<float>(rounded(v, d));
  return in;
}

// One call on `sd`: rc, and the result (kept) or null.
AtenTensorHandle call(Side& sd, const Case& c, Dt d, const Inputs& in, int* rc) {
  const int64_t g = in.groups;
  AtenTensorHandle x = sd.blob(encode_floats(in.x, d), {c.m, c.k}, {c.k, 1}, code(sd.a, d), c.x_offset);
  AtenTensorHandle w = sd.blob(bytes_of(in.w), {c.n, c.k / 2}, {c.k / 2, 1}, sd.a.aoti_torch_dtype_uint8());
  const std::vector<int64_t> gs{c.group};
  AtenTensorHandle group = sd.blob(bytes_of(gs), {}, {}, sd.a.aoti_torch_dtype_int64());
  AtenTensorHandle sz = sd.blob(encode_floats(in.sz, d), {g, c.n, 2}, {c.n * 2, 2, 1}, code(sd.a, d));
  AtenTensorHandle out = nullptr;
  *rc = fn_of(sd)(x, w, group, sz, &out);
  return sd.keep(out);
}

std::string what(const Case& c, Dt d) {
  return std::string(dt_name(d)) + " m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) +
         " n=" + std::to_string(c.n) + " group=" + std::to_string(c.group) + " (" + cap_name(capability()) + ")";
}

#define NEED_INT4_LIBTORCH()                                                                          \
  do {                                                                                                \
    NEED_LIBTORCH();                                                                                  \
    if (!libtorch_runs_here()) GTEST_SKIP() << "ATEN_CPU_CAPABILITY=avx512 on a CPU without AVX-512"; \
    ASSERT_NE(fns().torch, nullptr) << "libtorch lacks " << kFn;                                      \
    ASSERT_NE(fns().shim, nullptr) << "the shim lacks " << kFn;                                       \
  } while (0)

const std::vector<Case> kCases = {
    {1, 32, 16, 32},
    {4, 64, 32, 32},
    {5, 128, 48, 64},
    {3, 256, 64, 128},
    {7, 256, 80, 256},
    {2, 512, 128, 128},
    {17, 128, 96, 32},
    {1, 1024, 64, 256},
    {6, 64, 112, 64},
    {9, 192, 144, 64},
    {0, 64, 32, 32},
    {3, 0, 32, 32},
    {3, 64, 0, 32},
    {4, 128, 32, 64, 3},     // extra groups: the first 2
                             // read
    {3, 64, 32, 32, -1, 5},  // x at a storage offset
};

// libtorch's packer is the one described by pack() for this capability.
// Under ATEN_CPU_CAPABILITY=avx512 on a CPU without AVX-512 libtorch's
// packer (plain loops) still runs, its matmul does not: the packing is
// checked in a child process, skipped if the child dies of SIGILL.
TEST(DifferentialInt4Pack, LibtorchPacksAsDescribed) {
  NEED_LIBTORCH();
  if (fns().convert == nullptr) GTEST_SKIP() << "libtorch lacks " << kConvertSymbol;
  auto first_difference = [] {
    for (int64_t n : {16, 32, 48, 64, 80, 96, 112, 128, 144, 208}) {
      for (int64_t k : {2, 8, 64}) {
        const auto q = nibbles(n * k, static_cast<uint32_t>(n + k));
        if (libtorch_pack(q, n, k) != pack(q, n, k, capability())) {
          return "n=" + std::to_string(n) + " k=" + std::to_string(k) + " (" + cap_name(capability()) + ")";
        }
      }
    }
    return std::string();
  };
  if (libtorch_runs_here()) {
    EXPECT_EQ(first_difference(), "");
    return;
  }
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(120);
    ::_exit(first_difference().empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGILL) GTEST_SKIP() << "libtorch's avx512 packer needs AVX-512";
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "libtorch's avx512 packing differs from pack()";
}

// The same packed bytes (libtorch's) on both: results equal bit for bit.
TEST(DifferentialInt4Pack, MatchesLibtorchBitForBit) {
  NEED_INT4_LIBTORCH();
  uint32_t seed = 1;
  for (Dt d : {Dt::F32, Dt::BF16, Dt::F16}) {
    for (const Case& c : kCases) {
      Inputs in = make_inputs(c, d, capability(), seed += 7);
      if (fns().convert != nullptr && c.n > 0 && c.k > 0) in.w = libtorch_pack(in.q, c.n, c.k);
      Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
      int rt = -1, rs = -1;
      AtenTensorHandle ot = call(t, c, d, in, &rt), os = call(s, c, d, in, &rs);
      ASSERT_EQ(rt, 0) << what(c, d);
      ASSERT_EQ(rs, 0) << what(c, d) << ": " << shim_only().last_error();
      const TensorDesc dt = describe(t.a, ot), ds = describe(s.a, os);
      EXPECT_EQ(ds.sizes, dt.sizes) << what(c, d);
      EXPECT_EQ(ds.strides, dt.strides) << what(c, d);
      EXPECT_EQ(ds.dtype, dt.dtype) << what(c, d);
      const auto vt = decode(t.a, ot, d, dt.numel), vs = decode(s.a, os, d, ds.numel);
      int64_t differ = 0, first = -1;
      for (size_t i = 0; i < vt.size(); ++i) {
        if (std::memcmp(&vt[i], &vs[i], 4) != 0) {
          if (first < 0) first = static_cast<int64_t>(i);
          ++differ;
        }
      }
      EXPECT_EQ(differ, 0) << what(c, d) << ": first at " << first << ": shim " << vs[first] << " libtorch "
                           << vt[first];
    }
  }
}

// What libtorch refuses, the shim refuses.
TEST(DifferentialInt4Pack, RefusesWhatLibtorchRefuses) {
  NEED_INT4_LIBTORCH();
  // x [3, 64] (K = 64) unless said; w [32, 32]; qScaleAndZeros [2, 32, 2].
  struct B {
    const char* what;
    int x_dt, w_dt, sz_dt, g_dt;  // 0 float32, 1 float64, 2 bfloat16, 3 uint8, 4 int8, 5 int64, 6 int32
    std::vector<int64_t> x_sizes, x_strides, w_sizes, w_strides, sz_sizes;
    std::vector<int64_t> group;
  };
  const std::vector<B> bads = {
      {"float64 X", 1, 3, 1, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"transposed X", 0, 3, 0, 5, {3, 64}, {1, 3}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"X with gapped rows", 0, 3, 0, 5, {3, 64}, {70, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"3-d X", 0, 3, 0, 5, {1, 3, 64}, {192, 64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"int8 w", 0, 4, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"transposed w", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {1, 32}, {2, 32, 2}, {32}},
      {"w of the wrong width", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 16}, {16, 1}, {2, 32, 2}, {32}},
      {"group size 16", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {4, 32, 2}, {16}},
      {"group size 48", 0, 3, 0, 5, {3, 96}, {96, 1}, {32, 48}, {48, 1}, {2, 32, 2}, {48}},
      {"group size 512", 0, 3, 0, 5, {3, 512}, {512, 1}, {32, 256}, {256, 1}, {1, 32, 2}, {512}},
      {"group size -32", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {-32}},
      {"group size not dividing K", 0, 3, 0, 5, {3, 96}, {96, 1}, {32, 48}, {48, 1}, {2, 32, 2}, {64}},
      {"group size above K", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {1, 32, 2}, {128}},
      {"int32 group size", 0, 3, 0, 6, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"two group sizes", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32, 32}},
      {"qScaleAndZeros for another N", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 16, 2}, {32}},
      {"qScaleAndZeros [2, 32, 3]", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 3}, {32}},
      {"2-d qScaleAndZeros", 0, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 64}, {32}},
      {"bfloat16 qScaleAndZeros, float32 X", 0, 3, 2, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"float32 qScaleAndZeros, bfloat16 X", 2, 3, 0, 5, {3, 64}, {64, 1}, {32, 32}, {32, 1}, {2, 32, 2}, {32}},
      {"N = 24", 0, 3, 0, 5, {3, 64}, {64, 1}, {24, 32}, {32, 1}, {2, 24, 2}, {32}},
      {"N = 40", 0, 3, 0, 5, {3, 64}, {64, 1}, {40, 32}, {32, 1}, {2, 40, 2}, {32}},
  };
  for (const B& b : bads) {
    int rcs[2] = {-1, -1};
    int idx = 0;
    for (const ShimApi* api : {&providers().torch, &providers().shim}) {
      Side sd(*api, idx == 0 ? "libtorch" : "shim");
      auto dtc = [&](int k) {
        switch (k) {
          case 0: return sd.a.aoti_torch_dtype_float32();
          case 1: return sd.a.aoti_torch_dtype_float64();
          case 2: return sd.a.aoti_torch_dtype_bfloat16();
          case 3: return sd.a.aoti_torch_dtype_uint8();
          case 4: return sd.a.aoti_torch_dtype_int8();
          case 5: return sd.a.aoti_torch_dtype_int64();
          default: return sd.a.aoti_torch_dtype_int32();
        }
      };
      auto zeros = [](const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, size_t item) {
        int64_t span = 1;
        for (size_t i = 0; i < sizes.size(); ++i) span += (sizes[i] - 1) * strides[i];
        return std::vector<char>(static_cast<size_t>(span) * item, 0);
      };
      auto contig = [](const std::vector<int64_t>& s) {
        std::vector<int64_t> st(s.size(), 1);
        for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
        return st;
      };
      AtenTensorHandle x = sd.blob(zeros(b.x_sizes, b.x_strides, 8), b.x_sizes, b.x_strides, dtc(b.x_dt));
      AtenTensorHandle w = sd.blob(zeros(b.w_sizes, b.w_strides, 1), b.w_sizes, b.w_strides, dtc(b.w_dt));
      AtenTensorHandle sz =
          sd.blob(zeros(b.sz_sizes, contig(b.sz_sizes), 8), b.sz_sizes, contig(b.sz_sizes), dtc(b.sz_dt));
      std::vector<char> gbytes;
      if (b.g_dt == 5) {
        gbytes = bytes_of(b.group);
      } else {
        gbytes = bytes_of(std::vector<int32_t>(b.group.begin(), b.group.end()));
      }
      const std::vector<int64_t> gsizes =
          b.group.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(b.group.size())};
      AtenTensorHandle g = sd.blob(gbytes, gsizes, contig(gsizes), dtc(b.g_dt));
      AtenTensorHandle out = nullptr;
      rcs[idx] = (idx == 0 ? fns().torch : fns().shim)(x, w, g, sz, &out);
      sd.keep(out);
      ++idx;
    }
    EXPECT_NE(rcs[0], 0) << b.what << ": libtorch took it";
    EXPECT_EQ(rcs[1], rcs[0]) << b.what;
  }
}

// --- the shim alone ----------------------------------------------------------

#define NEED_SHIM()                                             \
  do {                                                          \
    ASSERT_EQ(shim_only().problem, "");                         \
    ASSERT_NE(fns().shim, nullptr) << "the shim lacks " << kFn; \
  } while (0)

// Naive loops: out[m, n] = Σ_k x[m, k] * ((q[n, k] - 8) * s + z), in double.
std::vector<double> reference(const Case& c, const Inputs& in) {
  std::vector<double> out(static_cast<size_t>(c.m * c.n), 0.0);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        const int64_t g = kk / c.group;
        const double s = in.sz[(g * c.n + j) * 2], z = in.sz[(g * c.n + j) * 2 + 1];
        acc += static_cast<double>(in.x[c.x_offset + i * c.k + kk]) * ((in.q[j * c.k + kk] - 8) * s + z);
      }
      out[i * c.n + j] = acc;
    }
  }
  return out;
}

// Weights packed here for the process's capability, the shim against naive
// loops: within float32 rounding of the sums (bounded by Σ|terms|), plus the
// output's own rounding for 16-bit results.
TEST(ShimReference, Int4PackMmAgainstNaiveLoops) {
  NEED_SHIM();
  uint32_t seed = 100;
  for (Dt d : {Dt::F32, Dt::BF16, Dt::F16}) {
    for (const Case& c : kCases) {
      const Inputs in = make_inputs(c, d, capability(), seed += 5);
      Side s(shim_only().api, "shim");
      int rc = -1;
      AtenTensorHandle out = call(s, c, d, in, &rc);
      ASSERT_EQ(rc, 0) << what(c, d) << ": " << shim_only().last_error();
      const TensorDesc desc = describe(s.a, out);
      ASSERT_EQ(desc.sizes, (std::vector<int64_t>{c.m, c.n})) << what(c, d);
      EXPECT_EQ(desc.dtype, code(s.a, d)) << what(c, d);
      const auto got = decode(s.a, out, d, desc.numel);
      const auto want = reference(c, in);
      const double out_eps = d == Dt::F32 ? 0 : d == Dt::BF16 ? 1.0 / 256 : 1.0 / 2048;
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          double mag = 0;  // Σ |terms|
          for (int64_t kk = 0; kk < c.k; ++kk) {
            const int64_t g = kk / c.group;
            const double s_ = in.sz[(g * c.n + j) * 2], z = in.sz[(g * c.n + j) * 2 + 1];
            mag += std::fabs(in.x[c.x_offset + i * c.k + kk] * ((in.q[j * c.k + kk] - 8) * s_ + z));
          }
          const double w = want[i * c.n + j], tol = 4 * (c.k + 2) * 6e-8 * mag + out_eps * std::fabs(w) + 1e-30;
          ASSERT_LE(std::fabs(got[i * c.n + j] - w), tol) << what(c, d) << " at [" << i << ", " << j << "]";
        }
      }
    }
  }
}

// Dyadic inputs where every dequantized weight, product and partial sum is
// exact in float32: every capability's rounding gives the exact sum, so the
// shim must equal the naive loops exactly; any misplaced nibble shows.
TEST(ShimReference, Int4PackMmExactOnDyadicInputs) {
  NEED_SHIM();
  for (Dt d : {Dt::F32, Dt::BF16, Dt::F16}) {
    for (const Case& c : std::vector<Case>{{5, 256, 208, 64}, {4, 128, 64, 32}, {2, 512, 96, 256}, {1, 64, 16, 32}}) {
      Inputs in;
      const auto xr = nibbles(c.m * c.k, 3), qs = nibbles(c.n * c.k, 4);
      in.q = qs;
      in.w = pack(in.q, c.n, c.k, capability());
      for (int v : xr) in.x.push_back(static_cast<float>(v - 8) / 4);  // k / 4, |k| <= 8
      const int64_t g = c.k / c.group;
      in.groups = g;
      const auto e = nibbles(g * c.n, 5), zq = nibbles(g * c.n, 6);
      for (int64_t i = 0; i < g * c.n; ++i) {
        in.sz.push_back(std::ldexp(1.0f, -3 - e[i] % 4));             // 2^-3 .. 2^-6
        in.sz.push_back(static_cast<float>(zq[i] * 4 - 30) / 64.0f);  // j / 64, |j| < 32
      }
      Side s(shim_only().api, "shim");
      int rc = -1;
      AtenTensorHandle out = call(s, c, d, in, &rc);
      ASSERT_EQ(rc, 0) << what(c, d) << ": " << shim_only().last_error();
      const auto got = decode(s.a, out, d, c.m * c.n);
      const auto want = reference(c, in);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i], static_cast<float>(rounded(static_cast<float>(want[i]), d)))
            << what(c, d) << " element " << i;
      }
    }
  }
}

// Beyond libtorch's checks: calls libtorch runs past its buffers or reads
// wrongly are refused, and every refusal names the function and the argument.
TEST(ShimReference, Int4PackMmRefusalsNameTheArgument) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side s(a, "shim");
  const int32_t f32 = a.aoti_torch_dtype_float32(), u8 = a.aoti_torch_dtype_uint8(), i64 = a.aoti_torch_dtype_int64();
  AtenTensorHandle x = s.blob(std::vector<char>(3 * 64 * 4), {3, 64}, {64, 1}, f32);
  AtenTensorHandle w = s.blob(std::vector<char>(32 * 32), {32, 32}, {32, 1}, u8);
  AtenTensorHandle w3 = s.blob(std::vector<char>(32 * 32), {32, 32, 1}, {32, 1, 1}, u8);
  AtenTensorHandle g = s.blob(bytes_of(std::vector<int64_t>{32}), {}, {}, i64);
  AtenTensorHandle g16 = s.blob(bytes_of(std::vector<int64_t>{16}), {}, {}, i64);
  AtenTensorHandle sz = s.blob(std::vector<char>(2 * 32 * 2 * 4), {2, 32, 2}, {64, 2, 1}, f32);
  AtenTensorHandle sz_short = s.blob(std::vector<char>(32 * 2 * 4), {1, 32, 2}, {64, 2, 1}, f32);
  AtenTensorHandle sz_t =
      s.blob(std::vector<char>(2 * 32 * 2 * 4), {2, 32, 2}, {2, 4, 1}, f32);  // [32, 2, 2] transposed
  auto expect_fail = [&](AtenTensorHandle xx, AtenTensorHandle ww, AtenTensorHandle gg, AtenTensorHandle ss,
                         const char* arg) {
    AtenTensorHandle out = nullptr;
    EXPECT_NE(fns().shim(xx, ww, gg, ss, &out), 0) << arg;
    const std::string msg = shim_only().last_error();
    EXPECT_NE(msg.find(kFn), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("'") + arg + "'"), std::string::npos) << msg;
  };
  expect_fail(x, w, g, sz_short, "qScaleAndZeros");  // libtorch reads past the end
  expect_fail(x, w, g, sz_t, "qScaleAndZeros");      // libtorch reads it as if contiguous
  expect_fail(x, w3, g, sz, "w");                    // libtorch takes a 3-d w
  expect_fail(x, w, g16, sz, "qGroupSize");
  expect_fail(sz, w, g, sz, "X");
  expect_fail(x, x, g, sz, "w");
  expect_fail(x, w, x, sz, "qGroupSize");
  AtenTensorHandle out = nullptr;
  EXPECT_NE(fns().shim(x, w, g, sz, nullptr), 0);
  EXPECT_EQ(fns().shim(x, w, g, sz, &out), 0) << shim_only().last_error();
  s.keep(out);
}

}  // namespace
