// The ops aotrun's proxy executor runs, by their serialized target name
// ("aten::linalg_inv_ex"). An op reads its non-tensor arguments from the
// node, takes the tensors the wrapper passed (tensor inputs in order, then
// one handle per tensor output) and sets each output (set_output).
#pragma once

#include <string>
#include <vector>

#include "aotrun_shim/shim.h"
#include "proxy/extern_nodes.hpp"
#include "tensor.hpp"

namespace aotrun::shim::proxy {

struct ExternCall {
  const ExternNode& node;
  std::vector<const Tensor*> inputs;      // the tensor inputs, in order
  std::vector<AtenTensorHandle> outputs;  // one per tensor output
  std::vector<int64_t> ints;              // flatten_int_args (ops that take ints)
};

using ExternOpFn = void (*)(const ExternCall& call);

// The op for `target`, or null when aotrun does not run it.
ExternOpFn find_extern_op(const std::string& target);
// Whether the op for `target` reads int arguments (flatten_int_args).
bool extern_op_takes_ints(const std::string& target);
// Whether the op for `target` reads float arguments (from the node).
bool extern_op_takes_floats(const std::string& target);
// Whether the op for `target` reads dtype, layout, device or complex
// arguments (from the node).
bool extern_op_takes_options(const std::string& target);
// "aten::linalg_inv_ex, aten::_linalg_solve_ex, ..." for messages.
std::string extern_op_names();

// Output k of the call becomes `value`: written into the tensor the wrapper
// allocated when that one has value's sizes and dtype (its strides kept),
// else the handle takes value itself (an uninitialized tensor, a
// data-dependent size).
void set_output(const ExternCall& call, size_t k, const Tensor& value);

// The ops (linalg_ops.cpp, unique_op.cpp, fft_op.cpp, median_op.cpp, pad_op.cpp,
// full_op.cpp, slice_scatter_op.cpp, bincount_op.cpp).
void linalg_inv_ex(const ExternCall& call);
void linalg_solve_ex(const ExternCall& call);
void linalg_check_errors(const ExternCall& call);
void unique2(const ExternCall& call);
void fft_c2r(const ExternCall& call);          // fft_op.cpp (since aotrun-shim 1.4)
void median_dim(const ExternCall& call);       // median_op.cpp (since aotrun-shim 1.4)
void nanmedian_dim(const ExternCall& call);    // median_op.cpp (since aotrun-shim 1.8)
void bincount(const ExternCall& call);         // bincount_op.cpp (since aotrun-shim 1.8)
void constant_pad_nd(const ExternCall& call);  // pad_op.cpp (since aotrun-shim 1.4)
void full(const ExternCall& call);             // full_op.cpp (since aotrun-shim 1.4)
void slice_scatter(const ExternCall& call);    // slice_scatter_op.cpp (since aotrun-shim 1.4)

}  // namespace aotrun::shim::proxy
