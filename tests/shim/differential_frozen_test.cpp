// The fused ops of frozen exports and their mkldnn-layout constants
// (docs/FROZEN_EXPORTS.md, docs/SHIM.md): the same calls on libtorch 2.15
// and on aotrun's shim (Differential*: skipped without AOTRUN_LIBTORCH), and
// the shim against naive loops (ShimReference*: no libtorch).
//  - constants created with aoti_torch_create_tensor_from_blob_v2 in the
//    mkldnn layout from hand-built oneDNN blocked data and its 772-byte
//    metadata (linear AB16b64a, padded and blocked conv weights, a grouped
//    weight, a transposed-convolution weight), then used by the ops;
//  - every attr of the vocabulary on convolution, transposed convolution and
//    linear with plain weights (contiguous and channels_last inputs), the
//    binary forms (out of place, in place into `other`), and the refusals;
//  - the blocked weights are reordered once: DNNL_VERBOSE shows no reorder
//    in repeated calls.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "blocked_layout.hpp"
#include "differential.hpp"
#include "onednn_verbose.hpp"
#include "panels_run.hpp"

namespace {

using aotrun_shim_test::Blocked;
using aotrun_shim_test::conv_gemm_path_here;
using aotrun_shim_test::panels_read_blobs_in_place;
using aotrun_shim_test::panels_run;
using aotrun_shim_test::providers;
using aotrun_shim_test::shim_only;
using aotrun_shim_test::Side;
using aotrun_test::count_executed;
using aotrun_test::count_reorders;
using aotrun_test::executed_lines;

// --- the functions under test (resolved per provider) ------------------------

using ConvPw = int32_t (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const int64_t*, int64_t,
                           const int64_t*, int64_t, const int64_t*, int64_t, int64_t, const char*, const double**,
                           int64_t, const char**, AtenTensorHandle*);
using ConvBin = int32_t (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const int64_t*,
                            int64_t, const int64_t*, int64_t, const int64_t*, int64_t, int64_t, const char*, double*,
                            const char**, const double**, int64_t, const char**, AtenTensorHandle*);
using ConvT = int32_t (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const int64_t*, int64_t,
                          const int64_t*, int64_t, const int64_t*, int64_t, const int64_t*, int64_t, int64_t,
                          const char*, const double**, int64_t, const char**, AtenTensorHandle*);
using LinPw = int32_t (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const char*, const double**, int64_t,
                          const char**, AtenTensorHandle*);
using LinBin = int32_t (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const char*,
                           AtenTensorHandle*);

struct FrozenApi {
  ConvPw conv = nullptr;
  ConvBin conv_binary = nullptr, conv_binary_inplace = nullptr;
  ConvT conv_transpose = nullptr;
  LinPw linear = nullptr;
  LinBin linear_binary = nullptr;
  std::string missing;
};

FrozenApi resolve_frozen(void* h) {
  FrozenApi f;
  auto get = [&](const char* name) {
    void* p = h == nullptr ? nullptr : ::dlsym(h, name);
    if (p == nullptr && f.missing.empty()) f.missing = name;
    return p;
  };
  f.conv = reinterpret_cast<ConvPw>(get("aoti_torch_cpu_mkldnn__convolution_pointwise"));
  f.conv_binary = reinterpret_cast<ConvBin>(get("aoti_torch_cpu_mkldnn__convolution_pointwise_binary"));
  f.conv_binary_inplace = reinterpret_cast<ConvBin>(get("aoti_torch_cpu_mkldnn__convolution_pointwise_binary_"));
  f.conv_transpose = reinterpret_cast<ConvT>(get("aoti_torch_cpu_mkldnn__convolution_transpose_pointwise"));
  f.linear = reinterpret_cast<LinPw>(get("aoti_torch_cpu__linear_pointwise"));
  f.linear_binary = reinterpret_cast<LinBin>(get("aoti_torch_cpu__linear_pointwise_binary"));
  return f;
}

const FrozenApi& shim_frozen() {
  static FrozenApi f = resolve_frozen(::dlopen(AOTRUN_SHIM_LIBRARY, RTLD_NOW | RTLD_LOCAL));
  return f;
}
const FrozenApi& torch_frozen() {
  static FrozenApi f = [] {
    const char* dir = std::getenv("AOTRUN_LIBTORCH");
    const std::string path = std::string(dir == nullptr ? "" : dir) + "/libtorch_cpu.so";
    return resolve_frozen(::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD));
  }();
  return f;
}
const FrozenApi& frozen(const Side& sd) { return &sd.a == &providers().torch ? torch_frozen() : shim_frozen(); }

// --- helpers -------------------------------------------------------------------

std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>((s >> 8) & 0xffff) / 32768.0f - 1.0f);
  }
  return v;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

std::vector<int64_t> contiguous(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) st[d] = acc, acc *= s[d];
  return st;
}

// A float32 tensor of logical values `v` (row-major) laid out channels_last
// when `cl` (4-d), else contiguous.
AtenTensorHandle f32(Side& sd, const std::vector<float>& v, const std::vector<int64_t>& sizes, bool cl = false) {
  if (!cl) return sd.blob(aotrun_shim_test::bytes_of(v), sizes, contiguous(sizes), sd.a.aoti_torch_dtype_float32());
  const int64_t n = sizes[0], c = sizes[1], h = sizes[2], w = sizes[3];
  std::vector<float> nhwc(v.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) nhwc[((a * h + y) * w + x) * c + ch] = v[((a * c + ch) * h + y) * w + x];
  return sd.blob(aotrun_shim_test::bytes_of(nhwc), sizes, {h * w * c, 1, w * c, c}, sd.a.aoti_torch_dtype_float32());
}

// An mkldnn-layout constant of torch-level `sizes` from `plain` values in
// the layout `b`, as a model's load_constants creates it.
AtenTensorHandle mkldnn_constant(Side& sd, const Blocked& b, const std::vector<float>& plain,
                                 const std::vector<int64_t>& sizes, int* rc) {
  const std::vector<float> packed = b.pack(plain);
  char* data = sd.hold(aotrun_shim_test::bytes_of(packed));
  static std::vector<std::vector<uint8_t>> metas;  // alive as long as the constants
  metas.push_back(b.metadata());
  std::vector<int64_t> strides(sizes.size(), 0);
  strides[0] = 1;
  AtenTensorHandle h = nullptr;
  *rc = sd.a.aoti_torch_create_tensor_from_blob_v2(
      data, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), 0, sd.a.aoti_torch_dtype_float32(),
      sd.a.aoti_torch_device_type_cpu(), 0, &h, sd.a.aoti_torch_layout__mkldnn(), metas.back().data(),
      static_cast<int64_t>(metas.back().size()));
  return sd.keep(h);
}

// The logical values of an mkldnn constant: copied into a plain tensor by
// the shim (its data pointer is the blob's blocked bytes, as libtorch's).
std::vector<double> unpacked_values(Side& sd, AtenTensorHandle h) {
  const TensorDesc d = describe(sd.a, h);
  AtenTensorHandle plain = sd.empty(d.sizes, contiguous(d.sizes), sd.a.aoti_torch_dtype_float32());
  if (plain == nullptr || sd.a.aoti_torch_copy_(plain, h, 0) != 0) {
    ADD_FAILURE() << "copying the constant: " << shim_only().last_error();
    return {};
  }
  return values(sd.a, plain);
}

std::string compare(const std::vector<double>& x, const std::vector<double>& y, double rtol = 1.3e-6,
                    double atol = 1e-5) {
  if (x.size() != y.size()) return "sizes differ: " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) {
      return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
    }
  }
  return "";
}

using Call = std::function<AtenTensorHandle(Side&, int*)>;

// Runs `f` on both providers: same return code and, on success, the same
// sizes, strides and values (float32 assert_close tolerances).
void expect_agree(const Call& f, const std::string& what, bool strides = true) {
  Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
  int rt = -1, rs = -1;
  AtenTensorHandle ht = f(t, &rt), hs = f(s, &rs);
  ASSERT_EQ(rs, rt) << what << (rs != 0 && shim_only().last_error ? std::string(": ") + shim_only().last_error() : "");
  if (rt != 0) return;
  ASSERT_NE(ht, nullptr) << what;
  ASSERT_NE(hs, nullptr) << what;
  const TensorDesc dt = describe(t.a, ht), ds = describe(s.a, hs);
  EXPECT_EQ(ds.sizes, dt.sizes) << what;
  if (strides) {
    EXPECT_EQ(ds.strides, dt.strides) << what;
  }
  EXPECT_EQ(compare(values(s.a, hs), values(t.a, ht)), "") << what;
}

#define NEED_FROZEN()                                             \
  do {                                                            \
    NEED_LIBTORCH();                                              \
    ASSERT_EQ(torch_frozen().missing, "") << "libtorch lacks it"; \
    ASSERT_EQ(shim_frozen().missing, "") << "the shim lacks it";  \
  } while (0)

const std::vector<std::string> kAttrs = {"none",  "relu", "sigmoid",   "tanh",       "hardswish", "hardsigmoid",
                                         "swish", "gelu", "gelu_tanh", "leaky_relu", "hardtanh"};

