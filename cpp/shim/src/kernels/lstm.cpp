// aoti_torch_cpu_mkldnn_rnn_layer: one layer and one direction of an LSTM,
// which AOTInductor emits for every nn.LSTM on CPU (frozen or not), once per
// layer and direction (a bidirectional layer is two calls, the second with
// reverse = 1; Inductor concatenates their outputs itself).
//
// input [T, N, I] ([N, T, I] when batch_first), weight0 W_ih [4H, I], weight1
// W_hh [4H, H], weight2/weight3 the biases [4H] (read when has_biases), hx_ and
// cx_ [1, N, H] (any strides: Inductor passes stride-0 views of zeros). Gates
// in PyTorch's order i, f, g, o:
//   g_t = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh
//   c_t = σ(f) c_{t-1} + σ(i) tanh(g),  h_t = σ(o) tanh(c_t)
// walked from t = 0, or from T-1 when reverse (outputs stay at their
// positions). Results: output [T, N, H] ([N, T, H]), hy and cy [1, N, H],
// all contiguous float32, and an empty uint8 workspace (libtorch returns
// oneDNN's training workspace there; inference never reads it).
//
// The input projection for all steps is one GEMM; each step then adds
// h_{t-1} W_hh^T with one more (oneDNN's sgemm). A frozen export's weights
// arrive in the mkldnn layout: the shim unpacked them at load into oneDNN's
// logical order ldigo [1, 1, I, 4, H] (mkldnn_blob.hpp), which is W^T, so the
// GEMMs read them without a transpose.
//
// Only mode 2 (LSTM) and float32, no packed sequences (batch_sizes): anything
// else is refused naming the argument.
#include <cmath>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

constexpr int64_t kLstmMode = 2;

// A weight as a GEMM operand: `data` with leading dimension `ld`; transposed
// when it holds W [4H, K] (PyTorch's order), not W^T [K, 4H] (ldigo).
struct GateWeight {
  Tensor plain;  // keeps a contiguous copy alive when one was made
  const float* data = nullptr;
  int64_t ld = 0;
  bool transposed = true;
};

std::string dims_of(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes[i]);
  return s + "]";
}

GateWeight gate_weight(const Tensor& w, int64_t gates, int64_t k, const char* op, const char* arg) {
  expect_cpu_defined(w, op, arg);
  if (w.dtype != kFloat32) fail_arg(op, arg, std::string("has dtype ") + dtype_name(w.dtype) + "; expected float32");
  GateWeight g;
  if (w.layout == kMkldnn) {
    // ldigo [1, 1, K, 4, H]: contiguous W^T.
    if (w.dim() != 5 || w.sizes[0] != 1 || w.sizes[1] != 1 || w.sizes[2] != k || w.sizes[3] * w.sizes[4] != gates) {
      fail_arg(op, arg,
               "is a packed weight of logical dims " + dims_of(w) + "; expected ldigo [1, 1, " + std::to_string(k) +
                   ", 4, " + std::to_string(gates / 4) + "]");
    }
    g.data = static_cast<const float*>(w.data());
    g.ld = gates;
    g.transposed = false;
    return g;
  }
  if (w.dim() != 2 || w.sizes[0] != gates || w.sizes[1] != k) {
    fail_arg(op, arg,
             "has sizes " + dims_of(w) + "; expected [" + std::to_string(gates) + ", " + std::to_string(k) + "]");
  }
  if (w.is_contiguous()) {
    g.data = static_cast<const float*>(w.data());
  } else {
    g.plain = empty_contiguous(w.sizes, kFloat32);
    copy_host_elements(g.plain, w);
    g.data = static_cast<const float*>(g.plain.data());
  }
  g.ld = k;
  return g;
}

// b_ih + b_hh as one [4H] vector (zeros without biases).
std::vector<float> summed_bias(const Tensor* b_ih, const Tensor* b_hh, int64_t gates, const char* op) {
  std::vector<float> b(static_cast<size_t>(gates), 0.0f);
  const Tensor* parts[2] = {b_ih, b_hh};
  const char* names[2] = {"weight2", "weight3"};
  for (int p = 0; p < 2; ++p) {
    if (parts[p] == nullptr) continue;
    const Tensor& t = *parts[p];
    expect_cpu_defined(t, op, names[p]);
    if (t.dtype != kFloat32) {
      fail_arg(op, names[p], std::string("has dtype ") + dtype_name(t.dtype) + "; expected float32");
    }
    if (t.numel() != gates || t.dim() != 1) {
      fail_arg(op, names[p], "has sizes " + dims_of(t) + "; expected [" + std::to_string(gates) + "]");
    }
    const float* d = static_cast<const float*>(t.data());
    for (int64_t j = 0; j < gates; ++j) b[j] += d[j * t.strides[0]];
  }
  return b;
}

