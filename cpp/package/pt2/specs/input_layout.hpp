// The memory layout an AOTInductor model was compiled for, per input.
// Inductor specialises its kernels to the strides of the example input
// (a channels_last conv net indexes its input as NHWC) and states them in
// the input checks; a tensor with other strides computes wrong numbers
// without any error when the checks are off (their default). So the layout
// is part of an input's spec: row-major, or exact strides that aotrun
// accepts as given or converts a row-major tensor into.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "package/pt2/specs/wrapper_specs.hpp"

namespace aotrun::pt2 {

// From the checks of one input: *strides is left empty when the model
// expects row-major (every stated stride agrees with it), else set to the
// strides it expects (every one stated, a dense permutation of the dims).
// False, with *why, for a layout aotrun cannot provide: non-row-major
// strides that depend on a dynamic dim (not stated), or ones with gaps or
// overlaps.
bool layout_from_checks(const InputCheck& c, std::vector<int64_t>* strides, std::string* why);

// Whether `strides` lay the `rank` dims of `dims` out densely: ordered by
// stride (size-1 dims aside), each is the product of the sizes before it, so
// every element has a place of its own and none is left empty (row-major,
// channels-last, any permutation). The outermost dim's size is not needed
// (it may be -1, dynamic); any other negative size or a product that
// overflows is not dense.
bool dense_permutation(const int64_t* dims, const int64_t* strides, size_t rank);

// Whether `strides` equal `expected` on every dim of size other than 1
// (where a stride is never used).
bool same_layout(const int64_t* shape, const int64_t* strides, const std::vector<int64_t>& expected);

}  // namespace aotrun::pt2
