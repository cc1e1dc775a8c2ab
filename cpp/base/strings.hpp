// Small tests on strings, shared by every layer and the CLI. Header-only.
#pragma once

#include <string_view>

namespace aotrun {

// Whether `s` ends with `suffix` (what C++20's std::string_view::ends_with
// does; aotrun is C++17). An empty suffix ends every string.
[[nodiscard]] inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace aotrun
