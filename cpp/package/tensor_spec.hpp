// What a package declares about one of its tensors, as libaotrun keeps it
// after reading the package ABI's aotrun_pkg_tensor_spec (which only borrows
// its name and shape). One of two spec types in the tree, each on one side
// of the package ABI:
//   aotrun::TensorSpec (here)        the host's copy: validation, graph
//                                    buffers, the C API's spec queries; also
//                                    what the .pt2 bridge declares.
//   aotrun::sdk::TensorSpec          a package author's declaration
//                                    (cpp/sdk), compiled into packages.
// aotrun_pkg_tensor_spec is the wire form between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace aotrun {

struct TensorSpec {
  std::string name;
  // The model's own name, where it has one besides `name` (a .pt2's keyword
  // argument or output key, call_spec.hpp); empty when none.
  std::string model_name;
  DLDataType dtype{};
  std::vector<int64_t> shape;  // -1 = dynamic
  bool known = true;           // false: dtype and rank unknown (a .pt2 without input checks)
  // An input's layout: empty = compact row-major; else the strides its model
  // was compiled for (a .pt2 compiled for channels_last), which the runner
  // accepts besides row-major (PackageCode::input_layout).
  std::vector<int64_t> strides;
};

}  // namespace aotrun
