#include "package/pt2/specs/output_dims.hpp"

#include <cctype>

#include "package/pt2/specs/source_text.hpp"

namespace aotrun::pt2 {
namespace {

using source_text::balanced_end;
using source_text::identifier_at;
using source_text::is_ident;
using source_text::skip_space;
using source_text::split_top_level;
using source_text::trim;

constexpr int kMaxHops = 16;  // `auto a = std::move(b);` followed back at most this often

// Whether `text` names an unbacked size symbol: u followed by digits.
bool names_unbacked(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != 'u' || (i > 0 && is_ident(text[i - 1]))) continue;
    size_t e = i + 1;
    while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
    if (e > i + 1 && (e == text.size() || !is_ident(text[e]))) return true;
  }
  return false;
}

// An integer literal as Inductor writes it (256L, -1L, 3).
bool literal(const std::string& text, int64_t* value) {
  std::string t = trim(text);
  if (!t.empty() && t.back() == 'L') t.pop_back();
  if (t.empty()) return false;
  size_t i = t[0] == '-' ? 1 : 0;
  if (i == t.size()) return false;
  for (size_t k = i; k < t.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(t[k]))) return false;
  }
  if (t.size() - i > 18) return false;
  *value = std::stoll(t);
  return true;
}

// The last occurrence of `key` in s[0, before) that starts an identifier.
size_t last_ident(const std::string& s, const std::string& key, size_t before) {
  size_t p = before;
  while (p > 0) {
    const size_t at = s.rfind(key, p - 1);
    if (at == std::string::npos) return at;
    const size_t end = at + key.size();
    if ((at == 0 || !is_ident(s[at - 1])) && (end >= s.size() || !is_ident(s[end]))) return at;
    p = at;
  }
  return std::string::npos;
}

// The elements of a braced list of dims; Inductor writes a trailing comma
// ({4L, }), which is no dim.
std::vector<std::string> dim_list(const std::string& inside) {
  std::vector<std::string> out;
  for (std::string& e : split_top_level(inside)) {
    if (!trim(e).empty()) out.push_back(std::move(e));
  }
  return out;
}

// The elements of `int64_t NAME[] = {...};` last defined before `before`.
bool array_elements(const std::string& s, const std::string& name, size_t before, std::vector<std::string>* out) {
  size_t p = before;
  while (true) {
    const size_t at = last_ident(s, name, p);
    if (at == std::string::npos) return false;
    size_t q = skip_space(s, at + name.size());
    if (s.compare(q, 2, "[]") == 0) {
      q = skip_space(s, q + 2);
      if (q < s.size() && s[q] == '=') {
        q = skip_space(s, q + 1);
        if (q >= s.size() || s[q] != '{') return false;
        const size_t close = balanced_end(s, q);
        if (close == std::string::npos) return false;
        *out = dim_list(s.substr(q + 1, close - q - 1));
        return true;
      }
    }
    p = at;
  }
}

// The first braced argument of the last `assert_size_stride(NAME, {...}`
// before `before` (torch 2.13 and newer state each fallback kernel's result
// so, for AOTI_RUNTIME_CHECK_INPUTS=1).
bool asserted_sizes(const std::string& s, const std::string& name, size_t before, std::vector<std::string>* out) {
  const std::string call = "assert_size_stride(" + name + ",";
  const size_t at = s.rfind(call, before);
  if (at == std::string::npos) return false;
  const size_t open = skip_space(s, at + call.size());
  if (open >= s.size() || s[open] != '{') return false;
  const size_t close = balanced_end(s, open);
  if (close == std::string::npos || close > before) return false;
  *out = dim_list(s.substr(open + 1, close - open - 1));
  return true;
}

// What last defines the tensor handle `name` before `before`: the call that
// allocates it (one ending `&NAME_handle)`), or `auto NAME = EXPR;`.
struct Definition {
  enum Kind { kNone, kAlloc, kAuto } kind = kNone;
  size_t at = std::string::npos;  // kAlloc: where `&NAME_handle)` stands; kAuto: where `auto NAME` does
  std::string expr;               // kAuto: EXPR, trimmed
};

