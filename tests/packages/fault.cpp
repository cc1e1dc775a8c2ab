// Test package "fault_async" / "fault_sync" (FAULT_SYNC defined): y = x for
// inputs x [-1, 4], failing on every Nth run with AOTRUN_PKG_ERR_RUNTIME and
// the message "fault: injected failure on run N". N comes from the environment
// variable AOTRUN_TEST_FAULT_EVERY, read at container creation (default 7;
// 0 or less disables the faults). Runs are counted across the container.
//   fault_async: the launched work fails (counted when it executes), so run()
//                itself succeeds and the failure surfaces on the stream.
//   fault_sync:  run() returns the error itself (counted per call).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include <aotrun/sdk.hpp>

#include "test_env.hpp"

namespace sdk = aotrun::sdk;

namespace {

[[noreturn]] void injected(int64_t run) {
  sdk::fail(AOTRUN_PKG_ERR_RUNTIME, "fault: injected failure on run " + std::to_string(run));
}

}  // namespace

class Fault {
 public:
  struct Shared {
    std::atomic<int64_t> runs{0};
    int64_t every = aotrun_test_packages::env_integer("AOTRUN_TEST_FAULT_EVERY", 7, false);
  };

  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, 4}}}, {{"y", sdk::dtype::float32(), {sdk::kDynamic, 4}}}};
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) { out[0][0] = in[0][0]; }

  explicit Fault(const sdk::InstanceContext& ctx) : shared_(&ctx.shared<Shared>()) {}

  void forward(sdk::RunContext& run, const DLTensor* in, DLTensor* out) {
    const float* x = sdk::data_ptr<const float>(in[0]);
    float* y = sdk::data_ptr<float>(out[0]);
    const size_t bytes = static_cast<size_t>(sdk::numel(in[0])) * sizeof(float);
    Shared* shared = shared_;
#ifdef FAULT_SYNC
    const int64_t n = ++shared->runs;
    if (shared->every > 0 && n % shared->every == 0) injected(n);
    run.launch([x, y, bytes] {
      if (bytes) std::memcpy(y, x, bytes);
    });
#else
    run.launch([shared, x, y, bytes] {
      const int64_t n = ++shared->runs;
      if (shared->every > 0 && n % shared->every == 0) injected(n);
      if (bytes) std::memcpy(y, x, bytes);
    });
#endif
  }

 private:
  Shared* shared_;
};

AOTRUN_PKG_EXPORT(Fault);
