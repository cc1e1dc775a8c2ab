#include "package/pt2/specs/index_bounds.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "package/pt2/specs/index_check_parts.hpp"
#include "package/pt2/specs/source_text.hpp"

namespace aotrun::pt2 {
namespace {

using source_text::balanced_end;
using source_text::identifier_at;
using source_text::is_ident;
using source_text::skip_space;
using source_text::split_top_level;
using source_text::trim;

constexpr const char kCheck[] = "AOTI_TORCH_CHECK(";
constexpr int kMaxDepth = 48;  // definitions followed back from one check

struct Kernel {
  std::string name;
  std::vector<std::string> params;  // parameter names, in order
  size_t body = 0, end = 0;         // the body's braces
};

// extern "C" void NAME(params) { body } -- definitions only.
std::vector<Kernel> find_kernels(const std::string& s) {
  std::vector<Kernel> out;
  constexpr const char kExtern[] = "extern \"C\"";
  for (size_t at = s.find(kExtern); at != std::string::npos; at = s.find(kExtern, at + 1)) {
    size_t p = skip_space(s, at + sizeof kExtern - 1);
    if (s.compare(p, 4, "void") != 0) continue;
    p = skip_space(s, p + 4);
    Kernel k;
    k.name = identifier_at(s, p);
    if (k.name.empty()) continue;
    p = skip_space(s, p + k.name.size());
    if (p >= s.size() || s[p] != '(') continue;
    const size_t close = balanced_end(s, p);
    if (close == std::string::npos) continue;
    const size_t brace = skip_space(s, close + 1);
    if (brace >= s.size() || s[brace] != '{') continue;  // a declaration
    const size_t end = balanced_end(s, brace);
    if (end == std::string::npos) continue;
    for (const std::string& param : split_top_level(s.substr(p + 1, close - p - 1))) {
      // The name is the last identifier of "const int64_t* in_ptr0".
      size_t e = param.size();
      while (e > 0 && !is_ident(param[e - 1])) --e;
      size_t b = e;
      while (b > 0 && is_ident(param[b - 1])) --b;
      k.params.push_back(param.substr(b, e - b));
    }
    k.body = brace;
    k.end = end;
    out.push_back(std::move(k));
  }
  return out;
}

// Where a value of the check comes from.
struct Origin {
  enum Kind { Input, Loop, Unknown } kind = Unknown;
  std::string ptr;    // Input: the kernel parameter (in_ptrN)
  bool wrap = false;  // negative values were wrapped by adding the bound
};

class Tracer {
 public:
  Tracer(const std::string& s, size_t body, size_t end) : s_(s), body_(body), end_(end) {}

  // The expression of `auto NAME = ...;` last defined before `before`.
  bool definition(const std::string& name, size_t before, std::string* expr, size_t* at) const {
    const std::string key = "auto " + name;
    size_t p = before;
    while (p > body_) {
      const size_t d = s_.rfind(key, p - 1);
      if (d == std::string::npos || d < body_) return false;
      const size_t after = d + key.size();
      if (after < end_ && !is_ident(s_[after])) {
        const size_t eq = skip_space(s_, after);
        if (eq < end_ && s_[eq] == '=') {
          const size_t semi = source_text::statement_end(s_, eq + 1, end_);
          if (semi == std::string::npos) return false;
          *expr = trim(s_.substr(eq + 1, semi - eq - 1));
          *at = d;
          return true;
        }
      }
      p = d;
    }
    return false;
  }

  Origin trace(const std::string& name, size_t before, int depth) const {
    if (depth > kMaxDepth) return {};
    if (is_loop_var(name)) return Origin{Origin::Loop, "", false};
    std::string e;
    size_t at = 0;
    if (!definition(name, before, &e, &at)) return {};
    return classify(e, at, depth + 1);
  }

 private:
  static bool is_loop_var(const std::string& n) {
    // x0, x1_inner, ks0 (a dim of the input, range-checked before the run)
    if (n.size() >= 2 && n[0] == 'x' && std::isdigit(static_cast<unsigned char>(n[1]))) return true;
    return n.size() >= 3 && n.compare(0, 2, "ks") == 0 && std::isdigit(static_cast<unsigned char>(n[2]));
  }

  // Identifiers of the form tmpN and in_ptrN in `e`.
  static void names_in(const std::string& e, std::set<std::string>* tmps, std::set<std::string>* ptrs) {
    for (size_t i = 0; i < e.size();) {
      if (is_ident(e[i]) && (i == 0 || !is_ident(e[i - 1]))) {
        const std::string id = identifier_at(e, i);
        if (id.compare(0, 3, "tmp") == 0 && id.size() > 3 && std::isdigit(static_cast<unsigned char>(id[3]))) {
          tmps->insert(id);
        } else if (id.compare(0, 6, "in_ptr") == 0) {
          ptrs->insert(id);
        }
        i += id.empty() ? 1 : id.size();
      } else {
        ++i;
      }
    }
  }

