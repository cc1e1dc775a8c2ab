#include "package/pt2/archive/model_sources.hpp"

#include "base/strings.hpp"

namespace aotrun::pt2 {

ModelSources read_model_sources(const ZipArchive& zip, const Pt2Model& model) {
  ModelSources s;
  for (const auto& e : model.files) {
    const std::string& n = e.name;
    if (n.size() <= 4 || !ends_with(n, ".cpp")) continue;
    // A file that does not fit is skipped whole (a later, smaller one may
    // still fit): half a file would give half its checks.
    if (s.text.size() + e.size <= kMaxModelSourceBytes) {
      s.text += zip.read(e, kMaxModelSourceBytes);
    } else {
      s.unread.push_back(n);
    }
  }
  return s;
}

}  // namespace aotrun::pt2
