// Checks of caller tensors against a package's specs (the generic DLTensor
// helpers they use are base/dltensor.hpp). Every failure is an
// Error(InvalidArgument) that names the tensor and what is wrong with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/dltensor.hpp"
#include "package/package.hpp"

namespace aotrun {

// Inputs for a shape query: count, rank, dtype and dims (data not needed).
void validate_input_shapes(const Package& pkg, const DLTensor* inputs, size_t num_inputs);
// Inputs for a run: the above plus data, device and layout.
void validate_inputs(const Package& pkg, const DLTensor* inputs, size_t num_inputs, DLDevice device);
// Outputs: count, dtype, rank, shape == expected (concatenated), data, device, layout.
void validate_outputs(const Package& pkg, const DLTensor* outputs, size_t num_outputs, const int64_t* expected,
                      DLDevice device);
// Outputs whose shapes are not known ahead (.pt2 without specs): count,
// shape sanity, data, device, layout.
void validate_output_layout(const Package& pkg, const DLTensor* outputs, size_t num_outputs, DLDevice device);

// Sum of the output specs' ranks: the dims of one output-shape query.
size_t total_output_dims(const Package& pkg);

}  // namespace aotrun