// attr, scalars and algorithm for a vocabulary entry ("gelu_tanh": gelu with
// algorithm tanh). Pointers stay valid while `s` lives.
struct AttrArgs {
  std::string attr, algorithm;
  std::vector<double> values;
  std::vector<const double*> scalars;
  const char* alg = nullptr;
  explicit AttrArgs(const std::string& name, bool linear_placeholder = false) {
    attr = name;
    if (name == "gelu_tanh") attr = "gelu", algorithm = "tanh";
    if (name == "gelu") algorithm = "none";
    if (name == "leaky_relu") values = {0.15};
    if (name == "hardtanh") values = {-0.4, 0.6};
    if (values.empty()) {
      // placeholders, as Inductor passes them: [None] for convolutions, [-1.0] for linears
      if (linear_placeholder) values = {-1.0};
    }
    for (const double& v : values) scalars.push_back(&v);
    if (values.empty()) scalars.push_back(nullptr);
    alg = algorithm.c_str();
  }
};

// --- mkldnn-layout constants -------------------------------------------------------

TEST(DifferentialFrozen, MkldnnLinearWeightAB16b64aPaddedReadsAsLibtorch) {
  NEED_FROZEN();
  // [10, 64]: out features padded to 64, as torch packs a linear weight on AVX2.
  const Blocked b({10, 64}, {0, 1}, {{16, 1}, {64, 0}});
  const auto w = random_floats(10 * 64, 1, 0.2f), x = random_floats(3 * 64, 2), bias = random_floats(10, 3);
  for (const std::string& attr : kAttrs) {
    expect_agree(
        [&](Side& sd, int* rc) -> AtenTensorHandle {
          AtenTensorHandle wh = mkldnn_constant(sd, b, w, {10, 64}, rc);
          if (*rc != 0) return nullptr;
          int32_t layout = -1;
          EXPECT_EQ(sd.a.aoti_torch_get_layout(wh, &layout), 0);
          EXPECT_EQ(layout, sd.a.aoti_torch_layout__mkldnn()) << sd.name;
          AtenTensorHandle xh = f32(sd, x, {3, 64}), bh = f32(sd, bias, {10}), out = nullptr;
          AttrArgs a(attr, true);
          *rc = frozen(sd).linear(xh, wh, &bh, a.attr.c_str(), a.scalars.data(), static_cast<int64_t>(a.scalars.size()),
                                  &a.alg, &out);
          return sd.keep(out);
        },
        "linear mkldnn weight, attr " + attr);
  }
}

struct ConvWeightCase {
  const char* label;
  Blocked layout;
  std::vector<int64_t> sizes;  // torch-level
  std::vector<int64_t> x;
  int64_t groups;
};

std::vector<ConvWeightCase> conv_weight_cases() {
  return {
      // Ohwi8o-like, O = 20 padded to 24
      {"Ohwi8o padded", Blocked({20, 8, 3, 3}, {0, 2, 3, 1}, {{8, 0}}), {20, 8, 3, 3}, {2, 8, 9, 7}, 1},
      // OIhw-blocked with 24o (an AVX2 block), O = 48
      {"Oihw24o", Blocked({48, 6, 3, 3}, {0, 1, 2, 3}, {{24, 0}}), {48, 6, 3, 3}, {1, 6, 8, 8}, 1},
      // two blocks on I and one on O (4i16o4i-like)
      {"OIhw4i16o4i",
       Blocked({16, 16, 1, 1}, {0, 1, 2, 3}, {{4, 1}, {16, 0}, {4, 1}}),
       {16, 16, 1, 1},
       {2, 16, 5, 5},
       1},
      // grouped: [G, O/G, I/G, kh, kw] with 8o blocks, groups 4
      {"grouped gOIhw8o", Blocked({4, 4, 4, 3, 3}, {0, 1, 3, 4, 2}, {{8, 1}}, 4), {16, 4, 3, 3}, {2, 16, 6, 6}, 4},
      // depthwise 8, [8, 1, 1, 3, 3]
      {"depthwise", Blocked({8, 1, 1, 3, 3}, {1, 2, 3, 4, 0}, {{8, 0}}, 8), {8, 1, 3, 3}, {1, 8, 6, 5}, 8},
  };
}

TEST(DifferentialFrozen, MkldnnConvolutionWeightsReadAsLibtorch) {
  NEED_FROZEN();
  for (const ConvWeightCase& c : conv_weight_cases()) {
    const auto w = random_floats(numel(c.sizes), 11, 0.3f), x = random_floats(numel(c.x), 12);
    const auto bias = random_floats(c.sizes[0], 13);
    for (bool cl : {false, true}) {
      for (const char* attr : {"none", "relu", "swish"}) {
        expect_agree(
            [&](Side& sd, int* rc) -> AtenTensorHandle {
              AtenTensorHandle wh = mkldnn_constant(sd, c.layout, w, c.sizes, rc);
              if (*rc != 0) return nullptr;
              AtenTensorHandle xh = f32(sd, x, c.x, cl), bh = f32(sd, bias, {c.sizes[0]}), out = nullptr;
              const int64_t pad[] = {1, 1}, one[] = {1, 1};
              AttrArgs a(attr);
              *rc = frozen(sd).conv(xh, wh, &bh, pad, 2, one, 2, one, 2, c.groups, a.attr.c_str(), a.scalars.data(), 1,
                                    &a.alg, &out);
              return sd.keep(out);
            },
            std::string(c.label) + (cl ? " channels_last" : "") + " " + attr);
      }
    }
  }
}

TEST(DifferentialFrozen, MkldnnTransposedConvolutionWeightReadsAsLibtorch) {
  NEED_FROZEN();
  // oneDNN's order [O, I, kh, kw] (PyTorch's weight is [I, O, kh, kw]), 8o blocks.
  const Blocked b({8, 16, 4, 4}, {0, 1, 2, 3}, {{8, 0}});
  const auto w = random_floats(8 * 16 * 16, 21, 0.2f), x = random_floats(2 * 16 * 5 * 5, 22);
  const auto bias = random_floats(8, 23);
  for (bool cl : {false, true}) {
    expect_agree(
        [&](Side& sd, int* rc) -> AtenTensorHandle {
          AtenTensorHandle wh = mkldnn_constant(sd, b, w, {8, 16, 4, 4}, rc);
          if (*rc != 0) return nullptr;
          AtenTensorHandle xh = f32(sd, x, {2, 16, 5, 5}, cl), bh = f32(sd, bias, {8}), out = nullptr;
          const int64_t pad[] = {1, 1}, opad[] = {0, 0}, stride[] = {2, 2}, dil[] = {1, 1};
          AttrArgs a("hardswish");
          *rc = frozen(sd).conv_transpose(xh, wh, &bh, pad, 2, opad, 2, stride, 2, dil, 2, 1, a.attr.c_str(),
                                          a.scalars.data(), 1, &a.alg, &out);
          return sd.keep(out);
        },
        std::string("transposed mkldnn weight") + (cl ? " channels_last" : ""));
  }
}

// --- the attr vocabulary with plain weights ------------------------------------------

TEST(DifferentialFrozen, ConvolutionPointwiseVocabulary) {
  NEED_FROZEN();
  const std::vector<int64_t> xs = {2, 6, 9, 8}, ws = {10, 3, 3, 3};
  const auto x = random_floats(numel(xs), 31, 2.0f), w = random_floats(numel(ws), 32, 0.5f);
  const auto bias = random_floats(10, 33);
  for (const std::string& attr : kAttrs) {
    for (bool cl : {false, true}) {
      for (bool with_bias : {true, false}) {
        expect_agree(
            [&](Side& sd, int* rc) -> AtenTensorHandle {
              AtenTensorHandle xh = f32(sd, x, xs, cl), wh = f32(sd, w, ws), bh = f32(sd, bias, {10}), out = nullptr;
              const int64_t pad[] = {1, 0}, stride[] = {2, 1}, dil[] = {1, 2};
              AttrArgs a(attr);
              *rc = frozen(sd).conv(xh, wh, with_bias ? &bh : nullptr, pad, 2, stride, 2, dil, 2, 2, a.attr.c_str(),
                                    a.scalars.data(), static_cast<int64_t>(a.scalars.size()), &a.alg, &out);
              return sd.keep(out);
            },
            "conv " + attr + (cl ? " channels_last" : "") + (with_bias ? "" : " no bias"));
      }
    }
  }
  // A channels_last plain weight (a dynamic-batch frozen export's) with a contiguous input.
  expect_agree(
      [&](Side& sd, int* rc) -> AtenTensorHandle {
        AtenTensorHandle xh = f32(sd, x, xs), wh = f32(sd, w, {10, 3, 3, 3}, true), out = nullptr;
        const int64_t one[] = {1, 1};
        AttrArgs a("relu");
        *rc = frozen(sd).conv(xh, wh, nullptr, one, 2, one, 2, one, 2, 2, a.attr.c_str(), a.scalars.data(), 1, &a.alg,
                              &out);
        return sd.keep(out);
      },
      "conv channels_last weight");
}