// A [1, N, H] state (any strides) as a contiguous copy, which the steps
// then update in place as hy / cy.
Tensor state(const Tensor& s, int64_t n, int64_t h, const char* op, const char* arg) {
  expect_dim(s, 3, op, arg);
  if (s.dtype != kFloat32) fail_arg(op, arg, std::string("has dtype ") + dtype_name(s.dtype) + "; expected float32");
  if (s.sizes[0] != 1 || s.sizes[1] != n || s.sizes[2] != h) {
    fail_arg(op, arg,
             "has sizes " + dims_of(s) + "; expected [1, " + std::to_string(n) + ", " + std::to_string(h) + "]");
  }
  Tensor c = empty_contiguous({1, n, h}, kFloat32);
  copy_host_elements(c, s);
  return c;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

void lstm_layer(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor* b_ih, const Tensor* b_hh,
                const Tensor& hx, const Tensor& cx, bool reverse, int64_t mode, int64_t batch_sizes_len,
                int64_t hidden_size, bool batch_first, Tensor* out[4], const char* op) {
  if (mode != kLstmMode) {
    fail_arg(op, "mode", "is " + std::to_string(mode) + "; aotrun's shim runs LSTM layers (mode 2) only");
  }
  if (batch_sizes_len != 0) {
    fail_arg(op, "batch_sizes", "is not empty: packed sequences (PackedSequence) are not supported");
  }
  expect_dim(input, 3, op, "input");
  if (input.dtype != kFloat32) {
    fail_arg(op, "input", std::string("has dtype ") + dtype_name(input.dtype) + "; aotrun's shim runs float32 LSTMs");
  }
  const int64_t steps = input.sizes[batch_first ? 1 : 0], n = input.sizes[batch_first ? 0 : 1];
  const int64_t in = input.sizes[2], h = hidden_size, gates = 4 * hidden_size;
  if (h <= 0) fail_arg(op, "hidden_size", "is " + std::to_string(h) + "; it must be positive");
  const GateWeight wi = gate_weight(w_ih, gates, in, op, "weight0");
  const GateWeight wh = gate_weight(w_hh, gates, h, op, "weight1");
  const std::vector<float> bias = summed_bias(b_ih, b_hh, gates, op);
  Tensor hy = state(hx, n, h, op, "hx_"), cy = state(cx, n, h, op, "cx_");

  // The input in time-major order, contiguous: [T, N, I].
  Tensor x = empty_contiguous({steps, n, in}, kFloat32);
  Tensor xv = input;
  if (batch_first) {
    xv.sizes = {steps, n, in};
    xv.strides = {input.strides[1], input.strides[0], input.strides[2]};
  }
  copy_host_elements(x, xv);

  // All input projections at once: G [T*N, 4H] = X W_ih^T + b.
  std::vector<float> g(static_cast<size_t>(steps * n * gates));
  for (int64_t r = 0; r < steps * n; ++r)
    for (int64_t j = 0; j < gates; ++j) g[r * gates + j] = bias[j];
  if (steps * n > 0 && in > 0) {
    sgemm(false, wi.transposed, steps * n, gates, in, 1.0f, static_cast<const float*>(x.data()), in, wi.data, wi.ld,
          1.0f, g.data(), gates);
  }

  const std::vector<int64_t> out_sizes =
      batch_first ? std::vector<int64_t>{n, steps, h} : std::vector<int64_t>{steps, n, h};
  Tensor output = empty_contiguous(out_sizes, kFloat32);
  float* o = static_cast<float*>(output.data());
  float* hp = static_cast<float*>(hy.data());
  float* cp = static_cast<float*>(cy.data());
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    float* gt = g.data() + t * n * gates;
    if (n > 0 && h > 0) sgemm(false, wh.transposed, n, gates, h, 1.0f, hp, h, wh.data, wh.ld, 1.0f, gt, gates);
    for (int64_t b = 0; b < n; ++b) {
      const float* gr = gt + b * gates;
      for (int64_t k = 0; k < h; ++k) {
        const float i = sigmoid(gr[k]), f = sigmoid(gr[h + k]), c = std::tanh(gr[2 * h + k]),
                    og = sigmoid(gr[3 * h + k]);
        const float cn = f * cp[b * h + k] + i * c;
        cp[b * h + k] = cn;
        hp[b * h + k] = og * std::tanh(cn);
      }
      float* dst = batch_first ? o + (b * steps + t) * h : o + (t * n + b) * h;
      for (int64_t k = 0; k < h; ++k) dst[k] = hp[b * h + k];
    }
  }
  *out[0] = std::move(output);
  *out[1] = std::move(hy);
  *out[2] = std::move(cy);
  *out[3] = empty_contiguous({0}, kUInt8);
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_mkldnn_rnn_layer(
    AtenTensorHandle input, AtenTensorHandle weight0, AtenTensorHandle weight1, AtenTensorHandle weight2,
    AtenTensorHandle weight3, AtenTensorHandle hx_, AtenTensorHandle cx_, int32_t reverse, const int64_t* batch_sizes,
    int64_t batch_sizes_len_, int64_t mode, int64_t hidden_size, int64_t num_layers, int32_t has_biases,
    int32_t bidirectional, int32_t batch_first, int32_t train, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  using namespace aotrun::shim;
  // One layer and one direction per call whatever these say: num_layers and
  // bidirectional describe the whole module; train only adds the workspace.
  (void)batch_sizes;
  (void)num_layers;
  (void)bidirectional;
  (void)train;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu_mkldnn_rnn_layer";
    const Tensor& x = as_tensor(input, "input");
    const Tensor& wi = as_tensor(weight0, "weight0");
    const Tensor& wh = as_tensor(weight1, "weight1");
    const Tensor* bi = has_biases ? &as_tensor(weight2, "weight2") : nullptr;
    const Tensor* bh = has_biases ? &as_tensor(weight3, "weight3") : nullptr;
    const Tensor& h0 = as_tensor(hx_, "hx_");
    const Tensor& c0 = as_tensor(cx_, "cx_");
    AtenTensorHandle* outs[4] = {out_arg(ret0, "ret0"), out_arg(ret1, "ret1"), out_arg(ret2, "ret2"),
                                 out_arg(ret3, "ret3")};
    Tensor r[4];
    Tensor* rp[4] = {&r[0], &r[1], &r[2], &r[3]};
    kernels::lstm_layer(x, wi, wh, bi, bh, h0, c0, reverse != 0, mode, batch_sizes_len_, hidden_size, batch_first != 0,
                        rp, op);
    for (int k = 0; k < 4; ++k) *outs[k] = new_handle(std::move(r[k]));
  });
}