Definition definition_of(const std::string& s, const std::string& name, size_t before) {
  Definition d;
  const size_t at = last_ident(s, "auto " + name, before);
  const size_t alloc_at = s.rfind("&" + name + "_handle)", before);
  if (alloc_at != std::string::npos && (at == std::string::npos || alloc_at > at)) {
    d.kind = Definition::kAlloc;
    d.at = alloc_at;
    return d;
  }
  if (at == std::string::npos) return d;
  const size_t eq = skip_space(s, at + name.size() + 5);
  if (eq >= s.size() || s[eq] != '=') return d;
  const size_t semi = source_text::statement_end(s, eq + 1, s.size());
  if (semi == std::string::npos) return d;
  d.kind = Definition::kAuto;
  d.at = at;
  d.expr = trim(s.substr(eq + 1, semi - eq - 1));
  return d;
}

// `std::move(OTHER)` -> OTHER.
bool moved_from(const std::string& expr, std::string* other) {
  const std::string move = "std::move(";
  if (expr.compare(0, move.size(), move) != 0 || expr.back() != ')') return false;
  *other = trim(expr.substr(move.size(), expr.size() - move.size() - 1));
  return true;
}

// The top-level arguments of the first `CALL(...)` in `text` from `from`
// (call names the function with its opening parenthesis); *close, when
// given, is where its closing parenthesis stands.
bool call_args(const std::string& text, size_t from, const std::string& call, std::vector<std::string>* args,
               size_t* close = nullptr) {
  const size_t c = text.find(call, from);
  if (c == std::string::npos) return false;
  const size_t open = c + call.size() - 1;
  const size_t end = balanced_end(text, open);
  if (end == std::string::npos) return false;
  *args = split_top_level(text.substr(open + 1, end - open - 1));
  if (close != nullptr) *close = end;
  return true;
}

// The sizes of the tensor handle `name` before `before`, as written: from
// its allocation (aoti_torch_empty_strided(N, int_array_A, ..., &NAME_handle)),
// an assert on a kernel's result, a view (reinterpret_tensor_wrapper(B, N,
// int_array_A, ...)), or a move (auto NAME = std::move(other)) followed back.
bool sizes_of(const std::string& s, std::string name, size_t before, std::vector<std::string>* out) {
  for (int hop = 0; hop < kMaxHops; ++hop) {
    if (asserted_sizes(s, name, before, out)) return true;
    const Definition d = definition_of(s, name, before);
    if (d.kind == Definition::kAlloc) {
      // AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(N, int_array_A, ...&NAME_handle));
      const std::string call = "aoti_torch_empty_strided(";
      const size_t c = s.rfind(call, d.at);
      const size_t line = s.rfind('\n', d.at);
      if (c == std::string::npos || (line != std::string::npos && c < line)) return false;
      std::vector<std::string> args;
      size_t close = 0;
      if (!call_args(s, c, call, &args, &close) || close < d.at) return false;
      if (args.size() >= 2 && trim(args[0]) == "0") {  // 0-d: its sizes array is a nullptr
        out->clear();
        return true;
      }
      return args.size() >= 2 && array_elements(s, trim(args[1]), c, out);
    }
    if (d.kind != Definition::kAuto) return false;
    if (moved_from(d.expr, &name)) {
      before = d.at;
      continue;
    }
    std::vector<std::string> args;
    if (!call_args(d.expr, 0, "reinterpret_tensor_wrapper(", &args)) return false;
    if (args.size() >= 3 && trim(args[1]) == "0") {  // a 0-d view
      out->clear();
      return true;
    }
    return args.size() >= 3 && array_elements(s, trim(args[2]), d.at, out);
  }
  return false;
}