TEST(DifferentialFrozen, LinearPointwiseVocabulary) {
  NEED_FROZEN();
  const auto x = random_floats(2 * 3 * 20, 41, 3.0f), w = random_floats(12 * 20, 42, 0.4f);
  const auto bias = random_floats(12, 43);
  for (const std::string& attr : kAttrs) {
    for (bool three_d : {false, true}) {
      expect_agree(
          [&](Side& sd, int* rc) -> AtenTensorHandle {
            const std::vector<int64_t> xs = three_d ? std::vector<int64_t>{2, 3, 20} : std::vector<int64_t>{6, 20};
            AtenTensorHandle xh = f32(sd, x, xs), wh = f32(sd, w, {12, 20}), bh = f32(sd, bias, {12}), out = nullptr;
            AttrArgs a(attr, true);
            *rc = frozen(sd).linear(xh, wh, three_d ? nullptr : &bh, a.attr.c_str(), a.scalars.data(),
                                    static_cast<int64_t>(a.scalars.size()), &a.alg, &out);
            return sd.keep(out);
          },
          "linear " + attr + (three_d ? " 3-d, no bias" : ""));
    }
  }
  // A transposed (column-major) weight view: weights may arrive with any strides.
  expect_agree(
      [&](Side& sd, int* rc) -> AtenTensorHandle {
        AtenTensorHandle xh = f32(sd, x, {6, 20}), out = nullptr;
        AtenTensorHandle wh =
            sd.blob(aotrun_shim_test::bytes_of(w), {12, 20}, {1, 12}, sd.a.aoti_torch_dtype_float32());
        AttrArgs a("none", true);
        *rc = frozen(sd).linear(xh, wh, nullptr, a.attr.c_str(), a.scalars.data(), 1, &a.alg, &out);
        return sd.keep(out);
      },
      "linear column-major weight");
}

TEST(DifferentialFrozen, TransposedConvolutionPointwisePlainWeights) {
  NEED_FROZEN();
  for (int64_t groups : {1, 2}) {
    for (bool cl : {false, true}) {
      const std::vector<int64_t> xs = {2, 6, 5, 4}, ws = {6, 4 / groups * groups == 4 ? 4 : 4, 3, 3};
      const auto x = random_floats(numel(xs), 51), w = random_floats(numel(ws), 52, 0.4f);
      const auto bias = random_floats(4 * groups, 53);
      for (const char* attr : {"none", "relu", "leaky_relu", "gelu"}) {
        expect_agree(
            [&](Side& sd, int* rc) -> AtenTensorHandle {
              AtenTensorHandle xh = f32(sd, x, xs, cl), wh = f32(sd, w, ws), bh = f32(sd, bias, {4 * groups});
              AtenTensorHandle out = nullptr;
              const int64_t pad[] = {1, 0}, opad[] = {1, 0}, stride[] = {2, 1}, dil[] = {1, 1};
              AttrArgs a(attr);
              *rc = frozen(sd).conv_transpose(xh, wh, &bh, pad, 2, opad, 2, stride, 2, dil, 2, groups, a.attr.c_str(),
                                              a.scalars.data(), static_cast<int64_t>(a.scalars.size()), &a.alg, &out);
              return sd.keep(out);
            },
            std::string("conv_transpose groups ") + std::to_string(groups) + (cl ? " channels_last " : " ") + attr);
      }
    }
  }
}

// --- binary forms ------------------------------------------------------------------------

TEST(DifferentialFrozen, ConvolutionBinaryOutOfPlaceAndInPlace) {
  NEED_FROZEN();
  const std::vector<int64_t> xs = {2, 4, 7, 6}, ws = {8, 4, 3, 3}, os = {2, 8, 7, 6};
  const auto x = random_floats(numel(xs), 61), w = random_floats(numel(ws), 62, 0.5f);
  const auto bias = random_floats(8, 63);
  auto other = random_floats(numel(os), 64, 1.5f);
  for (float& v : other) v += v < 0 ? -0.5f : 0.5f;  // away from 0 (div)
  const int64_t pad[] = {1, 1}, one[] = {1, 1};
  for (const char* bin : {"add", "sub", "mul", "div"}) {
    for (const char* unary : {static_cast<const char*>(nullptr), "relu"}) {
      for (bool cl : {false, true}) {
        const std::string what =
            std::string("conv binary ") + bin + (unary ? " relu" : "") + (cl ? " channels_last" : "");
        expect_agree(
            [&](Side& sd, int* rc) -> AtenTensorHandle {
              AtenTensorHandle xh = f32(sd, x, xs, cl), wh = f32(sd, w, ws), bh = f32(sd, bias, {8});
              AtenTensorHandle oh = f32(sd, other, os, cl), out = nullptr;
              double alpha = 1.0;
              const char* u = unary;
              const double* none[] = {nullptr};
              *rc = frozen(sd).conv_binary(xh, oh, wh, &bh, pad, 2, one, 2, one, 2, 1, bin, &alpha, u ? &u : nullptr,
                                           none, 1, nullptr, &out);
              return sd.keep(out);
            },
            what);
      }
    }
  }
  // In place: the result is written into other, ret0 aliases it; other in
  // the layout the convolution would give its output, or in the other one
  // (the shim's oneDNN primitive then writes other's layout).
  for (const char* unary : {static_cast<const char*>(nullptr), "relu"}) {
    for (int layouts = 0; layouts < 4; ++layouts) {
      const bool cl = (layouts & 1) != 0, other_cl = (layouts & 2) != 0;
      expect_agree(
          [&](Side& sd, int* rc) -> AtenTensorHandle {
            AtenTensorHandle xh = f32(sd, x, xs, cl), wh = f32(sd, w, ws), bh = f32(sd, bias, {8});
            AtenTensorHandle oh = f32(sd, other, os, other_cl), out = nullptr;
            double alpha = 1.0;
            const char* u = unary;
            const char* empty = "";
            const double* none[] = {nullptr};
            *rc = frozen(sd).conv_binary_inplace(oh, xh, wh, &bh, pad, 2, one, 2, one, 2, 1, "add", &alpha,
                                                 u ? &u : nullptr, none, 1, &empty, &out);
            if (*rc != 0) return nullptr;
            void *po = nullptr, *pr = nullptr;
            sd.a.aoti_torch_get_data_ptr(oh, &po);
            sd.a.aoti_torch_get_data_ptr(out, &pr);
            EXPECT_EQ(po, pr) << sd.name << ": ret0 must alias other";
            sd.keep(out);
            return oh;  // the values written into other
          },
          std::string("conv binary_ in place add") + (unary ? " relu" : "") + (cl ? " channels_last" : "") +
              (other_cl ? " into channels_last other" : " into contiguous other"));
    }
  }
}

TEST(DifferentialFrozen, LinearBinary) {
  NEED_FROZEN();
  const auto x = random_floats(5 * 16, 71), w = random_floats(24 * 16, 72, 0.4f), bias = random_floats(24, 73);
  const auto other = random_floats(5 * 24, 74, 2.0f);
  for (const char* bin : {"add", "sub", "mul", "div"}) {
    expect_agree(
        [&](Side& sd, int* rc) -> AtenTensorHandle {
          AtenTensorHandle xh = f32(sd, x, {5, 16}), wh = f32(sd, w, {24, 16}), bh = f32(sd, bias, {24});
          AtenTensorHandle oh = f32(sd, other, {5, 24}), out = nullptr;
          *rc = frozen(sd).linear_binary(xh, oh, wh, &bh, bin, &out);
          return sd.keep(out);
        },
        std::string("linear binary ") + bin);
  }
}

// What libtorch refuses, the shim refuses too, naming the op and the attr.
TEST(DifferentialFrozen, RefusalsAgree) {
  NEED_FROZEN();
  const auto x = random_floats(2 * 4 * 6 * 6, 81), w = random_floats(8 * 4 * 9, 82),
             other = random_floats(2 * 8 * 36, 83);
  const int64_t one[] = {1, 1};
  struct Refusal {
    std::string label, needle;
    std::function<int32_t(Side&, AtenTensorHandle*)> call;
  };
  auto conv_args = [&](Side& sd, AtenTensorHandle* xh, AtenTensorHandle* wh, AtenTensorHandle* oh) {
    *xh = f32(sd, x, {2, 4, 6, 6});
    *wh = f32(sd, w, {8, 4, 3, 3});
    *oh = f32(sd, other, {2, 8, 6, 6});
  };
  std::vector<Refusal> cases = {
      {"unknown attr", "'mish'",
       [&](Side& sd, AtenTensorHandle* out) {
         AtenTensorHandle xh, wh, oh;
         conv_args(sd, &xh, &wh, &oh);
         const double* none[] = {nullptr};
         const char* alg = "";
         return frozen(sd).conv(xh, wh, nullptr, one, 2, one, 2, one, 2, 1, "mish", none, 1, &alg, out);
       }},
      {"alpha 2", "alpha",
       [&](Side& sd, AtenTensorHandle* out) {
         AtenTensorHandle xh, wh, oh;
         conv_args(sd, &xh, &wh, &oh);
         double alpha = 2.0;
         const double* none[] = {nullptr};
         return frozen(sd).conv_binary(xh, oh, wh, nullptr, one, 2, one, 2, one, 2, 1, "add", &alpha, nullptr, none, 1,
                                       nullptr, out);
       }},
      {"in-place sub", "'sub'",
       [&](Side& sd, AtenTensorHandle* out) {
         AtenTensorHandle xh, wh, oh;
         conv_args(sd, &xh, &wh, &oh);
         double alpha = 1.0;
         const double* none[] = {nullptr};
         return frozen(sd).conv_binary_inplace(oh, xh, wh, nullptr, one, 2, one, 2, one, 2, 1, "sub", &alpha, nullptr,
                                               none, 1, nullptr, out);
       }},
      {"sigmoid after binary", "'sigmoid'",
       [&](Side& sd, AtenTensorHandle* out) {
         AtenTensorHandle xh, wh, oh;
         conv_args(sd, &xh, &wh, &oh);
         double alpha = 1.0;
         const char* u = "sigmoid";
         const double* none[] = {nullptr};
         return frozen(sd).conv_binary(xh, oh, wh, nullptr, one, 2, one, 2, one, 2, 1, "add", &alpha, &u, none, 1,
                                       nullptr, out);
       }},
      {"linear binary relu", "'relu'",
       [&](Side& sd, AtenTensorHandle* out) {
         AtenTensorHandle xh = f32(sd, x, {8, 36}), wh = f32(sd, w, {8, 36}), oh = f32(sd, other, {8, 8});
         return frozen(sd).linear_binary(xh, oh, wh, nullptr, "relu", out);
       }},
  };
  for (const Refusal& c : cases) {
    Side t(providers().torch, "libtorch"), s(providers().shim, "shim");
    AtenTensorHandle ot = nullptr, os = nullptr;
    EXPECT_NE(c.call(t, &ot), 0) << c.label << ": libtorch accepted it";
    t.keep(ot);
    EXPECT_NE(c.call(s, &os), 0) << c.label << ": the shim accepted it";
    s.keep(os);
    const std::string msg = shim_only().last_error();
    EXPECT_NE(msg.find("aoti_torch_cpu_"), std::string::npos) << c.label << ": " << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << c.label << ": " << msg;
  }
}

