// Input specs of an AOTInductor model, read from the input checks that
// Inductor generates into the model's C++ wrapper (packaged beside the .so).
// AOTInductor's C interface reports only input names; the checks are the one
// place a .pt2 states dtypes, static dims, dynamic ranges and strides. torch
// generates them for every model in recent releases (run only when
// AOTI_RUNTIME_CHECK_INPUTS is set), in older ones only with debug_compile.
// The messages they throw have a fixed form, which is what is parsed here:
//   "input_handles[I]: unmatched dtype, "            after aoti_torch_dtype_<T>()
//   "input_handles[I]: unmatched dim value at D, "   << "expected: V, "
//   "input_handles[I]: dim value is too small at D, " << "expected it to be >= L, "
//   "input_handles[I]: dim value is too large at D, " << "expected to be <= U, "
//   "input_handles[I]: unmatched stride value at S, " << "expected: V, "
// (strides that depend on a dynamic dim are not checked, so not stated)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::pt2 {

struct InputCheck {
  std::string dtype;              // "float32", ... ("" if no dtype check was found)
  int rank = 0;                   // 1 + the highest dim or stride index checked
  std::vector<int64_t> dims;      // per dim: the static value, or -1
  std::vector<int64_t> min_dims;  // per dim: lower bound (0 = none)
  std::vector<int64_t> max_dims;  // per dim: upper bound (-1 = none)
  std::vector<int64_t> strides;   // per dim: the stride compiled for, or -1 (not stated: symbolic)
};

// Parses the checks of inputs 0..num_inputs-1 out of `source` (the
// concatenated C++ files of the model). Returns false, with *why set, when
// the source has no checks, or not for every input.
bool parse_input_checks(const std::string& source, size_t num_inputs, std::vector<InputCheck>* out, std::string* why);

}  // namespace aotrun::pt2
