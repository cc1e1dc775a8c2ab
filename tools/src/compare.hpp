// Comparison of two host tensors: bit for bit, and against a tolerance
// (torch.testing.assert_close's rule |actual - expected| <= atol + rtol * |expected|),
// and where they first differ.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor.hpp"

namespace aotrun::cli {

// A tolerance for one comparison. rtol = atol = 0 means bit for bit.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};

// PyTorch's defaults (torch.testing.assert_close, torch/testing/_comparison.py
// _DTYPE_PRECISIONS): float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32
// 1.3e-6/1e-5, float64 and complex128 1e-7/1e-7, complex64 1.3e-6/1e-5;
// integers, bool and anything else 0/0 (exact).
Tolerance default_tolerance(DLDataType dtype);

// --rtol / --atol as given (each optional); a dtype's tolerance is the
// override where given, else the dtype's default.
struct ToleranceOverride {
  bool has_rtol = false, has_atol = false;
  double rtol = 0, atol = 0;
  Tolerance for_dtype(DLDataType dtype) const;
  bool any() const { return has_rtol || has_atol; }
};

// "rtol 1.3e-06, atol 1e-05" or "bit for bit"
std::string tolerance_text(const Tolerance& t);

struct Comparison {
  bool identical = true;
  // Set when the tensors cannot be compared element by element:
  // "dtype float64, expected float32" or "shape [2, 4], expected [1, 4]".
  std::string layout;
  // Element differences (layout empty, identical false). Elements differ when
  // their bytes differ, so -0.0 vs 0.0 and distinct NaN payloads count.
  size_t differing = 0;    // elements whose bytes differ
  size_t first_index = 0;  // flat, C order
  std::vector<int64_t> first_multi_index;
  // The first differing elements as numbers (imaginary part 0 but for
  // complex dtypes; "numbers" include complex64/complex128, compared with
  // the complex modulus).
  std::complex<double> actual, expected;
  std::string actual_bits, expected_bits;  // and as hex of their bytes ("0x3f800000")
  double max_abs_diff = 0;                 // over differing elements where neither is NaN
  bool numeric = true;                     // false: dtype the CLI cannot read as numbers
  DLDataType dtype{};                      // of both tensors (layout empty)
  // Against the tolerance (compare_tensors with one): elements outside
  // atol + rtol * |expected| (a NaN matches only a NaN, an infinity only the
  // same infinity), and whether there are none. Without a tolerance, or with
  // an exact one, within_tolerance == identical.
  Tolerance tolerance;
  size_t beyond_tolerance = 0;
  bool within_tolerance = true;
};

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected);
Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, const Tolerance& tolerance);

// Flat C-order index -> one index per dimension of `shape`.
std::vector<int64_t> unravel_index(size_t flat, const std::vector<int64_t>& shape);

// "identical", "dtype ...", or
// "index 17 [0, 17]: got 0.5 (0x3f000000), expected 0.25 (0x3e800000),
//  3 elements differ, max abs diff 0.25"
std::string comparison_text(const Comparison& c);
// The same with the tolerance verdict when the tensors differ but a
// tolerance was given: "within rtol 1.3e-06, atol 1e-05: max abs diff 9.5e-07".
std::string tolerance_verdict_text(const Comparison& c);
// {"identical": true} or the fields above.
nlohmann::ordered_json comparison_json(const Comparison& c);

}  // namespace aotrun::cli