// --- the shim alone: naive references -----------------------------------------------

double unary_ref(const std::string& name, double v) {
  if (name == "none") return v;
  if (name == "relu") return v < 0 ? 0 : v;
  if (name == "sigmoid") return 1 / (1 + std::exp(-v));
  if (name == "tanh") return std::tanh(v);
  if (name == "hardswish") return v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
  if (name == "hardsigmoid") return std::min(std::max(v + 3, 0.0), 6.0) / 6;
  if (name == "swish") return v / (1 + std::exp(-v));
  if (name == "gelu") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  if (name == "gelu_tanh") return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  if (name == "leaky_relu") return v < 0 ? 0.15 * v : v;
  if (name == "hardtanh") return std::min(std::max(v, -0.4), 0.6);
  return NAN;
}

#define NEED_SHIM()                                              \
  do {                                                           \
    ASSERT_EQ(shim_only().problem, "");                          \
    ASSERT_EQ(shim_frozen().missing, "") << "the shim lacks it"; \
  } while (0)

// Each mkldnn-layout weight unpacked by the shim equals the plain values, and
// a convolution with it equals a direct loop with every attr.
TEST(ShimReferenceFrozen, MkldnnWeightsAndConvolutionMatchNaiveLoops) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  for (const ConvWeightCase& c : conv_weight_cases()) {
    Side sd(a, "shim");
    const auto w = random_floats(numel(c.sizes), 91, 0.3f), x = random_floats(numel(c.x), 92, 2.0f);
    int rc = -1;
    AtenTensorHandle wh = mkldnn_constant(sd, c.layout, w, c.sizes, &rc);
    ASSERT_EQ(rc, 0) << c.label << ": " << shim_only().last_error();
    const auto got_w = unpacked_values(sd, wh);
    ASSERT_EQ(got_w.size(), w.size()) << c.label;
    for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ(got_w[i], w[i]) << c.label << " element " << i;
    const int64_t n = c.x[0], cin = c.x[1], h = c.x[2], wd = c.x[3], o = c.sizes[0], cg = c.sizes[1];
    const int64_t kh = c.sizes[2], kw = c.sizes[3], og = o / c.groups;
    const int64_t oh = h, ow = wd;  // padding 1, 3x3 kernels
    for (const std::string& attr : kAttrs) {
      AtenTensorHandle xh = f32(sd, x, c.x), out = nullptr;
      const int64_t pad[] = {kh / 2, kw / 2}, one[] = {1, 1};
      AttrArgs args(attr);
      ASSERT_EQ(shim_frozen().conv(xh, wh, nullptr, pad, 2, one, 2, one, 2, c.groups, args.attr.c_str(),
                                   args.scalars.data(), static_cast<int64_t>(args.scalars.size()), &args.alg, &out),
                0)
          << c.label << " " << attr << ": " << shim_only().last_error();
      sd.keep(out);
      const auto got = values(a, out);
      ASSERT_EQ(got.size(), static_cast<size_t>(n * o * oh * ow));
      std::vector<double> want(got.size());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t oc = 0; oc < o; ++oc)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t xx = 0; xx < ow; ++xx) {
              double acc = 0;
              const int64_t g = oc / og;
              for (int64_t ic = 0; ic < cg; ++ic)
                for (int64_t i = 0; i < kh; ++i)
                  for (int64_t j = 0; j < kw; ++j) {
                    const int64_t iy = y - kh / 2 + i, ix = xx - kw / 2 + j;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                    acc += static_cast<double>(x[((b * cin + g * cg + ic) * h + iy) * wd + ix]) *
                           w[((oc * cg + ic) * kh + i) * kw + j];
                  }
              want[((b * o + oc) * oh + y) * ow + xx] = unary_ref(attr, acc);
            }
      EXPECT_EQ(compare(got, want, 1e-5, 1e-5), "") << c.label << " " << attr;
    }
  }
}

TEST(ShimReferenceFrozen, LinearWithMkldnnWeightAndBinaryMatchNaiveLoops) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  const Blocked b({10, 64}, {0, 1}, {{16, 1}, {64, 0}});
  const auto w = random_floats(640, 101, 0.2f), x = random_floats(3 * 64, 102, 2.0f), bias = random_floats(10, 103);
  const auto other = random_floats(30, 104);
  int rc = -1;
  AtenTensorHandle wh = mkldnn_constant(sd, b, w, {10, 64}, &rc);
  ASSERT_EQ(rc, 0) << shim_only().last_error();
  std::vector<double> lin(30);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 10; ++j) {
      double acc = bias[j];
      for (int64_t k = 0; k < 64; ++k) acc += static_cast<double>(x[i * 64 + k]) * w[j * 64 + k];
      lin[i * 10 + j] = acc;
    }
  for (const std::string& attr : kAttrs) {
    AtenTensorHandle xh = f32(sd, x, {3, 64}), bh = f32(sd, bias, {10}), out = nullptr;
    AttrArgs args(attr, true);
    ASSERT_EQ(shim_frozen().linear(xh, wh, &bh, args.attr.c_str(), args.scalars.data(),
                                   static_cast<int64_t>(args.scalars.size()), &args.alg, &out),
              0)
        << attr << ": " << shim_only().last_error();
    sd.keep(out);
    std::vector<double> want(30);
    for (size_t i = 0; i < 30; ++i) want[i] = unary_ref(attr, lin[i]);
    EXPECT_EQ(compare(values(a, out), want, 1e-5, 1e-5), "") << attr;
  }
  AtenTensorHandle xh = f32(sd, x, {3, 64}), bh = f32(sd, bias, {10}), oh = f32(sd, other, {3, 10}), out = nullptr;
  ASSERT_EQ(shim_frozen().linear_binary(xh, oh, wh, &bh, "sub", &out), 0) << shim_only().last_error();
  sd.keep(out);
  std::vector<double> want(30);
  for (size_t i = 0; i < 30; ++i) want[i] = lin[i] - other[i];
  EXPECT_EQ(compare(values(a, out), want, 1e-5, 1e-5), "");
}

// The in-place residual convolution (other = relu(conv(X) + other)) that
// the shim runs as one oneDNN primitive with a sum post-op: equal to loops
// with other in either layout, and when other is X itself (the fused path
// cannot read and write one buffer; the shim computes the convolution
// first).
TEST(ShimReferenceFrozen, ConvolutionAddsIntoOtherInPlaceAsLoops) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  const std::vector<int64_t> xs = {2, 8, 6, 5}, ws = {8, 8, 3, 3};
  const auto x = random_floats(numel(xs), 111, 2.0f), w = random_floats(numel(ws), 112, 0.3f);
  const auto bias = random_floats(8, 113), other = random_floats(numel(xs), 114, 1.5f);
  const int64_t pad[] = {1, 1}, one[] = {1, 1};
  std::vector<double> conv(x.size());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t oc = 0; oc < 8; ++oc)
      for (int64_t y = 0; y < 6; ++y)
        for (int64_t xx = 0; xx < 5; ++xx) {
          double acc = bias[oc];
          for (int64_t ic = 0; ic < 8; ++ic)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                const int64_t iy = y - 1 + i, ix = xx - 1 + j;
                if (iy < 0 || iy >= 6 || ix < 0 || ix >= 5) continue;
                acc += static_cast<double>(x[((b * 8 + ic) * 6 + iy) * 5 + ix]) * w[((oc * 8 + ic) * 3 + i) * 3 + j];
              }
          conv[((b * 8 + oc) * 6 + y) * 5 + xx] = acc;
        }
  for (const char* unary : {static_cast<const char*>(nullptr), "relu"}) {
    for (int layouts = 0; layouts < 5; ++layouts) {
      const bool cl = (layouts & 1) != 0, other_cl = (layouts & 2) != 0, aliased = layouts == 4;
      const std::string what = std::string(unary ? "relu" : "none") + (cl ? ", X channels_last" : ", X contiguous") +
                               (aliased    ? ", other is X"
                                : other_cl ? ", other channels_last"
                                           : ", other contiguous");
      Side sd(a, "shim");
      AtenTensorHandle xh = f32(sd, x, xs, cl), wh = f32(sd, w, ws), bh = f32(sd, bias, {8});
      AtenTensorHandle oh = aliased ? xh : f32(sd, other, xs, other_cl), out = nullptr;
      double alpha = 1.0;
      const char* u = unary;
      const double* none[] = {nullptr};
      ASSERT_EQ(shim_frozen().conv_binary_inplace(oh, xh, wh, &bh, pad, 2, one, 2, one, 2, 1, "add", &alpha,
                                                  u ? &u : nullptr, none, 1, nullptr, &out),
                0)
          << what << ": " << shim_only().last_error();
      sd.keep(out);
      std::vector<double> want(conv.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const double v = conv[i] + (aliased ? x[i] : other[i]);
        want[i] = unary != nullptr && v < 0 ? 0.0 : v;
      }
      EXPECT_EQ(compare(values(a, oh), want, 1e-5, 1e-5), "") << what;
      EXPECT_EQ(compare(values(a, out), want, 1e-5, 1e-5), "") << what << " (ret0)";
    }
  }
}

