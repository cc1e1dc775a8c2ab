// What a package says about one of its constants (weights): the list that
// aotrun_package_get_constant reports and that constant updates are checked
// against. For an aotrun package it is its ConstantTable (the weights the
// host maps and passes at container_create); for a bridged format (.pt2) it
// is what the model library reports about the constants it holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace aotrun {

struct ConstantInfo {
  std::string name;           // the name updates use
  std::string original_name;  // the model's own name for it (a .pt2's FQN); == name when it has none
  DLDataType dtype{kDLFloat, 32, 1};
  bool shape_known = true;     // false: the package cannot say (shape empty)
  std::vector<int64_t> shape;  // when shape_known
  uint64_t nbytes = 0;         // 0 when unknown
  // Computed from other constants when a container is created (a .pt2's
  // constant folding): it cannot be updated itself, and an update of the
  // constants it is folded from recomputes it.
  bool folded = false;
};

}  // namespace aotrun
