#include "package/pt2/specs/symbolic_shapes.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "package/pt2/specs/source_text.hpp"
#include "base/strings.hpp"

namespace aotrun::pt2 {
namespace {

using source_text::identifier_at;
using source_text::is_ident;
using source_text::skip_space;
using source_text::split_top_level;
using source_text::trim;

constexpr size_t kStackSymbols = 64;

// Parses `+ - *`, parentheses, integers (with Inductor's L suffix) and
// symbols into postfix; false for anything else (floor division, min/max,
// casts): such a dim is not checked.
class ExprParser {
 public:
  ExprParser(const std::string& t, const std::map<std::string, std::string>& aliases, std::vector<std::string>* symbols)
      : t_(t), aliases_(aliases), symbols_(symbols) {}

  bool parse(std::vector<ShapeOp>* out) {
    out_ = out;
    p_ = 0;
    return sum() && skip_space(t_, p_) == t_.size();
  }

 private:
  bool sum() {
    if (!product()) return false;
    for (;;) {
      p_ = skip_space(t_, p_);
      if (p_ >= t_.size() || (t_[p_] != '+' && t_[p_] != '-')) return true;
      const char op = t_[p_++];
      if (!product()) return false;
      out_->push_back(ShapeOp{op == '+' ? ShapeOp::Add : ShapeOp::Sub, 0});
    }
  }
  bool product() {
    if (!factor()) return false;
    for (;;) {
      p_ = skip_space(t_, p_);
      if (p_ >= t_.size() || t_[p_] != '*') return true;
      ++p_;
      if (!factor()) return false;
      out_->push_back(ShapeOp{ShapeOp::Mul, 0});
    }
  }
  bool factor() {
    p_ = skip_space(t_, p_);
    if (p_ >= t_.size()) return false;
    if (t_[p_] == '(') {
      ++p_;
      if (!sum()) return false;
      p_ = skip_space(t_, p_);
      if (p_ >= t_.size() || t_[p_] != ')') return false;
      ++p_;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(t_[p_]))) {
      int64_t v = 0;
      while (p_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_]))) {
        if (v > (INT64_MAX - 9) / 10) return false;
        v = v * 10 + (t_[p_++] - '0');
      }
      if (p_ < t_.size() && t_[p_] == 'L') ++p_;
      out_->push_back(ShapeOp{ShapeOp::Const, v});
      return true;
    }
    std::string name = identifier_at(t_, p_);
    if (name.empty()) return false;
    p_ += name.size();
    const size_t next = skip_space(t_, p_);
    if (next < t_.size() && (t_[next] == '(' || t_[next] == ':')) return false;  // a call, a qualified name
    for (int hops = 0; hops < 8; ++hops) {
      const auto a = aliases_.find(name);
      if (a == aliases_.end()) break;
      name = a->second;
    }
    auto it = std::find(symbols_->begin(), symbols_->end(), name);
    if (it == symbols_->end()) it = symbols_->insert(symbols_->end(), name);
    out_->push_back(ShapeOp{ShapeOp::Sym, static_cast<int64_t>(it - symbols_->begin())});
    return true;
  }

  const std::string& t_;
  const std::map<std::string, std::string>& aliases_;
  std::vector<std::string>* symbols_;
  std::vector<ShapeOp>* out_ = nullptr;
  size_t p_ = 0;
};

// Calls visit(name, value) for each `int64_t NAME = VALUE` in `s`, VALUE
// being the identifier right after '=' and the position past it in *at.
template <class Visit>
void for_each_int64_declaration(const std::string& s, Visit visit) {
  constexpr const char kDecl[] = "int64_t ";
  for (size_t at = s.find(kDecl); at != std::string::npos; at = s.find(kDecl, at + 1)) {
    if (at > 0 && is_ident(s[at - 1])) continue;
    size_t p = at + sizeof kDecl - 1;
    const std::string name = identifier_at(s, p);
    if (name.empty()) continue;
    p = skip_space(s, p + name.size());
    if (p >= s.size() || s[p] != '=') continue;
    p = skip_space(s, p + 1);
    const std::string value = identifier_at(s, p);
    if (value.empty()) continue;
    p += value.size();
    visit(name, value, p);
  }
}

