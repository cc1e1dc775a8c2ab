// The message Inductor gives an index check, in its C++ kernels
// (AOTI_TORCH_CHECK) and its Triton kernels (tl.device_assert) alike:
//   "index out of bounds: 0 <= tmp2 < 5000L"
// Internal to the specs readers (index_bounds.cpp, triton_index_checks.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>

#include "package/pt2/specs/source_text.hpp"

namespace aotrun::pt2 {

constexpr const char kIndexMessage[] = "index out of bounds: ";

// "0 <= tmp2 < 5000L" / "tmp6 < 32L" / "0 <= tmp2": the checked name and bounds.
inline bool parse_index_message(const std::string& m, std::string* name, int64_t* lo, int64_t* hi) {
  std::string rest = source_text::trim(m);
  *lo = std::numeric_limits<int64_t>::min();
  *hi = std::numeric_limits<int64_t>::max();
  if (rest.compare(0, 5, "0 <= ") == 0) {
    *lo = 0;
    rest = rest.substr(5);
  }
  *name = source_text::identifier_at(rest, 0);
  if (name->empty()) return false;
  rest = source_text::trim(rest.substr(name->size()));
  if (rest.empty()) return *lo == 0;
  if (rest.compare(0, 2, "< ") != 0) return false;
  rest = source_text::trim(rest.substr(2));
  if (!rest.empty() && rest.back() == 'L') rest.pop_back();
  if (rest.empty() || rest.size() > 18 || !std::all_of(rest.begin(), rest.end(), [](char ch) {
        return std::isdigit(static_cast<unsigned char>(ch)) != 0;
      })) {
    return false;
  }
  *hi = std::stoll(rest);
  return true;
}

}  // namespace aotrun::pt2
