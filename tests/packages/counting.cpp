// Test package "counting": y = x + 1 for x [-1, 4]. Each launched execution
// busy-waits AOTRUN_TEST_SPIN_US microseconds (read at container creation,
// default 50) and is counted: the async tests check their in-flight bound
// against what the package itself saw (counting_api.h).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#include <aotrun/sdk.hpp>

#include "test_env.hpp"

#include "counting_api.h"

namespace sdk = aotrun::sdk;

namespace {

std::atomic<int64_t> g_inflight{0};
std::atomic<int64_t> g_max_inflight{0};
std::atomic<int64_t> g_completed{0};

void execute(const float* x, float* y, int64_t n, int64_t spin_us) {
  const int64_t now = ++g_inflight;
  int64_t seen = g_max_inflight.load();
  while (now > seen && !g_max_inflight.compare_exchange_weak(seen, now)) {
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  while (std::chrono::steady_clock::now() < until) {
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0f;
  --g_inflight;
  ++g_completed;
}

}  // namespace

AOTRUN_PKG_API int64_t aotrun_test_counting_max_inflight(void) { return g_max_inflight.load(); }
AOTRUN_PKG_API int64_t aotrun_test_counting_completed(void) { return g_completed.load(); }
AOTRUN_PKG_API void aotrun_test_counting_reset(void) {
  g_max_inflight.store(0);
  g_completed.store(0);
}

class Counting {
 public:
  struct Shared {
    int64_t spin_us = aotrun_test_packages::spin_us_from_env(50);
  };

  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, 4}}}, {{"y", sdk::dtype::float32(), {sdk::kDynamic, 4}}}};
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) { out[0][0] = in[0][0]; }

  explicit Counting(const sdk::InstanceContext& ctx) : spin_us_(ctx.shared<Shared>().spin_us) {}

  void forward(sdk::RunContext& run, const DLTensor* in, DLTensor* out) {
    const float* x = sdk::data_ptr<const float>(in[0]);
    float* y = sdk::data_ptr<float>(out[0]);
    const int64_t n = sdk::numel(in[0]);
    const int64_t spin_us = spin_us_;
    run.launch([x, y, n, spin_us] { execute(x, y, n, spin_us); });
  }

 private:
  int64_t spin_us_;
};

AOTRUN_PKG_EXPORT(Counting);