// The c10 dtype name in a `cached_torch_dtype_<T>` argument among s[from, to).
bool dtype_argument(const std::string& s, size_t from, size_t to, std::string* out) {
  const std::string key = "cached_torch_dtype_";
  const size_t at = s.find(key, from);
  if (at == std::string::npos || at >= to) return false;
  *out = identifier_at(s, at + key.size());
  return !out->empty();
}

// The dtype of the tensor handle `name` before `before`: the dtype argument
// of the assert on it (torch 2.13+: assert_size_stride(NAME, {..}, {..},
// "op", cached_torch_dtype_T, "torch.T")) or of the call that allocates it
// (aoti_torch_empty_strided / _alloc_from_pool(..., &NAME_handle)), followed
// back through moves and views (a view keeps its base's dtype).
bool dtype_of(const std::string& s, std::string name, size_t before, std::string* out) {
  for (int hop = 0; hop < kMaxHops; ++hop) {
    const std::string assert_call = "assert_size_stride(" + name + ",";
    const size_t a = s.rfind(assert_call, before);
    if (a != std::string::npos) {
      const size_t open = a + std::string("assert_size_stride").size();
      const size_t close = balanced_end(s, open);
      if (close != std::string::npos && close < before && dtype_argument(s, open, close, out)) return true;
    }
    const Definition d = definition_of(s, name, before);
    if (d.kind == Definition::kAlloc) {
      const size_t line = s.rfind('\n', d.at);
      return dtype_argument(s, line == std::string::npos ? 0 : line, d.at, out);
    }
    if (d.kind != Definition::kAuto) return false;
    if (!moved_from(d.expr, &name)) {
      std::vector<std::string> args;
      if (!call_args(d.expr, 0, "reinterpret_tensor_wrapper(", &args) || args.empty()) return false;
      name = trim(args[0]);
    }
    before = d.at;
  }
  return false;
}

}  // namespace

OutputDims parse_output_dims(const std::string& s, size_t num_outputs) {
  OutputDims out;
  out.dims.assign(num_outputs, {});
  out.stated.assign(num_outputs, false);
  out.dtypes.assign(num_outputs, "");
  for (const std::string bind : {"int64_t ", "auto "}) {
    for (size_t p = s.find(bind); p != std::string::npos && !out.has_unbacked; p = s.find(bind, p + 1)) {
      if (p > 0 && is_ident(s[p - 1])) continue;
      out.has_unbacked = names_unbacked(identifier_at(s, p + bind.size()));
    }
  }
  std::vector<bool> unreadable(num_outputs, false);  // some assignment of the output could not be read
  const std::string key = "output_handles[";
  for (size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + 1)) {
    size_t q = p + key.size();
    size_t e = q;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    if (e == q || e >= s.size() || s[e] != ']' || e - q > 6) continue;
    const size_t index = static_cast<size_t>(std::stoul(s.substr(q, e - q)));
    q = skip_space(s, e + 1);
    if (index >= num_outputs || q >= s.size() || s[q] != '=' || (q + 1 < s.size() && s[q + 1] == '=')) continue;
    q = skip_space(s, q + 1);
    const std::string name = identifier_at(s, q);
    std::vector<std::string> elements;
    if (name.empty() || s.compare(q + name.size(), 10, ".release()") != 0 || !sizes_of(s, name, p, &elements)) {
      unreadable[index] = true;
      continue;
    }
    std::vector<OutputDim> dims;
    for (const std::string& el : elements) {
      OutputDim d;
      d.text = trim(el);
      if (literal(d.text, &d.value)) {
        d.kind = OutputDim::Fixed;
      } else {
        d.kind = names_unbacked(d.text) ? OutputDim::DataDependent : OutputDim::Symbolic;
      }
      dims.push_back(std::move(d));
    }
    out.dims[index] = std::move(dims);
    out.stated[index] = true;
    std::string dtype;
    if (dtype_of(s, name, p, &dtype)) out.dtypes[index] = dtype;
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!unreadable[i]) continue;
    out.stated[i] = false;
    out.dims[i].clear();
    out.dtypes[i].clear();
  }
  return out;
}

}  // namespace aotrun::pt2