  // The argument of a call `F(arg)` that is the whole expression, or "".
  static std::string sole_argument(const std::string& e, const std::string& prefix) {
    if (e.compare(0, prefix.size(), prefix) != 0) return "";
    size_t p = prefix.size();
    if (prefix.back() != '(') {
      // a template argument list first: static_cast<int64_t>(
      if (p >= e.size() || e[p - 1] != '<') return "";
      const size_t gt = e.find('>', p);
      if (gt == std::string::npos || gt + 1 >= e.size() || e[gt + 1] != '(') return "";
      p = gt + 1;
    } else {
      --p;
    }
    const size_t close = balanced_end(e, p);
    if (close != e.size() - 1) return "";
    return trim(e.substr(p + 1, close - p - 1));
  }

  Origin classify(const std::string& e, size_t at, int depth) const {
    if (e.compare(0, 6, "in_ptr") == 0) {  // in_ptr0[static_cast<int64_t>(x1 + ks1*x0)]
      return Origin{Origin::Input, identifier_at(e, 0), false};
    }
    const size_t load = e.find("::loadu(in_ptr");
    if (load != std::string::npos && e.compare(0, 8, "at::vec:") == 0) {
      return Origin{Origin::Input, identifier_at(e, load + 8), false};
    }
    if (is_plain_name(e)) return trace(e, at, depth);
    for (const char* cast : {"c10::convert<", "static_cast<"}) {
      const std::string arg = sole_argument(e, cast);
      if (!arg.empty() && is_plain_name(arg)) return trace(arg, at, depth);
    }
    // Negative indices wrapped: blendv(v, v + N, v < 0), or c ? v + N : v.
    if (e.compare(0, 9, "decltype(") == 0) {
      const size_t call = e.find(")::blendv(");
      if (call != std::string::npos) {
        const size_t open = call + std::strlen(")::blendv");
        const size_t close = balanced_end(e, open);
        if (close != std::string::npos) {
          const auto args = split_top_level(e.substr(open + 1, close - open - 1));
          if (args.size() == 3 && is_plain_name(args[0]) && wraps(args[1], args[0], at)) {
            Origin o = trace(args[0], at, depth);
            o.wrap = true;
            return o;
          }
        }
      }
      return {};
    }
    const size_t q = e.find(" ? ");
    const size_t c = e.find(" : ");
    if (q != std::string::npos && c != std::string::npos && c > q) {
      const std::string a = trim(e.substr(q + 3, c - q - 3)), b = trim(e.substr(c + 3));
      if (is_plain_name(a) && is_plain_name(b) && wraps(a, b, at)) {
        Origin o = trace(b, at, depth);
        o.wrap = true;
        return o;
      }
      return {};
    }
    if (e.compare(0, 3, "[&]") == 0) {
      // A lambda that stores, casts or loads one value elementwise.
      std::set<std::string> tmps, ptrs;
      names_in(e, &tmps, &ptrs);
      if (tmps.size() == 1 && ptrs.empty()) return trace(*tmps.begin(), at, depth);
      if (ptrs.size() == 1 && tmps.empty()) return Origin{Origin::Input, *ptrs.begin(), false};
      return {};
    }
    return {};
  }

  static bool is_plain_name(const std::string& e) {
    if (e.empty() || std::isdigit(static_cast<unsigned char>(e[0]))) return false;
    return std::all_of(e.begin(), e.end(), is_ident);
  }

  // Whether `sum` is defined as `v + <something>` (the table size added).
  bool wraps(const std::string& sum, const std::string& v, size_t before) const {
    std::string e;
    size_t at = 0;
    if (!definition(sum, before, &e, &at)) return false;
    // Older releases cast the sum back: decltype(v)(v + tmp2), int64_t(v + tmp2).
    for (int casts = 0; casts < 2 && !e.empty() && e.back() == ')'; ++casts) {
      size_t open = 0;
      if (e.compare(0, 9, "decltype(") == 0) {
        const size_t close = balanced_end(e, 8);
        open = close == std::string::npos ? 0 : close + 1;
      } else {
        while (open < e.size() && (is_ident(e[open]) || e[open] == ':')) ++open;
      }
      if (open == 0 || open >= e.size() || e[open] != '(' || balanced_end(e, open) != e.size() - 1) break;
      e = trim(e.substr(open + 1, e.size() - open - 2));
    }
    return e.compare(0, v.size() + 3, v + " + ") == 0;
  }

