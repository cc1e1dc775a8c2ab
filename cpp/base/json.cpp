#include "base/json.hpp"

#include <set>
#include <vector>

namespace aotrun {

void PackageJson::drain(nlohmann::json& j) noexcept {
  if (!j.is_structured()) return;
  // Children first: each is then a scalar or an empty container, whose
  // destruction allocates nothing; clear() itself does not allocate.
  for (auto& child : j) drain(child);
  j.clear();
}

PackageJson parse_package_json(const char* begin, const char* end, const std::string& where, const std::string& what,
                               Code code) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  auto cb = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxPackageJsonDepth) {
      fail(code, where + ": " + what + " is nested deeper than " + std::to_string(kMaxPackageJsonDepth) + " levels");
    }
    if (event == E::object_start) {
      keys.emplace_back();
    } else if (event == E::object_end && !keys.empty()) {
      keys.pop_back();
    } else if (event == E::key && !keys.empty()) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!keys.back().insert(k).second) fail(code, where + ": duplicate key '" + k + "' in " + what);
    }
    return true;
  };
  try {
    return PackageJson(nlohmann::json::parse(begin, end, cb));
  } catch (const nlohmann::json::exception& e) {
    fail(code, where + ": invalid " + what + ": " + e.what());
  }
}

}  // namespace aotrun
