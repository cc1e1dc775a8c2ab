// AOTInductor's proxy executor, served by aotrun's shim. A model calls the
// ops that have no C shim function through
// aoti_torch_proxy_executor_call_function(executor, node index, ints,
// tensors); libtorch's executor reads the node list (extern_nodes.hpp) and
// calls the op through its dispatcher. aotrun's host creates one executor
// per model from that list (aotrun_shim_proxy_executor_create), which refuses
// at once, naming the op, any node whose op aotrun does not run, and passes
// it to the model's runs. Immutable once made: any thread may call it.
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "proxy/extern_nodes.hpp"
#include "proxy/extern_ops.hpp"
#include "tensor.hpp"

struct AOTIProxyExecutorOpaque {
  std::vector<aotrun::shim::proxy::ExternNode> nodes;
  std::vector<aotrun::shim::proxy::ExternOpFn> ops;  // one per node
};

namespace aotrun::shim::proxy {
namespace {

struct Entry {
  const char* target;
  ExternOpFn fn;
  bool takes_ints = false;     // reads int arguments (flatten_int_args)
  bool takes_floats = false;   // reads float arguments from the node
  bool takes_options = false;  // reads dtype/layout/device and complex values from the node
};
// The ops aotrun runs for models (each tested against libtorch and eager).
constexpr Entry kOps[] = {
    {"aten::linalg_inv_ex", linalg_inv_ex},
    {"aten::_linalg_solve_ex", linalg_solve_ex},
    {"aten::_linalg_check_errors", linalg_check_errors},
    {"aten::_unique2", unique2},
    {"aten::_fft_c2r", fft_c2r, true},
    {"aten::median.dim", median_dim, true},
    {"aten::nanmedian.dim", nanmedian_dim, true},
    {"aten::bincount", bincount, true},
    {"aten::constant_pad_nd", constant_pad_nd, true, true},
    {"aten::full", full, true, true, true},
    {"aten::slice_scatter", slice_scatter, true},
};

// Arguments an op reads from the node itself. Integers and int lists arrive
// through the flattened int arguments, which only ops marked takes_ints
// read: elsewhere a node passing one is refused rather than misread.
void check_argument_kinds(const ExternNode& n, size_t index, bool takes_ints, bool takes_floats, bool takes_options) {
  for (const ExternArg& a : n.inputs) {
    if (a.kind == ExternArg::kTensor || a.kind == ExternArg::kBool || a.kind == ExternArg::kString ||
        a.kind == ExternArg::kNone) {
      continue;
    }
    if (takes_ints && (a.kind == ExternArg::kInt || a.kind == ExternArg::kInts)) continue;
    if (takes_floats && a.kind == ExternArg::kFloat) continue;
    if (takes_options && (a.kind == ExternArg::kScalarType || a.kind == ExternArg::kLayout ||
                          a.kind == ExternArg::kDevice || a.kind == ExternArg::kComplex)) {
      continue;
    }
    throw ShimError("extern kernel node " + std::to_string(index) + " (" + n.target + ") passes argument '" + a.name +
                    "' as " + a.serialized_kind + ", which aotrun's proxy executor does not take for this op");
  }
  for (const ExternArg& a : n.outputs) {
    if (a.kind != ExternArg::kTensor) {
      throw ShimError("extern kernel node " + std::to_string(index) + " (" + n.target + ") has an output of kind " +
                      a.serialized_kind + ", which aotrun's proxy executor does not produce");
    }
  }
}

}  // namespace

ExternOpFn find_extern_op(const std::string& target) {
  for (const Entry& e : kOps) {
    if (target == e.target) return e.fn;
  }
  return nullptr;
}

bool extern_op_takes_ints(const std::string& target) {
  for (const Entry& e : kOps) {
    if (target == e.target) return e.takes_ints;
  }
  return false;
}

bool extern_op_takes_floats(const std::string& target) {
  for (const Entry& e : kOps) {
    if (target == e.target) return e.takes_floats;
  }
  return false;
}

bool extern_op_takes_options(const std::string& target) {
  for (const Entry& e : kOps) {
    if (target == e.target) return e.takes_options;
  }
  return false;
}

std::string extern_op_names() {
  std::string s;
  for (const Entry& e : kOps) s += (s.empty() ? "" : ", ") + std::string(e.target);
  return s;
}

void set_output(const ExternCall& call, size_t k, const Tensor& value) {
  if (k >= call.outputs.size()) {
    throw ShimError(call.node.target + ": the wrapper passed " + std::to_string(call.outputs.size()) +
                    " output tensors, the op makes more");
  }
  Tensor& dst = as_tensor(call.outputs[k], "output");
  if (dst.defined() && dst.device_type == value.device_type && dst.dtype == value.dtype && dst.sizes == value.sizes) {
    copy_host_elements(dst, value);  // the wrapper's buffer, its strides kept
  } else {
    dst = value;
  }
}

}  // namespace aotrun::shim::proxy

