// Example package that does no arithmetic: it exercises the host's stream,
// launch and event paths with the smallest possible work, for overhead
// measurements. y is left untouched (its contents are unspecified).
#include <aotrun/sdk.hpp>

namespace sdk = aotrun::sdk;

class Noop {
 public:
  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, 4}}}, {{"y", sdk::dtype::float32(), {sdk::kDynamic, 4}}}};
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) { out[0][0] = in[0][0]; }

  explicit Noop(const sdk::InstanceContext&) {}

  void forward(sdk::RunContext& run, const DLTensor*, DLTensor*) {
    run.launch([] {});  // one empty host function per run
  }
};

AOTRUN_PKG_EXPORT(Noop);