// The OpenMP team size of the libgomp the shim loaded: its current size and
// the setter (null where libgomp is not loaded: one team size only).
struct OmpTeam {
  using SetThreads = void (*)(int);
  SetThreads set_threads = nullptr;
  int team0 = 1;
  OmpTeam() {
    void* gomp = ::dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (gomp == nullptr) return;
    auto max_threads = reinterpret_cast<int (*)()>(::dlsym(gomp, "omp_get_max_threads"));
    set_threads = reinterpret_cast<SetThreads>(::dlsym(gomp, "omp_set_num_threads"));
    if (max_threads != nullptr) team0 = max_threads();
  }
};

// A frozen linear weight is packed for the GEMM once, at its first use
// (compute/packed_gemm.hpp), and that pack serves every later call: other
// row counts (1 to 200, fewer and more than the first call's), X a strided
// view, with and without a bias, and another OpenMP team size (packed again
// for it).
TEST(ShimReferenceFrozen, PackedLinearWeightServesEveryRowCountAndTeam) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  const int64_t n = 300, k = 256, ldx = k + 7, rows = 200;
  const Blocked b({n, k}, {0, 1}, {{16, 1}, {64, 0}});  // out features padded to 320
  const auto w = random_floats(n * k, 131, 0.1f), xbuf = random_floats(rows * ldx, 132, 2.0f);
  const auto bias = random_floats(n, 133);
  int rc = -1;
  AtenTensorHandle wh = mkldnn_constant(sd, b, w, {n, k}, &rc);
  ASSERT_EQ(rc, 0) << shim_only().last_error();
  AtenTensorHandle all = f32(sd, xbuf, {rows, ldx}), bh = f32(sd, bias, {n});
  const OmpTeam omp;
  const auto set_threads = omp.set_threads;
  const int team0 = omp.team0;
  const char* attr = "none";
  const double* placeholder[] = {nullptr};
  const char* alg = "";
  auto check = [&](int64_t m, bool with_bias, const std::string& label) {
    const int64_t sizes[] = {m, k}, strides[] = {ldx, 1};
    AtenTensorHandle xh = nullptr, out = nullptr;
    ASSERT_EQ(a.aoti_torch__reinterpret_tensor(all, 2, sizes, strides, 0, &xh), 0) << shim_only().last_error();
    sd.keep(xh);
    ASSERT_EQ(shim_frozen().linear(xh, wh, with_bias ? &bh : nullptr, attr, placeholder, 1, &alg, &out), 0)
        << label << ": " << shim_only().last_error();
    sd.keep(out);
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = with_bias ? bias[j] : 0.0;
        for (int64_t c = 0; c < k; ++c) acc += static_cast<double>(xbuf[i * ldx + c]) * w[j * k + c];
        want[i * n + j] = acc;
      }
    EXPECT_EQ(compare(values(a, out), want, 1e-5, 1e-4), "") << label;
  };
  int i = 0;
  for (int64_t m : {16, 1, 5, 40, 200, 3, 16})
    check(m, ++i % 2 == 0, "team " + std::to_string(team0) + ", M " + std::to_string(m));
  if (set_threads == nullptr) GTEST_SKIP() << "libgomp not loaded by the shim: one team size only";
  const int other = team0 == 1 ? 2 : 1;
  set_threads(other);
  for (int64_t m : {7, 64, 1}) check(m, true, "team " + std::to_string(other) + ", M " + std::to_string(m));
  set_threads(team0);
  check(33, false, "team " + std::to_string(team0) + " again, M 33");
}

// Every activation of the vocabulary over a wide range of values (the tails
// of gelu and sigmoid included), on a result large enough for oneDNN's
// vector paths (compute/eltwise_onednn.hpp), at two OpenMP team sizes: the
// linear is an identity, so the output is the activation of X itself.
TEST(ShimReferenceFrozen, ActivationsMatchNaiveLoopsAtEveryTeamSize) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  const int64_t m = 50, k = 64;
  std::vector<float> x(m * k), eye(k * k, 0.0f);
  for (int64_t i = 0; i < m * k; ++i) x[i] = -12.0f + 24.0f * static_cast<float>(i) / static_cast<float>(m * k - 1);
  for (int64_t i = 0; i < k; ++i) eye[i * k + i] = 1.0f;
  const OmpTeam omp;
  const auto set_threads = omp.set_threads;
  const int team0 = omp.team0;
  for (int team : {team0, team0 == 1 ? 2 : 1}) {
    if (set_threads == nullptr && team != team0) continue;
    if (set_threads != nullptr) set_threads(team);
    for (const std::string& attr : kAttrs) {
      AtenTensorHandle xh = f32(sd, x, {m, k}), wh = f32(sd, eye, {k, k}), out = nullptr;
      AttrArgs args(attr, true);
      ASSERT_EQ(shim_frozen().linear(xh, wh, nullptr, args.attr.c_str(), args.scalars.data(),
                                     static_cast<int64_t>(args.scalars.size()), &args.alg, &out),
                0)
          << attr << ": " << shim_only().last_error();
      sd.keep(out);
      std::vector<double> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = unary_ref(attr, x[i]);
      EXPECT_EQ(compare(values(a, out), want, 1e-5, 1e-6), "") << attr << " at team size " << team;
    }
  }
  if (set_threads != nullptr) set_threads(team0);
}

// Metadata the shim does not read is refused at creation, naming the
// constant's shape and what is unsupported.
TEST(ShimReferenceFrozen, UnsupportedMkldnnMetadataIsRefusedClearly) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  const Blocked b({10, 64}, {0, 1}, {{16, 1}, {64, 0}});
  const auto w = random_floats(640, 111);
  struct Bad {
    std::string label, needle;
    std::function<void(std::vector<uint8_t>&)> edit;
    std::vector<int64_t> sizes = {10, 64};
    int32_t dtype = -1;
    int64_t meta_size = 772;
  };
  auto put32 = [](std::vector<uint8_t>& m, size_t at, int32_t v) { std::memcpy(&m[at], &v, 4); };
  auto put64 = [](std::vector<uint8_t>& m, size_t at, int64_t v) { std::memcpy(&m[at], &v, 8); };
  std::vector<Bad> cases = {
      {"bf16 data", "data type 2", [&](std::vector<uint8_t>& m) { put32(m, 104, 2); }},
      {"not blocked", "format kind 3", [&](std::vector<uint8_t>& m) { put32(m, 312, 3); }},
      {"int8 compensation", "extra flags", [&](std::vector<uint8_t>& m) { put64(m, 640, 1); }},
      {"dims differ", "do not match", [&](std::vector<uint8_t>& m) { put64(m, 8, 11); }},
      {"too many dims", "ndims 13", [&](std::vector<uint8_t>& m) { put32(m, 4, 13); }},
      {"inner dim out of range", "inner block", [&](std::vector<uint8_t>& m) { put64(m, 520, 5); }},
      {"padding not a block multiple", "padded dim", [&](std::vector<uint8_t>& m) { put64(m, 112, 60); }},
      {"offset0", "offset0", [&](std::vector<uint8_t>& m) { put64(m, 304, 16); }},
      {"short metadata", "metadata of 768 bytes", [](std::vector<uint8_t>&) {}, {10, 64}, -1, 768},
      {"neither form", "metadata of 664 bytes", [](std::vector<uint8_t>&) {}, {10, 64}, -1, 664},
      {"other sizes", "do not match", [](std::vector<uint8_t>&) {}, {10, 32}},
      {"float64 constant", "dtype", [](std::vector<uint8_t>&) {}, {10, 64}, 7},
  };
  for (const Bad& c : cases) {
    std::vector<uint8_t> meta = b.metadata();
    c.edit(meta);
    std::vector<float> packed = b.pack(w);
    const std::vector<int64_t> strides(c.sizes.size(), 0);
    AtenTensorHandle h = nullptr;
    const int32_t dtype = c.dtype < 0 ? a.aoti_torch_dtype_float32() : c.dtype;
    EXPECT_NE(a.aoti_torch_create_tensor_from_blob_v2(
                  packed.data(), static_cast<int64_t>(c.sizes.size()), c.sizes.data(), strides.data(), 0, dtype,
                  a.aoti_torch_device_type_cpu(), 0, &h, a.aoti_torch_layout__mkldnn(), meta.data(), c.meta_size),
              0)
        << c.label;
    const std::string msg = shim_only().last_error();
    EXPECT_NE(msg.find("aoti_torch_create_tensor_from_blob_v2: mkldnn constant of shape [10, "), std::string::npos)
        << c.label << ": " << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << c.label << ": " << msg;
    if (h != nullptr) a.aoti_torch_delete_tensor_object(h);
  }
}

