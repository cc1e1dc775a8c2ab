// The values a model accepts in its integer inputs, read from the index
// checks Inductor generates into its CPU kernels (issue #29).
//
// An embedding, gather or index_put kernel checks every index it reads:
//   AOTI_TORCH_CHECK((0 <= tmp2) & (tmp2 < 5000L), "index out of bounds: 0 <= tmp2 < 5000L");
// and the check fires inside the kernel's OpenMP region, where the exception
// it throws cannot leave: the process terminates (on libtorch and on
// aotrun's shim alike). Where the checked value is an input's element
// (loaded through the kernel's in_ptrN, only cast, or wrapped from negative
// by adding the table size), the range is certain, and aotrun checks the
// input's elements against it before the model runs: the model never sees
// an index it would fail on. What else is checked is reported:
//  - from_dims: indices computed from loop counters (position tables):
//    bounded by the input dims, which are range-checked before the run;
//  - from_constants: indices read from the model's own constants (BERT's
//    position_ids and token_type_ids buffers), at places bounded by the dims;
//  - unguarded: values computed inside the model (a gather by an argmax,
//    ids plus an offset); a failure of those in parallel code cannot be
//    turned into an error (docs/PT2.md, "Bad requests").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::pt2 {

struct IndexBound {
  size_t input = 0;   // the model input whose elements index a table
  int64_t lo = 0;     // smallest accepted value
  int64_t hi = 0;     // one past the largest accepted value
  std::string where;  // kernel and check, for messages ("cpp_fused_embedding_0: 0 <= tmp2 < 5000L")
};

struct UnguardedCheck {
  std::string kernel;
  std::string message;    // the check's own message
  bool parallel = false;  // the kernel has OpenMP regions (a failure there aborts)
};

struct IndexChecks {
  std::vector<IndexBound> bounds;  // at most one per input: the intersection of its checks
  size_t from_dims = 0;            // checks on loop-derived indices
  size_t from_constants = 0;       // checks on indices the model's constants hold
  // The from_dims and from_constants checks themselves: they hold only
  // while every input dim is within the range the model was compiled for,
  // so a dim above its compiled maximum (pt2_above_compiled_max) is refused
  // while the model has any (issue #40: GPT-2's position table).
  std::vector<UnguardedCheck> dim_fed;
  std::vector<UnguardedCheck> unguarded;
};

// Reads the checks out of `source` (the concatenated C++ files of the
// model): its C++ kernels' and, for a CUDA model, its Triton kernels'
// (add_triton_index_checks). Inputs are named as the wrapper names them
// (inputs_info_[I].name).
IndexChecks parse_index_checks(const std::string& source);

// The checks of the Triton kernels a CUDA model's wrapper carries as source
// (`tl.device_assert(..., "index out of bounds: 0 <= tmp4 < 1000")`),
// merged into *out (triton_index_checks.cpp). A failed one ends the
// process's CUDA context.
void add_triton_index_checks(const std::string& source, IndexChecks* out);

// The first element of a row-major integer tensor outside [lo, hi): its
// flat offset in *at and its value in *value. False when all are inside (or
// the dtype is not an integer one: DLPack codes 0 = int, 1 = uint).
bool find_out_of_range(const void* data, uint8_t code, uint8_t bits, uint64_t count, int64_t lo, int64_t hi,
                       uint64_t* at, int64_t* value);

}  // namespace aotrun::pt2
