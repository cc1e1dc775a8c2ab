// Checks of caller tensors against a package's specs. Every failure is an
// Error(InvalidArgument) that names the tensor and what is wrong with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "package/package.hpp"

namespace aotrun {

std::string dtype_name(DLDataType t);
std::string shape_string(const int64_t* shape, int ndim);

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

// The device type as an integer: a DLDeviceType from a C caller may hold any
// value, and loading an out-of-range enum is undefined in C++.
int32_t device_type_of(const DLDevice& d);
// Byte size of t, false if it overflows (or a dim is negative).
bool checked_bytes(const DLTensor& t, uint64_t* bytes);

// Number of elements (negative dims count as 0; UINT64_MAX when the count
// overflows, never a wrapped value); bytes of one element.
uint64_t numel(const DLTensor& t);
size_t element_bytes(DLDataType t);
size_t total_output_dims(const Package& pkg);
// Row-major with no gaps (strides NULL, or matching on every dim of size
// other than 1). Inputs may also have their spec's strides (TensorSpec).
bool is_compact(const DLTensor& t);

}  // namespace aotrun