// torch 2.6 writes 668 bytes of metadata (its oneDNN's 664-byte memory
// descriptor, then the groups): the same fields at the same offsets, so the
// same weight reads the same, whatever its 4 bytes of padding at 660 hold
// (torch leaves them uninitialised); its extra flags at 640 are refused as in
// the 772-byte form. compat/aoti/fixtures/torch-2.6.0/frozen_cnn.pt2 is a
// real one, run in every mode by the corpus suites.
TEST(ShimReferenceFrozen, Torch26MetadataFormReadsAsThe772ByteOne) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  struct Case {
    const char* label;
    Blocked layout;
    std::vector<int64_t> sizes;
    int32_t groups;
  };
  const std::vector<Case> cases = {
      {"linear AB16b64a", Blocked({10, 64}, {0, 1}, {{16, 1}, {64, 0}}), {10, 64}, 1},
      {"grouped conv gOIhw8o", Blocked({4, 4, 4, 3, 3}, {0, 1, 3, 4, 2}, {{8, 1}}, 4), {16, 4, 3, 3}, 4},
  };
  for (const Case& c : cases) {
    const auto w = random_floats(numel(c.sizes), 141, 0.3f);
    const std::vector<uint8_t> m772 = c.layout.metadata();
    std::vector<uint8_t> m668(m772.begin(), m772.begin() + 664);
    m668.resize(668);
    std::memcpy(&m668[664], &c.groups, 4);
    m668[660] = 1;  // padding, as torch 2.6 leaves it
    const std::vector<float> packed = c.layout.pack(w);
    const std::vector<int64_t> strides(c.sizes.size(), 0);
    AtenTensorHandle h = nullptr;
    ASSERT_EQ(a.aoti_torch_create_tensor_from_blob_v2(
                  const_cast<float*>(packed.data()), static_cast<int64_t>(c.sizes.size()), c.sizes.data(),
                  strides.data(), 0, a.aoti_torch_dtype_float32(), a.aoti_torch_device_type_cpu(), 0, &h,
                  a.aoti_torch_layout__mkldnn(), m668.data(), 668),
              0)
        << c.label << ": " << shim_only().last_error();
    sd.keep(h);
    const auto got = unpacked_values(sd, h);
    ASSERT_EQ(got.size(), w.size()) << c.label;
    for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ(got[i], w[i]) << c.label << " element " << i;
    std::vector<uint8_t> flagged = m668;
    const int64_t one = 1;
    std::memcpy(&flagged[640], &one, 8);
    AtenTensorHandle bad = nullptr;
    EXPECT_NE(a.aoti_torch_create_tensor_from_blob_v2(
                  const_cast<float*>(packed.data()), static_cast<int64_t>(c.sizes.size()), c.sizes.data(),
                  strides.data(), 0, a.aoti_torch_dtype_float32(), a.aoti_torch_device_type_cpu(), 0, &bad,
                  a.aoti_torch_layout__mkldnn(), flagged.data(), 668),
              0)
        << c.label << ": extra flags accepted";
    EXPECT_NE(std::string(shim_only().last_error()).find("extra flags"), std::string::npos) << shim_only().last_error();
    if (bad != nullptr) a.aoti_torch_delete_tensor_object(bad);
  }
}

// --- packed once ------------------------------------------------------------------------------

// Whether oneDNN runs its AVX-512 core kernels in this process: the CPU
// has them and DNNL_MAX_CPU_ISA, when set, does not cap below them (its
// values as oneDNN 2.6 reads them).
bool onednn_runs_avx512_core() {
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))) {
    return false;
  }
  const char* cap = std::getenv("DNNL_MAX_CPU_ISA");
  if (cap == nullptr) return true;
  std::string c(cap);
  for (char& ch : c) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return c == "ALL" || c.rfind("AVX512_CORE", 0) == 0;
}

// A 2-d convolution as loops in double: x [n, c, h, wd] and w [o, c, k, k]
// row-major, bias [o], square padding, stride and dilation; the output
// [n, o, g.oh(), g.ow()] row-major.
struct ConvGeometry {
  int64_t n, c, o, k, h, wd, pad, stride, dil;
  int64_t oh() const { return (h + 2 * pad - dil * (k - 1) - 1) / stride + 1; }
  int64_t ow() const { return (wd + 2 * pad - dil * (k - 1) - 1) / stride + 1; }
};

std::vector<double> conv_loops(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                               const std::vector<float>& bias) {
  const int64_t oh = g.oh(), ow = g.ow(), c = g.c, k = g.k, h = g.h, wd = g.wd;
  std::vector<double> conv(static_cast<size_t>(g.n * g.o * oh * ow));
  for (int64_t bi = 0; bi < g.n; ++bi)
    for (int64_t oc = 0; oc < g.o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias[oc];
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t i = 0; i < k; ++i)
              for (int64_t j = 0; j < k; ++j) {
                const int64_t iy = y * g.stride - g.pad + i * g.dil, ix = xx * g.stride - g.pad + j * g.dil;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += static_cast<double>(x[((bi * c + ic) * h + iy) * wd + ix]) * w[((oc * c + ic) * k + i) * k + j];
              }
          conv[((bi * g.o + oc) * oh + y) * ow + xx] = acc;
        }
  return conv;
}

