// The model's extern kernel node list inside a .pt2: the ops with no C shim
// function, which the model calls through AOTInductor's proxy executor
// (aoti_torch_proxy_executor_call_function) by their index in the list.
// torch writes it as JSON beside the wrapper (<hash>.wrapper.json; {"nodes":
// [{"name", "node": {"target": "aten::linalg_inv_ex", "inputs", "outputs"}}]})
// only when the model has such ops. One reader, for open_pt2 and for
// `aotrun inspect`.
#pragma once

#include <string>
#include <vector>

#include "package/pt2/archive/pt2_archive.hpp"

namespace aotrun::pt2 {

struct ExternNodes {
  std::string file;                  // the entry's name; "" when the model has none
  std::string json;                  // its text, as the proxy executor reads it
  std::vector<std::string> targets;  // each node's op, in node order
};

// The list of `model`: the one .json among its files (other than the
// *_metadata.json) that holds a "nodes" list. Throws Error(BAD_PACKAGE) when
// that file is over 16 MiB or a node has no target.
ExternNodes read_extern_nodes(const ZipArchive& zip, const Pt2Model& model);

}  // namespace aotrun::pt2
