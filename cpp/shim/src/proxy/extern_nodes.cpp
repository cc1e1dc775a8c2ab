#include "proxy/extern_nodes.hpp"

#include <nlohmann/json.hpp>

#include "error.hpp"

namespace aotrun::shim::proxy {
namespace {

using nlohmann::json;

// One {"as_<kind>": value} object.
ExternArg read_arg(const json& arg, const std::string& where) {
  if (!arg.is_object() || arg.size() != 1) throw ShimError(where + " is not a one-key {\"as_<kind>\": ...} object");
  ExternArg a;
  const auto it = arg.begin();
  a.serialized_kind = it.key();
  const json& v = it.value();
  if (a.serialized_kind == "as_tensor" && v.is_object() && v.contains("name") && v["name"].is_string()) {
    a.kind = ExternArg::kTensor;
    a.s = v["name"].get<std::string>();
  } else if (a.serialized_kind == "as_bool" && v.is_boolean()) {
    a.kind = ExternArg::kBool;
    a.b = v.get<bool>();
  } else if (a.serialized_kind == "as_int" && v.is_number_integer()) {
    a.kind = ExternArg::kInt;
    a.i = v.get<int64_t>();
  } else if (a.serialized_kind == "as_sym_int" && v.is_object()) {
    a.kind = ExternArg::kInt;  // {"as_int": n} or {"as_name": "s0"}: the value comes with the call
    if (v.contains("as_int") && v["as_int"].is_number_integer()) a.i = v["as_int"].get<int64_t>();
  } else if ((a.serialized_kind == "as_ints" || a.serialized_kind == "as_sym_ints") && v.is_array()) {
    a.kind = ExternArg::kInts;
    for (const json& e : v) a.ints.push_back(e.is_number_integer() ? e.get<int64_t>() : 0);
  } else if (a.serialized_kind == "as_float" && v.is_number()) {
    a.kind = ExternArg::kFloat;
    a.f = v.get<double>();
  } else if (a.serialized_kind == "as_string" && v.is_string()) {
    a.kind = ExternArg::kString;
    a.s = v.get<std::string>();
  } else if ((a.serialized_kind == "as_scalar_type" || a.serialized_kind == "as_layout") && v.is_number_integer()) {
    a.kind = a.serialized_kind == "as_layout" ? ExternArg::kLayout : ExternArg::kScalarType;
    a.i = v.get<int64_t>();
  } else if (a.serialized_kind == "as_device" && v.is_object() && v.contains("type") && v["type"].is_string()) {
    a.kind = ExternArg::kDevice;
    a.s = v["type"].get<std::string>();
  } else if (a.serialized_kind == "as_complex" && v.is_object() && v.contains("real") && v["real"].is_number() &&
             v.contains("imag") && v["imag"].is_number()) {
    a.kind = ExternArg::kComplex;
    a.f = v["real"].get<double>();
    a.f_imag = v["imag"].get<double>();
  } else if (a.serialized_kind == "as_none") {
    a.kind = ExternArg::kNone;
  }
  return a;
}

}  // namespace

const ExternArg* ExternNode::input(const char* name) const {
  for (const ExternArg& a : inputs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

size_t ExternNode::tensor_count() const {
  size_t n = 0;
  for (const auto* list : {&inputs, &outputs})
    for (const ExternArg& a : *list) n += a.kind == ExternArg::kTensor ? 1 : 0;
  return n;
}

size_t ExternNode::int_count() const {
  size_t n = 0;
  for (const ExternArg& a : inputs) n += a.kind == ExternArg::kInt ? 1 : a.kind == ExternArg::kInts ? a.ints.size() : 0;
  return n;
}

std::vector<ExternNode> parse_extern_nodes(const char* text, size_t size) {
  json doc = json::parse(text, text + size, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) {
    throw ShimError("the extern kernel nodes are not a JSON object with a \"nodes\" list");
  }
  std::vector<ExternNode> nodes;
  for (const json& entry : doc["nodes"]) {
    const std::string where = "extern kernel node " + std::to_string(nodes.size());
    if (!entry.is_object() || !entry.contains("node") || !entry["node"].is_object()) {
      throw ShimError(where + " has no \"node\" object");
    }
    const json& n = entry["node"];
    if (!n.contains("target") || !n["target"].is_string()) throw ShimError(where + " has no \"target\" string");
    ExternNode node;
    node.target = n["target"].get<std::string>();
    if (n.contains("inputs") && n["inputs"].is_array()) {
      for (const json& in : n["inputs"]) {
        if (!in.is_object() || !in.contains("arg"))
          throw ShimError(where + " (" + node.target + ") has an input with no \"arg\"");
        ExternArg a = read_arg(in["arg"], where + " (" + node.target + ") input");
        if (in.contains("name") && in["name"].is_string()) a.name = in["name"].get<std::string>();
        node.inputs.push_back(std::move(a));
      }
    }
    if (n.contains("outputs") && n["outputs"].is_array()) {
      for (const json& out : n["outputs"])
        node.outputs.push_back(read_arg(out, where + " (" + node.target + ") output"));
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace aotrun::shim::proxy
