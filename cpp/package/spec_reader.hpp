// Reads a package's tensor specs through its entry points, the same way for
// every package kind: one metadata-only container (num_models 0, never run)
// is created, asked for its counts and specs, and destroyed.
#pragma once

#include <string>
#include <vector>

#include "package/constant_table.hpp"
#include "package/package_code.hpp"
#include "package/tensor_spec.hpp"

namespace aotrun {

struct PackageSpecs {
  std::vector<TensorSpec> inputs, outputs;
};

// `name` names the package in messages; `dir` is its directory ("" if none).
// Throws PACKAGE when an entry point fails or throws, BAD_PACKAGE for specs
// no tensor could match (rank, dims < -1, zero-bit dtypes, short structs).
PackageSpecs read_specs(const PackageCode& code, const std::string& name, DLDevice device,
                        const ConstantTable& constants, const std::string& dir);

}  // namespace aotrun