// `int64_t A = B;` where B is an identifier: A is B under another name.
std::map<std::string, std::string> aliases_in(const std::string& s) {
  std::map<std::string, std::string> out;
  for_each_int64_declaration(s, [&](const std::string& a, const std::string& b, size_t p) {
    p = skip_space(s, p);
    if (b != a && p < s.size() && s[p] == ';') out.emplace(a, b);
  });
  return out;
}

// Evaluates postfix `ops`; false when a symbol is unbound or it overflows.
bool evaluate(const std::vector<ShapeOp>& ops, const int64_t* values, const bool* bound, int64_t* out) {
  int64_t stack[16];
  size_t n = 0;
  for (const ShapeOp& op : ops) {
    if (op.kind == ShapeOp::Const || op.kind == ShapeOp::Sym) {
      if (n == 16) return false;
      if (op.kind == ShapeOp::Sym && !bound[op.value]) return false;
      stack[n++] = op.kind == ShapeOp::Const ? op.value : values[op.value];
      continue;
    }
    if (n < 2) return false;
    const int64_t b = stack[--n], a = stack[n - 1];
    int64_t r = 0;
    const bool overflow = op.kind == ShapeOp::Add   ? __builtin_add_overflow(a, b, &r)
                          : op.kind == ShapeOp::Sub ? __builtin_sub_overflow(a, b, &r)
                                                    : __builtin_mul_overflow(a, b, &r);
    if (overflow) return false;
    stack[n - 1] = r;
  }
  if (n != 1) return false;
  *out = stack[0];
  return true;
}

std::string dim_name(size_t input, int dim, const std::vector<std::string>& names) {
  return "input " + std::to_string(input) + (input < names.size() ? " ('" + names[input] + "')" : std::string()) +
         " dim " + std::to_string(dim);
}

}  // namespace

