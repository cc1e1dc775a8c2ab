#include "package/package_kind.hpp"

namespace aotrun {

std::string file_stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string s = file;
  if (auto so = s.find(".so"); so != std::string::npos) s = s.substr(0, so);
  if (s.rfind("lib", 0) == 0 && s.size() > 3) s = s.substr(3);
  return s.empty() ? file : s;
}

ProviderPreview PackageKind::preview_provider(const PackageCandidate&, const PackageOptions&) const { return {}; }

const std::vector<const PackageKind*>& package_kinds() {
  static const std::vector<const PackageKind*> kinds = {&directory_kind(), &pt2_archive_kind(), &shared_object_kind()};
  return kinds;
}

}  // namespace aotrun