// The in-place residual sum, other = relu(conv + other) with `other`
// channels-last and random (seed), against `conv` (conv_loops' result).
void expect_relu_sum_in_place(Side& sd, const ShimApi& a, const ConvGeometry& g, AtenTensorHandle xh,
                              AtenTensorHandle wh, AtenTensorHandle bh, const std::vector<double>& conv, uint32_t seed,
                              const std::string& what) {
  const int64_t pad[] = {g.pad, g.pad}, stride[] = {g.stride, g.stride}, dil[] = {g.dil, g.dil};
  const double* none[] = {nullptr};
  const auto other = random_floats(g.n * g.o * g.oh() * g.ow(), seed);
  AtenTensorHandle oh = f32(sd, other, {g.n, g.o, g.oh(), g.ow()}, true), out = nullptr;
  double alpha = 1.0;
  const char* relu = "relu";
  ASSERT_EQ(shim_frozen().conv_binary_inplace(oh, xh, wh, &bh, pad, 2, stride, 2, dil, 2, 1, "add", &alpha, &relu, none,
                                              1, nullptr, &out),
            0)
      << what << " in place: " << shim_only().last_error();
  sd.keep(out);
  std::vector<double> want(conv.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(conv[i] + other[i], 0.0);
  EXPECT_EQ(compare(values(a, oh), want, 1e-4, 1e-4), "") << what << " in place";
}

// A frozen convolution with many input channels runs as im2col + a GEMM on
// its weight packed once (convolution_gemm.cpp) where oneDNN runs below
// AVX-512, and as oneDNN's convolution where it has AVX-512 core (its
// brgconv is then faster): equal to loops either way, with stride,
// padding, dilation, bias, an activation and the in-place residual sum.
// Registered twice (tests/shim/CMakeLists.txt): as the CPU allows, and
// with oneDNN capped to AVX2 (isa_avx2.*), so an AVX-512 host proves the
// packed path too.
TEST(ShimReferenceFrozen, WideConvolutionsRunAsPackedGemmAsLoops) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  const int64_t n = 2, c = 256, o = 24, k = 3;
  const Blocked b({o, c, k, k}, {0, 1, 2, 3}, {{8, 0}});
  const auto w = random_floats(o * c * k * k, 131, 0.1f);
  const auto bias = random_floats(o, 133);
  int rc = -1;
  AtenTensorHandle wh = mkldnn_constant(sd, b, w, {o, c, k, k}, &rc);
  ASSERT_EQ(rc, 0) << shim_only().last_error();
  struct Geo {
    int64_t pad, stride, dil, h, wd;
  };
  // The last: 1,200 output pixels, more than one chunk of the unfolded input.
  for (const Geo g : {Geo{1, 1, 1, 6, 5}, Geo{0, 2, 1, 6, 5}, Geo{2, 1, 2, 6, 5}, Geo{1, 1, 1, 20, 30}}) {
    const int64_t h = g.h, wd = g.wd;
    const auto x = random_floats(n * c * h * wd, 132);
    const ConvGeometry geo{n, c, o, k, h, wd, g.pad, g.stride, g.dil};
    const std::vector<double> conv = conv_loops(geo, x, w, bias);
    const std::string what = "pad " + std::to_string(g.pad) + " stride " + std::to_string(g.stride) + " dilation " +
                             std::to_string(g.dil) + " image " + std::to_string(h) + "x" + std::to_string(wd);
    const int64_t pad[] = {g.pad, g.pad}, stride[] = {g.stride, g.stride}, dil[] = {g.dil, g.dil};
    const double* none[] = {nullptr};
    const char* alg = "";
    AtenTensorHandle xh = f32(sd, x, {n, c, h, wd}, true), bh = f32(sd, bias, {o});
    for (const char* attr : {"none", "relu"}) {
      AtenTensorHandle out = nullptr;
      const int convs = count_executed(",convolution,", [&] {
        ASSERT_EQ(shim_frozen().conv(xh, wh, &bh, pad, 2, stride, 2, dil, 2, 1, attr, none, 1, &alg, &out), 0)
            << what << " " << attr << ": " << shim_only().last_error();
      });
      ASSERT_NE(out, nullptr);
      sd.keep(out);
      std::vector<double> want(conv.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = std::string(attr) == "relu" ? std::max(conv[i], 0.0) : conv[i];
      EXPECT_EQ(compare(values(a, out), want, 1e-4, 1e-4), "") << what << " " << attr;
      const char* off = std::getenv("AOTRUN_SHIM_PACKED_GEMM");
      const bool packed =
          !onednn_runs_avx512_core() && conv_gemm_path_here() && !(off != nullptr && std::string(off) == "0");
      if (packed && convs > 0) {
        ADD_FAILURE() << what << " " << attr << ": ran as " << convs << " oneDNN convolution(s), not as a packed GEMM";
      }
      if (!packed && convs == 0) ADD_FAILURE() << what << " " << attr << ": ran as no oneDNN convolution";
    }
    expect_relu_sum_in_place(sd, a, geo, xh, wh, bh, conv, 134, what);
  }
}

// On one thread, where the shim's panels run and oneDNN has no AVX-512
// core, a frozen convolution of 64 to 128 input channels runs as groups of
// 64 output pixels unfolded and multiplied on panels (convolution_gemm.cpp);
// at two threads, below 128 channels, as oneDNN's direct convolution.
// Equal to loops either way: several row groups and an uneven last one,
// stride, padding, bias, every activation of the vocabulary and the
// in-place residual sum.
TEST(ShimReferenceFrozen, MidWidthConvolutionsOnOneThreadRunOnPanelsAsLoops) {
  NEED_SHIM();
  const OmpTeam team;
  if (team.set_threads == nullptr) GTEST_SKIP() << "libgomp not loaded by the shim: the team size cannot be set";
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  struct Case {
    int64_t c, o, pad, stride, h, wd;
  };
  // 2 x 9 x 11 = 198 output pixels: four groups, the last of 49 rows.
  for (const Case cs : {Case{64, 40, 1, 1, 9, 11}, Case{128, 24, 1, 2, 13, 9}, Case{96, 16, 0, 1, 12, 10}}) {
    const int64_t n = 2, k = 3, c = cs.c, o = cs.o, h = cs.h, wd = cs.wd;
    const Blocked b({o, c, k, k}, {0, 1, 2, 3}, {{8, 0}});
    const auto w = random_floats(o * c * k * k, 141, 0.1f);
    const auto bias = random_floats(o, 143);
    const auto x = random_floats(n * c * h * wd, 142);
    int rc = -1;
    AtenTensorHandle wh = mkldnn_constant(sd, b, w, {o, c, k, k}, &rc);
    ASSERT_EQ(rc, 0) << shim_only().last_error();
    const ConvGeometry geo{n, c, o, k, h, wd, cs.pad, cs.stride, 1};
    const std::vector<double> conv = conv_loops(geo, x, w, bias);
    const int64_t pad[] = {cs.pad, cs.pad}, stride[] = {cs.stride, cs.stride}, dil[] = {1, 1};
    AtenTensorHandle xh = f32(sd, x, {n, c, h, wd}, true), bh = f32(sd, bias, {o});
    for (const int threads : {1, 2}) {
      team.set_threads(threads);
      const std::string what = std::to_string(c) + " channels, stride " + std::to_string(cs.stride) + ", " +
                               std::to_string(threads) + " thread(s)";
      const bool on_panels = threads == 1 && panels_run() && !onednn_runs_avx512_core() && conv_gemm_path_here();
      // Every activation of the vocabulary (applied to each row group's
      // rows on panels).
      for (const std::string& attr : kAttrs) {
        AttrArgs args(attr);
        AtenTensorHandle out = nullptr;
        const int convs = count_executed(",convolution,", [&] {
          ASSERT_EQ(shim_frozen().conv(xh, wh, &bh, pad, 2, stride, 2, dil, 2, 1, args.attr.c_str(),
                                       args.scalars.data(), static_cast<int64_t>(args.scalars.size()), &args.alg, &out),
                    0)
              << what << " " << attr << ": " << shim_only().last_error();
        });
        ASSERT_NE(out, nullptr);
        sd.keep(out);
        std::vector<double> want(conv.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = unary_ref(attr, conv[i]);
        EXPECT_EQ(compare(values(a, out), want, 1e-4, 1e-4), "") << what << " " << attr;
        // count_executed is -1 where oneDNN's verbose lines cannot be read
        if (on_panels && convs > 0) ADD_FAILURE() << what << " " << attr << ": ran as oneDNN's convolution";
        // (128 channels at this small size run as oneDNN's packed GEMM at
        // any team size where the path runs: the older rule of
        // convolution_gemm.cpp)
        if (!on_panels && (c < 128 || !conv_gemm_path_here()) && convs == 0) {
          ADD_FAILURE() << what << " " << attr << ": ran as no convolution";
        }
      }
      expect_relu_sum_in_place(sd, a, geo, xh, wh, bh, conv, 144, what);
    }
    team.set_threads(team.team0);
  }
}

// An mkldnn constant is not unpacked when created (its data pointer is the
// blob's, as libtorch reports it); its first use reads the blob once and
// reorders it into the convolution primitive's layout, kept; later calls
// reorder nothing. (A plain weight is reordered into the primitive's layout
// on every call, as SHIM.md says: the control.)
TEST(ShimReferenceFrozen, MkldnnWeightsAreReorderedOnceNotPerCall) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  Side sd(a, "shim");
  const Blocked b({32, 16, 3, 3}, {0, 2, 3, 1}, {{8, 0}});
  const auto w = random_floats(32 * 16 * 9, 121, 0.2f), x = random_floats(2 * 16 * 12 * 12, 122);
  AtenTensorHandle wh = nullptr;
  int rc = -1;
  const int at_creation = count_reorders([&] { wh = mkldnn_constant(sd, b, w, {32, 16, 3, 3}, &rc); });
  ASSERT_EQ(rc, 0) << shim_only().last_error();
  if (at_creation < 0) GTEST_SKIP() << "libdnnl.so.2 is not loaded by the shim";
  EXPECT_EQ(at_creation, 0) << "the blob is unpacked only when a kernel needs it";
  void* reported = nullptr;
  ASSERT_EQ(a.aoti_torch_get_data_ptr(wh, &reported), 0);
  const std::vector<float> blob = b.pack(w);
  ASSERT_NE(reported, nullptr);
  EXPECT_EQ(std::memcmp(reported, blob.data(), blob.size() * sizeof(float)), 0)
      << "aoti_torch_get_data_ptr reports the blocked bytes, as libtorch does";
  AtenTensorHandle xh = f32(sd, x, {2, 16, 12, 12}, true), plain = f32(sd, w, {32, 16, 3, 3});
  const int64_t one[] = {1, 1};
  const double* none[] = {nullptr};
  const char* alg = "";
  auto conv = [&](AtenTensorHandle weight) {
    AtenTensorHandle out = nullptr;
    ASSERT_EQ(shim_frozen().conv(xh, weight, nullptr, one, 2, one, 2, one, 2, 1, "relu", none, 1, &alg, &out), 0)
        << shim_only().last_error();
    a.aoti_torch_delete_tensor_object(out);
  };
  const int first = count_reorders([&] { conv(wh); });
  EXPECT_LE(first, 2) << "the first call reads the blob once and packs it for the primitive at most once";
  const int later = count_reorders([&] {
    for (int i = 0; i < 5; ++i) conv(wh);
  });
  EXPECT_EQ(later, 0) << "no reorder in 5 later calls with the frozen weight";
  const int plain_calls = count_reorders([&] {
    for (int i = 0; i < 5; ++i) conv(plain);
  });
  std::printf("reorders: %d at creation, %d in the first call, %d in 5 later calls; plain weight: %d in 5 calls\n",
              at_creation, first, later, plain_calls);
  if (first == 2) {
    EXPECT_EQ(plain_calls, 5) << "the control: a plain weight is reordered on every call";
  }
}

// oneDNN's name of a blocked layout ("Acdb64a": dims a, c, d, b outermost
// first, then a block of 64 of dim a innermost) as a Blocked over `dims`;
// false for a name this does not read.
bool blocked_from_tag(const std::string& tag, const std::vector<int64_t>& dims, Blocked* out) {
  std::vector<int> outer;
  std::vector<std::pair<int64_t, int>> blocks;
  size_t i = 0;
  for (; i < tag.size() && std::isalpha(static_cast<unsigned char>(tag[i])); ++i) {
    outer.push_back(std::tolower(static_cast<unsigned char>(tag[i])) - 'a');
  }
  while (i < tag.size()) {
    size_t j = i;
    while (j < tag.size() && std::isdigit(static_cast<unsigned char>(tag[j]))) ++j;
    if (j == i || j >= tag.size() || !std::islower(static_cast<unsigned char>(tag[j]))) return false;
    blocks.emplace_back(std::stoll(tag.substr(i, j - i)), tag[j] - 'a');
    i = j + 1;
  }
  if (outer.size() != dims.size()) return false;
  *out = Blocked(dims, outer, blocks);
  return true;
}

// A frozen weight the export packed in exactly the layout the convolution
// primitive wants (torch's oneDNN chose it for the same geometry on the
// same CPU, as a real export's were) is read where the model keeps it: the
// first call runs no reorder at all (no plain copy, no packed copy), and
// gives the same bits as the same weight in another layout; the residual
// form adding into `other` in place too (its check that `other` does not
// overlap the weight makes no plain copy). A plain and a depthwise weight
// (whose blob has the groups as a dim of their own).
TEST(ShimReferenceFrozen, MkldnnWeightInThePrimitivesLayoutIsReadInPlace) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  struct Case {
    const char* label;
    std::vector<int64_t> sizes, blob_dims;  // torch's [O, I/g, kh, kw]; oneDNN's ([g, O/g, I/g, kh, kw] if grouped)
    int64_t groups, cin;
  };
  for (const Case& c : {Case{"plain", {64, 16, 3, 3}, {64, 16, 3, 3}, 1, 16},
                        Case{"depthwise", {32, 1, 3, 3}, {32, 1, 1, 3, 3}, 32, 32}}) {
    SCOPED_TRACE(c.label);
    Side sd(a, "shim");
    const int64_t o = c.sizes[0];
    const auto w = random_floats(numel(c.sizes), 141, 0.2f), x = random_floats(2 * c.cin * 12 * 12, 142);
    AtenTensorHandle xh = f32(sd, x, {2, c.cin, 12, 12}, true);
    const int64_t one[] = {1, 1};
    const double* none[] = {nullptr};
    const char* alg = "";
    auto conv = [&](AtenTensorHandle weight) {
      AtenTensorHandle out = nullptr;
      EXPECT_EQ(shim_frozen().conv(xh, weight, nullptr, one, 2, one, 2, one, 2, c.groups, "relu", none, 1, &alg, &out),
                0)
          << shim_only().last_error();
      return sd.keep(out);
    };
    // Which layout the primitive wants here, from the first call with the
    // weight in another one (plain order, a block of 8 on the last dim but
    // two).
    int rc = -1;
    std::vector<int> plain_order(c.blob_dims.size());
    for (size_t d = 0; d < plain_order.size(); ++d) plain_order[d] = static_cast<int>(d);
    const Blocked other_layout(c.blob_dims, plain_order, {{8, static_cast<int>(c.blob_dims.size()) - 4}},
                               static_cast<int32_t>(c.groups));
    AtenTensorHandle other = mkldnn_constant(sd, other_layout, w, c.sizes, &rc);
    ASSERT_EQ(rc, 0) << shim_only().last_error();
    std::vector<std::string> lines;
    AtenTensorHandle want = nullptr;
    if (!executed_lines([&] { want = conv(other); }, &lines)) GTEST_SKIP() << "libdnnl.so.2 is not loaded by the shim";
    std::string tag;
    for (const std::string& l : lines) {
      const size_t at = l.find("wei_f32:");
      if (l.find(",convolution,") == std::string::npos || at == std::string::npos) continue;
      const size_t begin = l.find("blocked:", at), end = begin == std::string::npos ? begin : l.find(':', begin + 8);
      if (end != std::string::npos) tag = l.substr(begin + 8, end - begin - 8);
    }
    ASSERT_FALSE(tag.empty()) << "no convolution with a blocked weight among oneDNN's " << lines.size() << " lines";
    Blocked chosen(c.blob_dims, plain_order, {});
    ASSERT_TRUE(blocked_from_tag(tag, c.blob_dims, &chosen)) << tag;
    chosen.groups = static_cast<int32_t>(c.groups);
    if (chosen.blocks.empty()) {
      std::printf("%s: the primitive reads a plain weight (%s) on this CPU\n", c.label, tag.c_str());
      continue;
    }
    AtenTensorHandle in_place = mkldnn_constant(sd, chosen, w, c.sizes, &rc);
    ASSERT_EQ(rc, 0) << shim_only().last_error();
    AtenTensorHandle got = nullptr;
    const int first = count_reorders([&] { got = conv(in_place); });
    std::printf("%s: the primitive wants %s; reorders in the first call with the weight in it: %d\n", c.label,
                tag.c_str(), first);
    EXPECT_EQ(first, 0) << "a weight already in the primitive's layout (" << tag << ") is not reordered";
    const auto g = values(a, got), e = values(a, want);
    ASSERT_EQ(g.size(), e.size());
    for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], e[i]) << "element " << i;

    AtenTensorHandle fresh = mkldnn_constant(sd, chosen, w, c.sizes, &rc);  // nothing derived from it yet
    ASSERT_EQ(rc, 0) << shim_only().last_error();
    const auto residual = random_floats(2 * o * 12 * 12, 143);
    AtenTensorHandle oh = f32(sd, residual, {2, o, 12, 12}, true), out = nullptr;
    double alpha = 1.0;
    const char* relu = "relu";
    const int residual_reorders = count_reorders([&] {
      ASSERT_EQ(shim_frozen().conv_binary_inplace(oh, xh, fresh, nullptr, one, 2, one, 2, one, 2, c.groups, "add",
                                                  &alpha, &relu, none, 1, nullptr, &out),
                0)
          << shim_only().last_error();
    });
    sd.keep(out);
    EXPECT_EQ(residual_reorders, 0) << "the in-place residual form reorders nothing either";
    const auto r = values(a, out);
    ASSERT_EQ(r.size(), e.size());
    for (size_t i = 0; i < r.size(); ++i) {
      // relu(conv + residual) against relu(conv) above: where conv > 0 the
      // sum is conv + residual (the primitive's sum: float32 tolerance).
      if (e[i] > 0.0) {
        EXPECT_NEAR(r[i], std::max(0.0, e[i] + residual[i]), 1e-5 + 1.3e-6 * std::fabs(e[i])) << i;
      }
    }
  }
}