SymbolicShapes SymbolicShapes::parse(const std::string& s, size_t num_inputs) {
  SymbolicShapes out;
  const std::map<std::string, size_t> inputs = source_text::wrapper_input_names(s);
  const std::map<std::string, std::string> aliases = aliases_in(s);
  std::map<std::pair<size_t, int>, Dim> found;
  auto add = [&](size_t input, int dim, const std::string& text) {
    if (input >= num_inputs || dim < 0 || dim > 64 || found.count({input, dim}) != 0) return;
    Dim d{input, dim, text, {}};
    if (ExprParser(text, aliases, &out.symbols_).parse(&d.ops)) found.emplace(std::make_pair(input, dim), d);
  };
  // assert_size_stride(arg5_1, {s23, s27}, {s27, 1L}, "input");
  constexpr const char kAssert[] = "assert_size_stride(";
  for (size_t at = s.find(kAssert); at != std::string::npos; at = s.find(kAssert, at + 1)) {
    if (at > 0 && is_ident(s[at - 1])) continue;
    const size_t open = at + sizeof kAssert - 2;
    const size_t close = source_text::balanced_end(s, open);
    if (close == std::string::npos) continue;
    const auto args = split_top_level(s.substr(open + 1, close - open - 1));
    if (args.size() < 2) continue;
    const auto in = inputs.find(args[0]);
    if (in == inputs.end() || args[1].size() < 2 || args[1].front() != '{' || args[1].back() != '}') continue;
    const auto sizes = split_top_level(args[1].substr(1, args[1].size() - 2));
    for (size_t d = 0; d < sizes.size(); ++d) add(in->second, static_cast<int>(d), sizes[d]);
  }
  // int64_t s23 = arg4_1_size[0];  (every release; the first input of each symbol)
  for_each_int64_declaration(s, [&](const std::string& sym, const std::string& arr, size_t p) {
    if (arr.size() < 6 || !ends_with(arr, "_size")) return;
    const auto in = inputs.find(arr.substr(0, arr.size() - 5));
    if (in == inputs.end() || p >= s.size() || s[p] != '[') return;
    const size_t q = s.find("];", p);
    if (q == std::string::npos || q - p > 4) return;
    const std::string idx = s.substr(p + 1, q - p - 1);
    if (idx.empty() ||
        !std::all_of(idx.begin(), idx.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return;
    add(in->second, std::stoi(idx), sym);
  });
  // int64_t arg23_1_size_1 = arg23_1_size[1];
  // int64_t s6 = (1.0/8.0)*arg23_1_size_1;   (a dim exported as 8*s6)
  std::map<std::string, std::pair<size_t, int>> dim_names;  // a name bound to an input dim
  for (const auto& [key, d] : found) {
    if (d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Sym) {
      dim_names.emplace(out.symbols_[static_cast<size_t>(d.ops[0].value)], key);
    }
  }
  constexpr const char kFraction[] = "(1.0/";
  for (size_t at = s.find(kFraction); at != std::string::npos; at = s.find(kFraction, at + 1)) {
    // Backwards: "int64_t SYM = " right before it.
    size_t eq = at;
    while (eq > 0 && s[eq - 1] == ' ') --eq;
    if (eq == 0 || s[eq - 1] != '=') continue;
    size_t end = eq - 1;
    while (end > 0 && s[end - 1] == ' ') --end;
    size_t begin = end;
    while (begin > 0 && is_ident(s[begin - 1])) --begin;
    if (begin < 8 || s.compare(begin - 8, 8, "int64_t ") != 0) continue;
    const std::string sym = s.substr(begin, end - begin);
    size_t p = at + sizeof kFraction - 1;
    int64_t k = 0;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])) && k < (int64_t(1) << 40)) {
      k = k * 10 + (s[p++] - '0');
    }
    if (k < 2 || s.compare(p, 4, ".0)*") != 0) continue;
    p += 4;
    const std::string of = identifier_at(s, p);
    const auto bound = dim_names.find(of);
    if (of.empty() || bound == dim_names.end() || skip_space(s, p + of.size()) >= s.size() ||
        s[skip_space(s, p + of.size())] != ';') {
      continue;
    }
    out.steps_.push_back({bound->second.first, bound->second.second, k, sym});
  }
  // Bare symbols first (they bind), then the rest; each in input order.
  std::vector<Dim> bare, rest;
  for (auto& [key, d] : found) {
    if (d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Sym) {
      bare.push_back(std::move(d));
    } else if (!(d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Const)) {
      rest.push_back(std::move(d));  // static dims: the runner checks those against the specs
    }
  }
  out.dims_ = std::move(bare);
  out.dims_.insert(out.dims_.end(), rest.begin(), rest.end());
  return out;
}

std::vector<SymbolicShapes::Binding> SymbolicShapes::bindings() const {
  std::vector<Binding> out;
  for (const Dim& d : dims_) {
    if (d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Sym) {
      out.push_back({d.input, d.dim, static_cast<size_t>(d.ops[0].value)});
    }
  }
  return out;
}

bool SymbolicShapes::computed_size(size_t input, int dim, const std::vector<int64_t>& sizes,
                                   const std::vector<bool>& set, int64_t* out) const {
  if (sizes.size() < symbols_.size() || set.size() < symbols_.size()) return false;
  for (const Dim& d : dims_) {
    if (d.input != input || d.dim != dim) continue;
    if (d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Sym) return false;  // a bare symbol, no expression
    const std::unique_ptr<bool[]> bound(new bool[symbols_.size() + 1]());
    for (size_t k = 0; k < symbols_.size(); ++k) bound[k] = set[k];
    return evaluate(d.ops, sizes.data(), bound.get(), out);
  }
  return false;
}

