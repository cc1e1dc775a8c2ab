// What the model's wrapper states about the shape of each output (issue
// #40). Probing the model on two neighbouring sizes tells which output dims
// moved between them, not which are fixed: a strided convolution's length
// (length - 4) // 4 + 1 does not move from 16 to 17, and an output sliced
// to a length read from the input's values (an unbacked size, `u0`) is 0
// in every probe on zeros. The wrapper states each output's sizes where it
// allocates or views it:
//   const int64_t int_array_24[] = {s43, s53, 256L};
//   auto var_2 = wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(buf39, 3, int_array_24, ...));
//   output_handles[0] = var_2.release();
// and a dim stated as an integer literal is fixed, one stated as any other
// expression is not. An output whose allocation cannot be read (a kernel
// allocates it) is Unknown. The dtype is read along the same path (the
// allocation's or the assert's cached_torch_dtype_<T>): with every output's
// dims and dtype stated, the bridge needs no probe run at open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::pt2 {

struct OutputDim {
  enum Kind : uint8_t {
    Fixed,          // an integer literal: `value`
    Symbolic,       // an expression of the input size symbols (s43, 256L*s53, floor divisions)
    DataDependent,  // the expression names an unbacked size (u0): known only after a run
  } kind = Symbolic;
  int64_t value = 0;
  std::string text;  // as written, for messages
};

struct OutputDims {
  // Per output: its dims as stated, or empty when the wrapper does not say
  // (and then `stated[i]` is false).
  std::vector<std::vector<OutputDim>> dims;
  std::vector<bool> stated;
  // Per output: its dtype as the wrapper states it where it allocates or
  // asserts the tensor (cached_torch_dtype_float32 -> "float32"), followed
  // back through moves and views; "" when it does not say.
  std::vector<std::string> dtypes;
  // The wrapper binds sizes read from tensor values (`int64_t u0 = ...`):
  // an output it does not state may depend on them.
  bool has_unbacked = false;
};

// Reads `source` (the model's concatenated C++) for `num_outputs` outputs.
OutputDims parse_output_dims(const std::string& source, size_t num_outputs);

}  // namespace aotrun::pt2
