// Small helpers for reading the C++ that Inductor generates (index_bounds,
// symbolic_shapes): brackets matched past string and character literals,
// identifiers, top-level splitting. Nothing here understands C++; the
// readers built on it accept only the forms Inductor emits and treat
// anything else as "not stated".
#pragma once

#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace aotrun::pt2::source_text {

inline bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

inline size_t skip_space(const std::string& s, size_t p) {
  while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
  return p;
}

inline std::string identifier_at(const std::string& s, size_t p) {
  if (p >= s.size() || std::isdigit(static_cast<unsigned char>(s[p]))) return "";
  size_t e = p;
  while (e < s.size() && is_ident(s[e])) ++e;
  return s.substr(p, e - p);
}

inline std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Past a string or character literal starting at s[p] (a quote): the index
// of its closing quote, or npos.
inline size_t literal_end(const std::string& s, size_t p) {
  const char q = s[p];
  for (size_t i = p + 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == q) {
      return i;
    }
  }
  return std::string::npos;
}

// The index of the bracket closing the one at s[open] ( '(' '[' '{' ), or npos.
inline size_t balanced_end(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      i = literal_end(s, i);
      if (i == std::string::npos) return i;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

// The first ';' at bracket depth 0 in s[from, to), or npos.
inline size_t statement_end(const std::string& s, size_t from, size_t to) {
  for (size_t i = from; i < to && i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      i = literal_end(s, i);
      if (i == std::string::npos) return i;
    } else if (c == '(' || c == '[' || c == '{') {
      i = balanced_end(s, i);
      if (i == std::string::npos) return i;
    } else if (c == ';') {
      return i;
    }
  }
  return std::string::npos;
}

// `a, f(b, c), {d, e}` -> "a", "f(b, c)", "{d, e}" (trimmed).
inline std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      const std::string part = trim(s.substr(start, i - start));
      if (!part.empty() || i != s.size() || !out.empty()) out.push_back(part);
      start = i + 1;
    } else if (s[i] == '"' || s[i] == '\'') {
      const size_t e = literal_end(s, i);
      if (e == std::string::npos) break;
      i = e;
    } else if (s[i] == '(' || s[i] == '[' || s[i] == '{' || s[i] == '<') {
      // '<' only opens a template argument list right after an identifier
      // (static_cast<int64_t>); a comparison has a space before it.
      if (s[i] == '<' && (i == 0 || !is_ident(s[i - 1]))) continue;
      const size_t e = s[i] == '<' ? s.find('>', i) : balanced_end(s, i);
      if (e == std::string::npos) break;
      i = e;
    }
  }
  return out;
}

// The wrapper's names of the model inputs, from `inputs_info_[I].name =
// "argN_1";` (every release), or of its constants (`constants_info_`):
// name -> index.
inline std::map<std::string, size_t> wrapper_names(const std::string& s, const char* table) {
  std::map<std::string, size_t> out;
  const std::string kInfo = std::string(table) + "[";
  for (size_t at = s.find(kInfo); at != std::string::npos; at = s.find(kInfo, at + 1)) {
    if (at > 0 && is_ident(s[at - 1])) continue;
    size_t p = at + kInfo.size();
    size_t idx = 0;
    bool any = false;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])) && idx < (size_t(1) << 20)) {
      idx = idx * 10 + static_cast<size_t>(s[p++] - '0');
      any = true;
    }
    if (!any || s.compare(p, 10, "].name = \"") != 0) continue;
    p += 10;
    const size_t q = s.find('"', p);
    if (q == std::string::npos) continue;
    out.emplace(s.substr(p, q - p), idx);
  }
  return out;
}
inline std::map<std::string, size_t> wrapper_input_names(const std::string& s) {
  return wrapper_names(s, "inputs_info_");
}

}  // namespace aotrun::pt2::source_text
