// The elementwise post-ops of the fused mkldnn ops a frozen export calls
// (mkldnn_ops.cpp): the unary "attr" vocabulary of Inductor's mkldnn fusion
// passes and the binary ones, applied in float32 after the convolution or
// GEMM has written its result.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "compute/eltwise_onednn.hpp"
#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// scalars[i] when given (a Scalar?[] list: each pointer may be null).
double scalar_at(const char* op, const char* arg, const double** scalars, int64_t n, int64_t i, const char* attr) {
  if (scalars == nullptr || n <= i || scalars[i] == nullptr) {
    fail_arg(op, arg, std::string("must hold ") + std::to_string(i + 1) + " value(s) for attr '" + attr + "'");
  }
  return *scalars[i];
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// min(max(v, 0), 6) as fmin/fmax give it (NaN -> 0), without their libm
// calls, so that the loops below vectorize.
float clamp6(float v) {
  v = v > 0.0f ? v : 0.0f;
  return v < 6.0f ? v : 6.0f;
}

// The cheap activations, each written once: the per-element switch and the
// per-tensor vector loops below both call them.
float relu(float x) { return x < 0.0f ? 0.0f : x; }
float hardswish(float x) { return x * clamp6(x + 3.0f) / 6.0f; }
float hardsigmoid(float x) { return clamp6(x + 3.0f) / 6.0f; }
float hardtanh(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// Calls f(i0, i1, i2) with the element offsets of three views of `sizes`
// (strides per view), innermost dim fastest.
template <typename F>
void each3(const std::vector<int64_t>& sizes, const std::vector<int64_t>& s0, const std::vector<int64_t>& s1,
           const std::vector<int64_t>& s2, F f) {
  const size_t nd = sizes.size();
  for (int64_t n : sizes) {
    if (n == 0) return;
  }
  if (nd == 0) {
    f(0, 0, 0);
    return;
  }
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = sizes[nd - 1], a = s0[nd - 1], b = s1[nd - 1], c = s2[nd - 1];
  int64_t o0 = 0, o1 = 0, o2 = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(o0 + i * a, o1 + i * b, o2 + i * c);
    size_t d = nd - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++idx[d];
      o0 += s0[d];
      o1 += s1[d];
      o2 += s2[d];
      if (idx[d] < sizes[d]) break;
      o0 -= s0[d] * sizes[d];
      o1 -= s1[d] * sizes[d];
      o2 -= s2[d] * sizes[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

Unary parse_unary(const char* op, const char* arg, const char* attr, const double** scalars, int64_t scalars_len,
                  const char* algorithm) {
  if (attr == nullptr) fail_arg(op, arg, "is null");
  const std::string a = attr;
  Unary u;
  if (a == "none") {
    u.kind = Unary::kNone;
  } else if (a == "relu") {
    u.kind = Unary::kRelu;
  } else if (a == "sigmoid") {
    u.kind = Unary::kSigmoid;
  } else if (a == "tanh") {
    u.kind = Unary::kTanh;
  } else if (a == "hardswish") {
    u.kind = Unary::kHardswish;
  } else if (a == "hardsigmoid") {
    u.kind = Unary::kHardsigmoid;
  } else if (a == "swish" || a == "silu") {
    u.kind = Unary::kSwish;
  } else if (a == "gelu") {
    const std::string alg = algorithm == nullptr ? "none" : algorithm;
    if (alg == "none" || alg.empty()) {
      u.kind = Unary::kGeluErf;
    } else if (alg == "tanh") {
      u.kind = Unary::kGeluTanh;
    } else {
      fail_arg(op, "algorithm", "'" + alg + "' is not supported for attr 'gelu' (only 'none' and 'tanh')");
    }
  } else if (a == "leaky_relu") {
    u.kind = Unary::kLeakyRelu;
    u.a = static_cast<float>(scalar_at(op, "scalars", scalars, scalars_len, 0, attr));
  } else if (a == "hardtanh") {
    u.kind = Unary::kHardtanh;
    u.a = static_cast<float>(scalar_at(op, "scalars", scalars, scalars_len, 0, attr));
    u.b = static_cast<float>(scalar_at(op, "scalars", scalars, scalars_len, 1, attr));
  } else {
    fail_arg(op, arg,
             "'" + a +
                 "' is not supported (supported: none, relu, sigmoid, tanh, hardswish, hardsigmoid, swish, silu, "
                 "gelu, leaky_relu, hardtanh)");
  }
  return u;
}

float apply_unary(const Unary& u, float x) {
  switch (u.kind) {
    case Unary::kNone: return x;
    case Unary::kRelu: return relu(x);
    case Unary::kSigmoid: return sigmoid(x);
    case Unary::kTanh: return std::tanh(x);
    case Unary::kHardswish: return hardswish(x);
    case Unary::kHardsigmoid: return hardsigmoid(x);
    case Unary::kSwish: return x * sigmoid(x);
    case Unary::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case Unary::kGeluTanh: {
      const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
    case Unary::kLeakyRelu: return x < 0.0f ? x * u.a : x;
    case Unary::kHardtanh: return hardtanh(x, u.a, u.b);
  }
  return x;
}

BinaryOp parse_binary(const char* op, const char* arg, const char* attr) {
  if (attr == nullptr) fail_arg(op, arg, "is null");
  const std::string a = attr;
  if (a == "add") return BinaryOp::kAdd;
  if (a == "sub") return BinaryOp::kSub;
  if (a == "mul") return BinaryOp::kMul;
  if (a == "div") return BinaryOp::kDiv;
  fail_arg(op, arg, "'" + a + "' is not supported (supported: add, sub, mul, div)");
}

namespace {

// Dense passes at least this long are split over the calling thread's
// OpenMP team (a fork costs a few microseconds; 64K floats take tens).
constexpr int64_t kParallelElements = 1 << 16;

// f(i) for i in [0, n), vectorised, on the team from kParallelElements.
// Shorter passes take no region at all: an `if (false)` one still costs
// libgomp a team of one (team_split.hpp). (And a bare `if` clause on a
// combined `parallel for simd` applies to its simd part too: a false one
// forbade vectorising, and a branchy scalar ReLU took 4 ns an element.)
template <typename F>
void dense_pass(int64_t n, F f) {
  if (n >= kParallelElements && omp_get_max_threads() > 1) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}

// t = f(t): one flat pass when t is dense in any dim order (a convolution's
// or GEMM's result is), else by its strides.
template <typename F>
void map_in_place(const Tensor& t, F f) {
  float* p = static_cast<float*>(t.data());
  if (t.is_non_overlapping_and_dense()) {
    dense_pass(t.numel(), [&](int64_t i) { p[i] = f(p[i]); });
    return;
  }
  each3(t.sizes, t.strides, t.strides, t.strides, [&](int64_t i, int64_t, int64_t) { p[i] = f(p[i]); });
}

}  // namespace

// The kind chosen once per tensor, not per element: the cheap ones (the
// activations of MobileNet-like nets) then compile to vector loops.
void apply_unary(const Tensor& t, const Unary& u) {
  switch (u.kind) {
    case Unary::kNone: return;
    case Unary::kRelu: return map_in_place(t, [](float x) { return relu(x); });
    case Unary::kHardswish: return map_in_place(t, [](float x) { return hardswish(x); });
    case Unary::kHardsigmoid: return map_in_place(t, [](float x) { return hardsigmoid(x); });
    case Unary::kHardtanh: {
      const float lo = u.a, hi = u.b;
      return map_in_place(t, [lo, hi](float x) { return hardtanh(x, lo, hi); });
    }
    default: break;
  }
  if (eltwise_in_place(u, t)) return;
  map_in_place(t, [&u](float x) { return apply_unary(u, x); });
}

namespace {

// dst = u(y <op> other): one flat pass when the three are dense with the same
// strides (the usual case: a result and its residual), else by strides.
template <typename Op, typename U>
void map_binary(const Tensor& dst, const Tensor& y, const Tensor& other, Op op, U u) {
  float* d = static_cast<float*>(dst.data());
  const float* a = static_cast<const float*>(y.data());
  const float* b = static_cast<const float*>(other.data());
  if (y.strides == dst.strides && other.strides == dst.strides && dst.is_non_overlapping_and_dense()) {
    dense_pass(dst.numel(), [&](int64_t i) { d[i] = u(op(a[i], b[i])); });
    return;
  }
  each3(dst.sizes, dst.strides, y.strides, other.strides,
        [&](int64_t i, int64_t j, int64_t k) { d[i] = u(op(a[j], b[k])); });
}

template <typename Op>
void map_binary_then(const Tensor& dst, const Tensor& y, const Tensor& other, Op op, const Unary& u) {
  switch (u.kind) {
    case Unary::kNone: return map_binary(dst, y, other, op, [](float x) { return x; });
    case Unary::kRelu: return map_binary(dst, y, other, op, [](float x) { return relu(x); });
    default: return map_binary(dst, y, other, op, [&u](float x) { return apply_unary(u, x); });
  }
}

}  // namespace

void apply_binary(const Tensor& dst, const Tensor& y, const Tensor& other, BinaryOp bop, const Unary& u,
                  const char* op) {
  if (other.sizes != dst.sizes) {
    std::string want, got;
    for (int64_t s : dst.sizes) want += (want.empty() ? "" : ", ") + std::to_string(s);
    for (int64_t s : other.sizes) got += (got.empty() ? "" : ", ") + std::to_string(s);
    fail_arg(op, "other", "has shape [" + got + "], expected the result's [" + want + "]");
  }
  switch (bop) {
    case BinaryOp::kAdd:
      return map_binary_then(
          dst, y, other, [](float x, float o) { return x + o; }, u);
    case BinaryOp::kSub:
      return map_binary_then(
          dst, y, other, [](float x, float o) { return x - o; }, u);
    case BinaryOp::kMul:
      return map_binary_then(
          dst, y, other, [](float x, float o) { return x * o; }, u);
    case BinaryOp::kDiv:
      return map_binary_then(
          dst, y, other, [](float x, float o) { return x / o; }, u);
  }
}

}  // namespace aotrun::shim::kernels
