// Example package: a three-layer MLP on CPU, computed with OpenBLAS.
//   x [batch, 256] -> fc1 (256->1024) -> ReLU -> fc2 (1024->1024) -> ReLU
//   -> fc3 (1024->64) -> y [batch, 64]
// Weights use PyTorch's nn.Linear layout: fcN.weight [out, in], fcN.bias
// [out], y = x W^T + b. See README.md.
#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <aotrun/sdk.hpp>

namespace sdk = aotrun::sdk;

namespace {

constexpr int64_t kIn = 256;
constexpr int64_t kHidden = 1024;
constexpr int64_t kOut = 64;

struct Layer {
  const float* weight;  // [out, in]
  const float* bias;    // [out]
  int64_t in;
  int64_t out;
};

// y[batch, out] = act(x[batch, in] W^T + b)
void linear(const Layer& l, const float* x, float* y, int64_t batch, bool relu) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(batch), static_cast<int>(l.out),
              static_cast<int>(l.in), 1.0f, x, static_cast<int>(l.in), l.weight, static_cast<int>(l.in), 0.0f, y,
              static_cast<int>(l.out));
  for (int64_t r = 0; r < batch; ++r) {
    float* row = y + r * l.out;
    for (int64_t c = 0; c < l.out; ++c) {
      const float v = row[c] + l.bias[c];
      row[c] = relu ? std::max(v, 0.0f) : v;
    }
  }
}

}  // namespace

class Mlp {
 public:
  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, kIn}}},
            {{"y", sdk::dtype::float32(), {sdk::kDynamic, kOut}}}};
  }

  static void validate_constants(const sdk::Constants& c) {
    const DLDataType f32 = sdk::dtype::float32();
    c.require("fc1.weight", f32, {kHidden, kIn});
    c.require("fc1.bias", f32, {kHidden});
    c.require("fc2.weight", f32, {kHidden, kHidden});
    c.require("fc2.bias", f32, {kHidden});
    c.require("fc3.weight", f32, {kOut, kHidden});
    c.require("fc3.bias", f32, {kOut});
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) {
    out[0][0] = in[0][0];  // batch passes through; the 64 comes from the spec
  }

  explicit Mlp(const sdk::InstanceContext& ctx) {
    const sdk::Constants& c = ctx.constants();
    fc1_ = {c.data<float>("fc1.weight"), c.data<float>("fc1.bias"), kIn, kHidden};
    fc2_ = {c.data<float>("fc2.weight"), c.data<float>("fc2.bias"), kHidden, kHidden};
    fc3_ = {c.data<float>("fc3.weight"), c.data<float>("fc3.bias"), kHidden, kOut};
    // N instances share the machine's cores: each sgemm runs on the thread
    // that executes the stream, single-threaded (process-wide setting).
    openblas_set_num_threads(1);
  }

  void forward(sdk::RunContext& run, const DLTensor* inputs, DLTensor* outputs) {
    const int64_t batch = inputs[0].shape[0];
    if (batch == 0) return;
    const float* x = sdk::data_ptr<const float>(inputs[0]);
    float* y = sdk::data_ptr<float>(outputs[0]);
    // Two hidden activations, allocated per run on the stream (graph-safe).
    sdk::Scratch scratch = run.scratch(2 * static_cast<size_t>(batch * kHidden) * sizeof(float));
    float* h1 = scratch.as<float>();
    float* h2 = h1 + batch * kHidden;
    run.launch([fc1 = fc1_, fc2 = fc2_, fc3 = fc3_, x, y, h1, h2, batch] {
      linear(fc1, x, h1, batch, true);
      linear(fc2, h1, h2, batch, true);
      linear(fc3, h2, y, batch, false);
    });
    scratch.release();  // free enqueued after the compute
  }

 private:
  Layer fc1_{}, fc2_{}, fc3_{};
};

AOTRUN_PKG_EXPORT(Mlp);
