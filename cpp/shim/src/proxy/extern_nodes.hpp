// The extern kernel nodes of an AOTInductor model: the ops with no C shim
// function, which the wrapper calls through aoti_torch_proxy_executor_call_function
// by their index in this list. torch writes the list beside the wrapper as
// <hash>.wrapper.json ({"nodes": [{"name", "node": {"target", "inputs",
// "outputs", ...}}]}: torch._export.serde's ExternKernelNodes); each input is
// {"name", "arg": {"as_<kind>": value}, "kind"} and each output an
// {"as_<kind>": value}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::shim::proxy {

struct ExternArg {
  // kInts: as_ints or as_sym_ints (a list of ints); kInt: as_int or as_sym_int.
  // kScalarType/kLayout (i: torch.export's code), kDevice (s: its type),
  // kComplex (f, f_imag): the options of factory ops like aten::full.
  enum Kind { kTensor, kBool, kInt, kFloat, kString, kNone, kOther, kInts, kScalarType, kLayout, kDevice, kComplex };
  std::string name;  // the schema's argument name ("" for outputs)
  Kind kind = kOther;
  std::string serialized_kind;  // "as_tensor", "as_bool", ... as written
  bool b = false;
  int64_t i = 0;
  double f = 0;
  double f_imag = 0;          // as_complex's imaginary part
  std::string s;              // as_string's value, or the tensor's name
  std::vector<int64_t> ints;  // as_ints' values (as_sym_ints: as many zeros, the values come with the call)
};

struct ExternNode {
  std::string target;  // "aten::linalg_inv_ex"
  std::vector<ExternArg> inputs, outputs;

  // The input called `name`, or null.
  const ExternArg* input(const char* name) const;
  // Tensors the wrapper passes for this node: its tensor inputs, then its
  // tensor outputs, in order.
  size_t tensor_count() const;
  // Ints the wrapper passes for this node (flatten_int_args): one per int
  // input, the length of each list input, in order.
  size_t int_count() const;
};

// Parses the document; throws ShimError naming what is malformed.
std::vector<ExternNode> parse_extern_nodes(const char* json, size_t size);

}  // namespace aotrun::shim::proxy
