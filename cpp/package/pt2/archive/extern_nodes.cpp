#include "package/pt2/archive/extern_nodes.hpp"

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/strings.hpp"

namespace aotrun::pt2 {
namespace {

constexpr uint64_t kMaxNodesBytes = 16ull << 20;

}  // namespace

ExternNodes read_extern_nodes(const ZipArchive& zip, const Pt2Model& model) {
  ExternNodes out;
  for (const ZipEntry& e : model.files) {
    if (!ends_with(e.name, ".json") || ends_with(e.name, "_metadata.json")) continue;
    if (e.size > kMaxNodesBytes) {
      fail(Code::BadPackage, "the .pt2's '" + e.name + "' is over " + std::to_string(kMaxNodesBytes >> 20) +
                                 " MiB; an extern kernel node list is a few KiB");
    }
    std::string text = zip.read(e, kMaxNodesBytes);
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) continue;
    for (const auto& n : doc["nodes"]) {
      if (!n.is_object() || !n.contains("node") || !n["node"].contains("target") || !n["node"]["target"].is_string()) {
        fail(Code::BadPackage, "the .pt2's extern kernel node list '" + e.name + "' has a node without a target");
      }
      out.targets.push_back(n["node"]["target"].get<std::string>());
    }
    out.file = e.name;
    out.json = std::move(text);
    return out;
  }
  return out;
}

}  // namespace aotrun::pt2