int64_t SymbolicShapes::step(size_t input, int dim) const {
  for (const Step& s : steps_) {
    if (s.input == input && s.dim == dim) return s.k;
  }
  return 1;
}

size_t SymbolicShapes::tied_dims() const {
  // A dim is tied when its symbol also appears elsewhere, or it is an expression.
  std::vector<size_t> uses(symbols_.size(), 0);
  for (const Dim& d : dims_) {
    for (const ShapeOp& op : d.ops) {
      if (op.kind == ShapeOp::Sym) ++uses[static_cast<size_t>(op.value)];
    }
  }
  size_t n = 0;
  for (const Dim& d : dims_) {
    const bool bare = d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Sym;
    if (!bare || uses[static_cast<size_t>(d.ops[0].value)] > 1) ++n;
  }
  return n;
}

bool SymbolicShapes::check(const int64_t* const* shapes, const int* ndims, size_t num_inputs,
                           const std::vector<std::string>& names, std::string* why) const {
  for (const Step& s : steps_) {
    if (s.input >= num_inputs || s.dim >= ndims[s.input] || shapes[s.input][s.dim] % s.k == 0) continue;
    const int64_t actual = shapes[s.input][s.dim];
    *why = dim_name(s.input, s.dim, names) + " is " + std::to_string(actual) +
           ", but the model was exported with it as " + std::to_string(s.k) + "*" + s.symbol + " and would work on " +
           std::to_string(actual / s.k * s.k) + " of it: it must be a multiple of " + std::to_string(s.k);
    return false;
  }
  if (dims_.empty()) return true;
  // No allocation for the usual few symbols.
  int64_t stack_values[kStackSymbols];
  bool stack_bound[kStackSymbols] = {};
  size_t stack_from[kStackSymbols];
  std::vector<int64_t> heap_values;
  std::vector<size_t> heap_from;
  int64_t* values = stack_values;
  bool* bound = stack_bound;
  size_t* from = stack_from;  // the index in dims_ that bound each symbol
  std::unique_ptr<bool[]> heap_bound;
  if (symbols_.size() > kStackSymbols) {
    heap_values.assign(symbols_.size(), 0);
    heap_bound.reset(new bool[symbols_.size()]());
    heap_from.assign(symbols_.size(), 0);
    values = heap_values.data();
    bound = heap_bound.get();
    from = heap_from.data();
  }
  for (size_t k = 0; k < dims_.size(); ++k) {
    const Dim& d = dims_[k];
    if (d.input >= num_inputs || d.dim >= ndims[d.input]) continue;  // the runner checks ranks
    const int64_t actual = shapes[d.input][d.dim];
    const bool bare = d.ops.size() == 1 && d.ops[0].kind == ShapeOp::Sym;
    if (bare) {
      const size_t sym = static_cast<size_t>(d.ops[0].value);
      if (!bound[sym]) {
        bound[sym] = true;
        values[sym] = actual;
        from[sym] = k;
        continue;
      }
      if (values[sym] == actual) continue;
      const Dim& first = dims_[from[sym]];
      *why = dim_name(d.input, d.dim, names) + " is " + std::to_string(actual) + ", but " +
             dim_name(first.input, first.dim, names) + " is " + std::to_string(values[sym]) +
             ": the model was compiled with both as one size (" + symbols_[sym] + "), so they must agree";
      return false;
    }
    int64_t expected = 0;
    if (!evaluate(d.ops, values, bound, &expected) || expected == actual) continue;
    *why = dim_name(d.input, d.dim, names) + " is " + std::to_string(actual) + ", but the model computes it as " +
           d.text + " = " + std::to_string(expected) + " from the other inputs' dims, so they must agree";
    return false;
  }
  return true;
}

}  // namespace aotrun::pt2
