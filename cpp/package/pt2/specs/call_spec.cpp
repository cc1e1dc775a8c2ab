#include "package/pt2/specs/call_spec.hpp"

#include <map>

#include "base/json.hpp"

namespace aotrun::pt2 {

namespace {

using nlohmann::json;

// One step of a key path: a key of a dict-like node, or a position.
struct Step {
  bool keyed;
  std::string key;
  size_t index;
};

// The keys of a dict-like node, one per child; empty if it has none (a
// tuple, a list, a namedtuple whose context is its type).
std::vector<std::string> keys_of(const json& node, size_t children) {
  const auto it = node.find("context");
  if (it == node.end() || !it->is_string()) return {};
  const std::string& text = it->get_ref<const std::string&>();
  try {
    const PackageJson context =
        parse_package_json(text.data(), text.data() + text.size(), "call spec", "node context", Code::BadPackage);
    const json* list = &context.get();
    if (list->is_object() && list->contains("dict_context")) list = &(*list)["dict_context"];
    if (!list->is_array() || list->size() != children) return {};
    std::vector<std::string> keys;
    for (const json& k : *list) {
      if (k.is_string()) {
        keys.push_back(k.get<std::string>());
      } else if (k.is_number_integer()) {
        keys.push_back("[" + std::to_string(k.get<int64_t>()) + "]");
      } else {
        return {};
      }
    }
    return keys;
  } catch (const Error&) {
    return {};
  }
}

// "" if the path has no key; else the path from its first key, keys after
// the first as ".key" and positions as "[i]" (an integer key already reads
// "[k]").
std::string path_name(const std::vector<Step>& path) {
  std::string name;
  bool started = false;
  for (const Step& s : path) {
    if (!started && !s.keyed) continue;
    if (s.keyed) {
      if (started && (s.key.empty() || s.key.front() != '[')) name += '.';
      name += s.key;
    } else {
      name += "[" + std::to_string(s.index) + "]";
    }
    started = true;
  }
  return name;
}

// Appends the names of `node`'s leaves, depth first. Throws Error on a node
// that is not a pytree spec node.
void walk(const json& node, std::vector<Step>& path, std::vector<std::string>* out) {
  if (!node.is_object() || !node.contains("type") || !node.contains("children_spec") ||
      !node["children_spec"].is_array()) {
    fail(Code::BadPackage, "a node is not {type, context, children_spec}");
  }
  const json& children = node["children_spec"];
  if (node["type"].is_null()) {
    if (!children.empty()) fail(Code::BadPackage, "a leaf has children");
    out->push_back(path_name(path));
    return;
  }
  const std::vector<std::string> keys = keys_of(node, children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    path.push_back(keys.empty() ? Step{false, {}, i} : Step{true, keys[i], i});
    walk(children[i], path, out);
    path.pop_back();
  }
}

}  // namespace

std::vector<std::string> call_spec_names(const std::string& spec, size_t count, bool inputs,
                                         const std::vector<std::string>& placeholders, std::string* why) {
  std::vector<std::string> names;
  try {
    const PackageJson doc = parse_package_json(spec.data(), spec.data() + spec.size(), "call spec",
                                               inputs ? "in_spec" : "out_spec", Code::BadPackage);
    const json& j = doc.get();
    if (!j.is_array() || j.size() != 2 || !j[1].is_object()) fail(Code::BadPackage, "not [version, node]");
    std::vector<Step> path;
    if (inputs) {
      // (args, kwargs): positional arguments carry no names, keyword ones do;
      // the split itself is no step of a name.
      const json& root = j[1];
      if (!root.contains("children_spec") || !root["children_spec"].is_array() || root["children_spec"].size() != 2) {
        fail(Code::BadPackage, "the root is not (args, kwargs)");
      }
      for (const json& part : root["children_spec"]) walk(part, path, &names);
    } else {
      walk(j[1], path, &names);
    }
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return {};
  }
  if (names.size() != count) {
    if (why != nullptr) {
      *why = "the call spec has " + std::to_string(names.size()) + " leaves for " + std::to_string(count) +
             (inputs ? " inputs" : " outputs");
    }
    return {};
  }
  std::map<std::string, int> uses;
  for (const std::string& n : names) ++uses[n];
  for (const std::string& p : placeholders) ++uses[p];
  for (size_t i = 0; i < names.size(); ++i) {
    std::string& n = names[i];
    // A name equal to this leaf's own placeholder is no ambiguity.
    const int own = i < placeholders.size() && placeholders[i] == n ? 1 : 0;
    if (!n.empty() && uses[n] - own > 1) n.clear();
  }
  return names;
}

}  // namespace aotrun::pt2
