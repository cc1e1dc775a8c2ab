// What the two readers of index checks share (index_bounds.cpp for C++
// kernels, triton_index_checks.cpp for a CUDA model's Triton kernels):
// Inductor's message for a check, the launches of a kernel in the wrapper,
// and how a check tied to the values launches pass becomes a bound.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "package/pt2/specs/index_bounds.hpp"
#include "package/pt2/specs/source_text.hpp"

namespace aotrun::pt2 {

// In C++ kernels (AOTI_TORCH_CHECK) and Triton kernels (tl.device_assert)
// alike: "index out of bounds: 0 <= tmp2 < 5000L".
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

// The text of the last string literal in s[from, to).
inline std::string last_literal(const std::string& s, size_t from, size_t to) {
  const size_t close = s.rfind('"', to);
  if (close == std::string::npos || close <= from) return "";
  size_t open = close;
  while (open > from) {
    open = s.rfind('"', open - 1);
    if (open == std::string::npos || open < from) return "";
    if (s[open - 1] != '\\') break;
  }
  return s.substr(open + 1, close - open - 1);
}

// Argument `param` of each call `callee(...)` in the wrapper, as written
// (trimmed; "" where a call has fewer). Declarations and definitions
// ("void callee(") are not calls.
inline std::vector<std::string> call_argument_texts(const std::string& s, const std::string& callee, size_t param) {
  std::vector<std::string> out;
  for (size_t at = s.find(callee); at != std::string::npos; at = s.find(callee, at + 1)) {
    if (at > 0 && source_text::is_ident(s[at - 1])) continue;
    const size_t open = at + callee.size();
    if (open >= s.size() || s[open] != '(') continue;
    size_t b = at;
    while (b > 0 && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    if (b >= 4 && s.compare(b - 4, 4, "void") == 0) continue;
    const size_t close = source_text::balanced_end(s, open);
    if (close == std::string::npos) continue;
    const auto args = source_text::split_top_level(s.substr(open + 1, close - open - 1));
    out.push_back(param < args.size() ? source_text::trim(args[param]) : std::string());
  }
  return out;
}

// A check whose value every launch of its kernel passes as `args` (model
// tensors by name): all the model's constants (BERT's position_ids: the
// values are the model's own, read where the dims bound them), all model
// inputs (each gets [lo, hi), [-hi, hi) when negatives are wrapped,
// intersected with its earlier bounds in *merged), or neither (the check
// stays unguarded).
enum class CheckTie { Constants, Inputs, Unguarded };
inline CheckTie tie_check(const std::vector<std::string>& args, const std::map<std::string, size_t>& inputs,
                          const std::map<std::string, size_t>& constants, int64_t lo, int64_t hi, bool wrap,
                          const std::string& where, std::map<size_t, IndexBound>* merged) {
  bool all_constants = !args.empty(), all_inputs = !args.empty();
  for (const std::string& a : args) {
    all_constants = all_constants && constants.count(a) != 0;
    all_inputs = all_inputs && inputs.count(a) != 0;
  }
  if (all_constants) return CheckTie::Constants;
  if (!all_inputs) return CheckTie::Unguarded;
  if (wrap && hi != std::numeric_limits<int64_t>::max()) lo = -hi;
  for (const std::string& a : args) {
    const size_t i = inputs.at(a);
    auto it = merged->find(i);
    if (it == merged->end()) {
      merged->emplace(i, IndexBound{i, lo, hi, where});
    } else if (lo > it->second.lo || hi < it->second.hi) {
      it->second.lo = std::max(it->second.lo, lo);
      it->second.hi = std::min(it->second.hi, hi);
      it->second.where = where;
    }
  }
  return CheckTie::Inputs;
}

}  // namespace aotrun::pt2