// A frozen linear weight whose blob already holds the GEMM's panel rows
// (oneDNN's AB16b64a: blocks of 64 output features, one row of 64 per
// input feature; what torch packs on AVX-512 and AVX2 CPUs) is read where
// the model keeps it where panels run with AVX-512, with no packed copy
// beside it (compute/packed_gemm.cpp, mkldnn_blob.hpp's blob_as_panels).
// Its results have the same bits as the same weight in a layout that is
// packed (AB8b8a), for row counts below, at and above a register block,
// with the out-features tail of a block and padded input features.
// Writing the blob afterwards is outside the contract; here it shows which
// path read what: the in-place weight's next result follows the new
// bytes, the packed one's does not. With AVX2 (the isa_avx2 run) both
// are packed: same bits, and both keep their copies.
TEST(ShimReferenceFrozen, LinearWeightInPanelRowsIsReadInPlace) {
  NEED_SHIM();
  const ShimApi& a = shim_only().api;
  const bool panels = panels_run();
  struct Case {
    int64_t n, k;
  };
  for (const Case c : {Case{300, 256}, Case{70, 37}, Case{10, 64}}) {
    const std::string shape = std::to_string(c.n) + "x" + std::to_string(c.k);
    SCOPED_TRACE(shape);
    Side sd(a, "shim");
    const Blocked in_rows({c.n, c.k}, {0, 1}, {{16, 1}, {64, 0}}), packed({c.n, c.k}, {0, 1}, {{8, 1}, {8, 0}});
    const auto w = random_floats(c.n * c.k, 151, 0.2f), x = random_floats(40 * c.k, 152, 2.0f);
    int rc = -1;
    AtenTensorHandle wr = mkldnn_constant(sd, in_rows, w, {c.n, c.k}, &rc);
    ASSERT_EQ(rc, 0) << shim_only().last_error();
    AtenTensorHandle wp = mkldnn_constant(sd, packed, w, {c.n, c.k}, &rc);
    ASSERT_EQ(rc, 0) << shim_only().last_error();
    const char* none = "none";
    const double* placeholder[] = {nullptr};
    const char* alg = "";
    auto linear = [&](AtenTensorHandle weight, int64_t m) {
      AtenTensorHandle xh = f32(sd, std::vector<float>(x.begin(), x.begin() + m * c.k), {m, c.k}), out = nullptr;
      EXPECT_EQ(shim_frozen().linear(xh, weight, nullptr, none, placeholder, 1, &alg, &out), 0)
          << shim_only().last_error();
      return values(a, sd.keep(out));
    };
    for (int64_t m : {1, 7, 40}) {
      const auto got = linear(wr, m), want = linear(wp, m);
      ASSERT_EQ(got.size(), want.size());
      std::vector<double> loops(static_cast<size_t>(m * c.n));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < c.k; ++p) acc += static_cast<double>(x[i * c.k + p]) * w[j * c.k + p];
          loops[i * c.n + j] = acc;
        }
      EXPECT_EQ(compare(got, loops, 1e-5, 1e-5), "") << "M " << m;
      if (!panels) continue;  // oneDNN's packing: its own order of sums
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "M " << m << ", element " << i;
    }
    if (!panels) {
      std::printf("%s: the shim's panels are off here (no AVX2, or capped): oneDNN packs both\n", shape.c_str());
      continue;
    }
    const bool in_place = panels_read_blobs_in_place();
    if (!in_place) std::printf("%s: AVX2 panels: the blob in panel rows is packed too\n", shape.c_str());
    const auto ref = linear(wr, 7);
    // Negate both blobs where the model keeps them.
    for (AtenTensorHandle h : {wr, wp}) {
      void* blob = nullptr;
      ASSERT_EQ(a.aoti_torch_get_data_ptr(h, &blob), 0);
      const Blocked& b = h == wr ? in_rows : packed;
      for (int64_t e = 0; e < b.total; ++e) static_cast<float*>(blob)[e] = -static_cast<float*>(blob)[e];
    }
    const auto rows = linear(wr, 7), kept = linear(wp, 7);
    for (size_t i = 0; i < ref.size(); ++i) {
      if (in_place) {
        ASSERT_EQ(rows[i], -ref[i]) << "the in-place weight's result follows its blob, element " << i;
      } else {
        ASSERT_EQ(rows[i], ref[i]) << "the weight packed from panel rows keeps its copy, element " << i;
      }
      ASSERT_EQ(kept[i], ref[i]) << "the packed weight keeps its copy, element " << i;
    }
  }
}

}  // namespace
