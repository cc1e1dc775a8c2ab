// Test package "throwing": forward() throws std::runtime_error("throwing:
// forward failed") on every run. The SDK must turn it into a status
// (AOTRUN_PKG_ERR_RUNTIME) with that text in the last-error message; nothing
// may terminate the process. Specs: x [-1, 4] -> y [-1, 4].
#include <stdexcept>

#include <aotrun/sdk.hpp>

namespace sdk = aotrun::sdk;

class Throwing {
 public:
  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, 4}}}, {{"y", sdk::dtype::float32(), {sdk::kDynamic, 4}}}};
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) { out[0][0] = in[0][0]; }

  explicit Throwing(const sdk::InstanceContext&) {}

  void forward(sdk::RunContext&, const DLTensor*, DLTensor*) { throw std::runtime_error("throwing: forward failed"); }
};

AOTRUN_PKG_EXPORT(Throwing);