using namespace aotrun::shim;

extern "C" AOTITorchError aotrun_shim_proxy_executor_create(const char* nodes_json, size_t size,
                                                            AOTIProxyExecutorHandle* ret) {
  return guard(__func__, [&] {
    AOTIProxyExecutorHandle* out = out_arg(ret, "ret");
    *out = nullptr;
    if (nodes_json == nullptr) throw ShimError("nodes_json is null");
    auto ex = std::make_unique<AOTIProxyExecutorOpaque>();
    ex->nodes = proxy::parse_extern_nodes(nodes_json, size);
    for (size_t i = 0; i < ex->nodes.size(); ++i) {
      const proxy::ExternNode& n = ex->nodes[i];
      proxy::ExternOpFn fn = proxy::find_extern_op(n.target);
      if (fn == nullptr) {
        throw ShimError("the model calls " + n.target + " through AOTInductor's proxy executor (extern kernel node " +
                        std::to_string(i) + "), which aotrun's shim does not run; it runs " + proxy::extern_op_names());
      }
      proxy::check_argument_kinds(n, i, proxy::extern_op_takes_ints(n.target), proxy::extern_op_takes_floats(n.target),
                                  proxy::extern_op_takes_options(n.target));
      ex->ops.push_back(fn);
    }
    *out = ex.release();
  });
}

extern "C" void aotrun_shim_proxy_executor_delete(AOTIProxyExecutorHandle executor) { delete executor; }

extern "C" AOTITorchError aoti_torch_proxy_executor_call_function(AOTIProxyExecutorHandle proxy_executor,
                                                                  int extern_node_index, int num_ints,
                                                                  int64_t* flatten_int_args, int num_tensors,
                                                                  AtenTensorHandle* flatten_tensor_args) {
  return guard(__func__, [&] {
    if (proxy_executor == nullptr) {
      throw ShimError("the model calls an op through AOTInductor's proxy executor, and its host passed none");
    }
    const AOTIProxyExecutorOpaque& ex = *proxy_executor;
    if (extern_node_index < 0 || static_cast<size_t>(extern_node_index) >= ex.nodes.size()) {
      throw ShimError("extern kernel node " + std::to_string(extern_node_index) + " does not exist (the model has " +
                      std::to_string(ex.nodes.size()) + ")");
    }
    const proxy::ExternNode& n = ex.nodes[static_cast<size_t>(extern_node_index)];
    const std::string where = "extern kernel node " + std::to_string(extern_node_index) + " (" + n.target + ")";
    if (num_ints < 0 || static_cast<size_t>(num_ints) != n.int_count() || num_tensors < 0 ||
        static_cast<size_t>(num_tensors) != n.tensor_count()) {
      throw ShimError(where + ": the wrapper passed " + std::to_string(num_ints) + " ints and " +
                      std::to_string(num_tensors) + " tensors, its node says " + std::to_string(n.int_count()) +
                      " and " + std::to_string(n.tensor_count()));
    }
    if (num_ints > 0 && flatten_int_args == nullptr) throw ShimError(where + ": flatten_int_args is null");
    if (num_tensors > 0 && flatten_tensor_args == nullptr) throw ShimError(where + ": flatten_tensor_args is null");
    proxy::ExternCall call{n, {}, {}, {}};
    if (num_ints > 0) call.ints.assign(flatten_int_args, flatten_int_args + num_ints);
    size_t t = 0;
    for (const proxy::ExternArg& a : n.inputs) {
      if (a.kind == proxy::ExternArg::kTensor) call.inputs.push_back(&as_tensor(flatten_tensor_args[t++], "input"));
    }
    for (const proxy::ExternArg& a : n.outputs) {
      if (a.kind == proxy::ExternArg::kTensor) call.outputs.push_back(flatten_tensor_args[t++]);
    }
    ex.ops[static_cast<size_t>(extern_node_index)](call);
  });
}