  const std::string& s_;
  size_t body_, end_;
};

// The tensor each call of `kernel` passes as parameter `param`: the NAME of
// "(const int64_t*)(NAME.data_ptr())", or "" when it is not that form.
std::vector<std::string> call_arguments(const std::string& s, const std::string& kernel, size_t param) {
  std::vector<std::string> out;
  for (const std::string& a : call_argument_texts(s, kernel, param)) {
    std::string name;
    const size_t dp = a.find(".data_ptr()");
    if (dp != std::string::npos) {
      size_t n = dp;
      while (n > 0 && is_ident(a[n - 1])) --n;
      name = a.substr(n, dp - n);
    }
    out.push_back(name);
  }
  return out;
}

}  // namespace

IndexChecks parse_index_checks(const std::string& s) {
  IndexChecks out;
  const std::map<std::string, size_t> inputs = source_text::wrapper_input_names(s);
  const std::map<std::string, size_t> constants = source_text::wrapper_names(s, "constants_info_");
  std::map<size_t, IndexBound> merged;
  for (const Kernel& k : find_kernels(s)) {
    const bool parallel = s.find("#pragma omp", k.body) < k.end;
    const Tracer tracer(s, k.body, k.end);
    for (size_t at = s.find(kCheck, k.body); at != std::string::npos && at < k.end; at = s.find(kCheck, at + 1)) {
      const size_t open = at + sizeof kCheck - 2;
      const size_t close = balanced_end(s, open);
      if (close == std::string::npos || close > k.end) break;
      const std::string message = last_literal(s, open, close);
      std::string name;
      int64_t lo = 0, hi = 0;
      const bool index = message.compare(0, sizeof kIndexMessage - 1, kIndexMessage) == 0 &&
                         parse_index_message(message.substr(sizeof kIndexMessage - 1), &name, &lo, &hi);
      const Origin o = index ? tracer.trace(name, at, 0) : Origin{};
      if (o.kind == Origin::Loop) {
        ++out.from_dims;
        out.dim_fed.push_back(UnguardedCheck{k.name, message, parallel});
        continue;
      }
      CheckTie tie = CheckTie::Unguarded;
      if (o.kind == Origin::Input) {
        const auto p = std::find(k.params.begin(), k.params.end(), o.ptr);
        const std::vector<std::string> args =
            p == k.params.end() ? std::vector<std::string>{}
                                : call_arguments(s, k.name, static_cast<size_t>(p - k.params.begin()));
        // Every call must pass a model input there, or the check stays
        // unguarded (tie_check).
        tie = tie_check(args, inputs, constants, lo, hi, o.wrap,
                        k.name + ": " + message.substr(sizeof kIndexMessage - 1), &merged);
      }
      if (tie == CheckTie::Constants) {
        ++out.from_constants;
        out.dim_fed.push_back(UnguardedCheck{k.name, message, parallel});
        continue;
      }
      if (tie == CheckTie::Unguarded) out.unguarded.push_back(UnguardedCheck{k.name, message, parallel});
    }
  }
  for (auto& [i, b] : merged) out.bounds.push_back(b);
  add_triton_index_checks(s, &out);
  return out;
}

bool find_out_of_range(const void* data, uint8_t code, uint8_t bits, uint64_t count, int64_t lo, int64_t hi,
                       uint64_t* at, int64_t* value) {
  auto scan = [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(data);
    for (uint64_t i = 0; i < count; ++i) {
      const T v = p[i];
      // Unsigned values above INT64_MAX are out of every range.
      if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          *at = i;
          *value = std::numeric_limits<int64_t>::max();  // saturated: above every table
          return true;
        }
      }
      const int64_t x = static_cast<int64_t>(v);
      if (x < lo || x >= hi) {
        *at = i;
        *value = x;
        return true;
      }
    }
    return false;
  };
  if (code == 0) {  // kDLInt
    switch (bits) {
      case 8: return scan(int8_t{});
      case 16: return scan(int16_t{});
      case 32: return scan(int32_t{});
      case 64: return scan(int64_t{});
      default: return false;
    }
  }
  if (code == 1) {  // kDLUInt
    switch (bits) {
      case 8: return scan(uint8_t{});
      case 16: return scan(uint16_t{});
      case 32: return scan(uint32_t{});
      case 64: return scan(uint64_t{});
      default: return false;
    }
  }
  return false;
}

}  // namespace aotrun::pt2
