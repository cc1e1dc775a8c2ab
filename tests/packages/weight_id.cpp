// Test package "weight_id": y = x + w[k] + b[j] for x, y float32 [-1, 4],
// element (i, j) reading w[k] at k = (i * 4 + j) * 97 mod N. Constants:
// w float32 [N] (any N >= 1; the tests use 4096, the weight benchmarks up to
// 1 GiB), b float32 [4]. With every w equal to s and every b equal
// to 1000 s, y - x = 1001 s in every element: an output whose elements do not
// all name the same s came from a mix of two weight sets. Each element waits
// AOTRUN_TEST_SPIN_US / 16 microseconds (read at creation, default 0), so a
// run spans swaps made meanwhile.
#include <chrono>
#include <cstdlib>
#include <string>

#include <aotrun/sdk.hpp>

#include "test_env.hpp"

namespace sdk = aotrun::sdk;

namespace {

void spin(int64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

class WeightId {
 public:
  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, 4}}}, {{"y", sdk::dtype::float32(), {sdk::kDynamic, 4}}}};
  }

  static void validate_constants(const sdk::Constants& c) {
    const DLTensor& w = c.get("w");
    c.require("w", sdk::dtype::float32(), {w.ndim == 1 && w.shape != nullptr && w.shape[0] >= 1 ? w.shape[0] : 1});
    c.require("b", sdk::dtype::float32(), {4});
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) { out[0][0] = in[0][0]; }

  explicit WeightId(const sdk::InstanceContext& ctx)
      : w_(ctx.constants().data<float>("w")),
        b_(ctx.constants().data<float>("b")),
        n_w_(ctx.constants().get("w").shape[0]),
        spin_ns_(aotrun_test_packages::spin_us_from_env(0) * 1000 / 16) {}

  void forward(sdk::RunContext& run, const DLTensor* in, DLTensor* out) {
    const float* x = sdk::data_ptr<const float>(in[0]);
    float* y = sdk::data_ptr<float>(out[0]);
    const int64_t n = sdk::numel(in[0]);
    run.launch([w = w_, b = b_, n_w = n_w_, x, y, n, spin_ns = spin_ns_] {
      for (int64_t e = 0; e < n; ++e) {
        if (spin_ns > 0) spin(spin_ns);
        y[e] = x[e] + w[(e * 97) % n_w] + b[e % 4];
      }
    });
  }

 private:
  const float* w_;
  const float* b_;
  int64_t n_w_;
  int64_t spin_ns_;
};

AOTRUN_PKG_EXPORT(WeightId);
