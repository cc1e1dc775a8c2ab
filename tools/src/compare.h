// Bit-for-bit comparison of two host tensors, and where they first differ.
#ifndef AOTRUN_TOOLS_COMPARE_H_
#define AOTRUN_TOOLS_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor.h"

namespace aotrun_cli {

struct Comparison {
  bool identical = true;
  // Set when the tensors cannot be compared element by element:
  // "dtype float64, expected float32" or "shape [2, 4], expected [1, 4]".
  std::string layout;
  // Element differences (layout empty, identical false). Elements differ when
  // their bytes differ, so -0.0 vs 0.0 and distinct NaN payloads count.
  size_t differing = 0;               // elements whose bytes differ
  size_t first_index = 0;             // flat, C order
  std::vector<int64_t> first_multi_index;
  double actual = 0, expected = 0;    // the first differing elements as numbers
  std::string actual_bits, expected_bits;  // and as hex of their bytes ("0x3f800000")
  double max_abs_diff = 0;            // over differing elements where neither is NaN
  bool numeric = true;                // false: dtype the CLI cannot read as numbers
  DLDataType dtype{};                 // of both tensors (layout empty)
};

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected);

// Flat C-order index -> one index per dimension of `shape`.
std::vector<int64_t> unravel_index(size_t flat, const std::vector<int64_t>& shape);

// "identical", "dtype ...", or
// "index 17 [0, 17]: got 0.5 (0x3f000000), expected 0.25 (0x3e800000),
//  3 elements differ, max abs diff 0.25"
std::string comparison_text(const Comparison& c);
// {"identical": true} or the fields above.
nlohmann::ordered_json comparison_json(const Comparison& c);

}  // namespace aotrun_cli

#endif  // AOTRUN_TOOLS_COMPARE_H_
