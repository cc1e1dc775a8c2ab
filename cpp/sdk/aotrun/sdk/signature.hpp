// A model's static signature: the names, dtypes and shapes of its inputs and
// outputs. shape entries of kDynamic (-1) are dynamic dimensions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "aotrun/sdk/error.hpp"
#include "aotrun/sdk/shape.hpp"

namespace aotrun {
namespace sdk {

struct TensorSpec {
  std::string name;
  DLDataType dtype;
  std::vector<int64_t> shape;

  TensorSpec(std::string n, DLDataType t, std::initializer_list<int64_t> dims)
      : name(std::move(n)), dtype(t), shape(dims) {}
  TensorSpec(std::string n, DLDataType t, std::vector<int64_t> dims)
      : name(std::move(n)), dtype(t), shape(std::move(dims)) {}

  int32_t ndim() const { return static_cast<int32_t>(shape.size()); }
  std::string shape_str() const { return format_shape(shape.data(), ndim()); }
};

struct Signature {
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// Rejects signatures the ABI cannot express (called once per container).
inline void check_signature(const Signature& sig) {
  auto check = [](const std::vector<TensorSpec>& specs, const char* role) {
    for (size_t i = 0; i < specs.size(); ++i) {
      const TensorSpec& s = specs[i];
      if (s.name.empty()) {
        fail(AOTRUN_PKG_ERR_INTERNAL,
             "model signature: " + std::string(role) + " " + std::to_string(i) + " has no name");
      }
      for (int64_t d : s.shape) {
        if (d < kDynamic) {
          fail(AOTRUN_PKG_ERR_INTERNAL, "model signature: " + std::string(role) + " '" + s.name +
                                            "' has invalid dimension " + std::to_string(d));
        }
      }
    }
  };
  check(sig.inputs, "input");
  check(sig.outputs, "output");
}

}  // namespace sdk
}  // namespace aotrun
