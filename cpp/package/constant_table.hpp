// The constants a package's containers are created with
// (aotrun_pkg_create_args.constants): weights mapped from .safetensors files
// (never copied), with the storage their names and shapes point into.
// Immutable once built; read by every runner's container_create.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "package/safetensors.hpp"

namespace aotrun {

class ConstantTable {
 public:
  ConstantTable() = default;  // no constants (a bare .so, a .pt2)
  // Maps each file (SafetensorsFile::open's errors) and indexes its tensors;
  // a name in two files is BAD_PACKAGE naming it and `package_name`.
  static ConstantTable from_weights(const std::vector<std::string>& paths, const std::string& package_name);
  ConstantTable(ConstantTable&&) = default;
  ConstantTable& operator=(ConstantTable&&) = default;

  const std::vector<aotrun_pkg_constant>& entries() const { return entries_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;  // the mappings entries_ point into
  std::vector<aotrun_pkg_constant> entries_;
  uint64_t bytes_ = 0;
};

}  // namespace aotrun
