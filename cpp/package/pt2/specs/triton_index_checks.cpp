// Index checks of a CUDA model's Triton kernels (index_bounds.hpp). The
// wrapper keeps each kernel's Python source beside the code that launches
// its .cubin:
//
//   def triton_per_fused_add_embedding_3(in_ptr0, in_ptr1, out_ptr1, xnumel, ...):
//       tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
//       tmp1 = tl.full([1, 1], 1000, tl.int32)
//       tmp2 = tmp0 + tmp1
//       tmp3 = tmp0 < 0
//       tmp4 = tl.where(tmp3, tmp2, tmp0)
//       tl.device_assert(((0 <= tmp4) & (tmp4 < 1000)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 1000")
//   ...
//   call_triton_per_fused_add_embedding_3(arg23_1, embed_weight, buf5, ...);
//
// A failed device_assert ends the process's CUDA context, so a checked value
// loaded straight from a model input (through casts, or wrapped from
// negative by adding the table size) gives that input's accepted range.
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "package/pt2/specs/index_bounds.hpp"
#include "package/pt2/specs/index_check_parts.hpp"
#include "package/pt2/specs/source_text.hpp"

namespace aotrun::pt2 {
namespace {

using source_text::balanced_end;
using source_text::identifier_at;
using source_text::is_ident;
using source_text::split_top_level;
using source_text::trim;

constexpr const char kAssert[] = "tl.device_assert(";
constexpr int kMaxDepth = 32;  // definitions followed back from one check

struct TritonKernel {
  std::string name;
  std::vector<std::string> params;
  size_t body = 0, end = 0;  // the def's text, up to the end of its source string
};

// def NAME(params): ... up to the closing ''' of the source string.
std::vector<TritonKernel> find_triton_kernels(const std::string& s) {
  std::vector<TritonKernel> out;
  constexpr const char kDef[] = "def ";
  for (size_t at = s.find(kDef); at != std::string::npos; at = s.find(kDef, at + 1)) {
    if (at > 0 && is_ident(s[at - 1])) continue;
    TritonKernel k;
    k.name = identifier_at(s, at + 4);
    const size_t open = at + 4 + k.name.size();
    if (k.name.empty() || open >= s.size() || s[open] != '(') continue;
    const size_t close = balanced_end(s, open);
    if (close == std::string::npos) continue;
    for (const std::string& p : split_top_level(s.substr(open + 1, close - open - 1))) {
      k.params.push_back(trim(p.substr(0, p.find(':'))));  // "XBLOCK : tl.constexpr"
    }
    k.body = close;
    k.end = s.find("'''", close);
    if (k.end == std::string::npos) k.end = s.size();
    out.push_back(std::move(k));
  }
  return out;
}

// The right-hand side of "NAME = ..." in the kernel, before `before`.
std::string definition(const std::string& s, const TritonKernel& k, const std::string& name, size_t before) {
  const std::string key = " " + name + " = ";
  size_t at = s.rfind(key, before);
  if (at == std::string::npos || at < k.body) return "";
  const size_t from = at + key.size(), eol = s.find('\n', from);
  return trim(s.substr(from, (eol == std::string::npos || eol > k.end ? k.end : eol) - from));
}

// Where a checked value comes from: the parameter it is loaded from, and
// whether negative values were wrapped by adding the table size.
struct Origin {
  std::string ptr;  // "" when not loaded straight from a parameter
  bool wrap = false;
};

Origin trace(const std::string& s, const TritonKernel& k, const std::string& name, size_t before, int depth) {
  if (depth > kMaxDepth) return {};
  const std::string e = definition(s, k, name, before);
  // tmp0 = tl.load(in_ptr0 + (x0), xmask, ...)
  if (e.compare(0, 8, "tl.load(") == 0) {
    const std::string ptr = identifier_at(e, 8);
    return Origin{ptr.compare(0, 6, "in_ptr") == 0 ? ptr : ""};
  }
  // tmp5 = tmp4.to(tl.int64)
  const size_t to = e.find(".to(");
  if (to != std::string::npos && identifier_at(e, 0).size() == to) {
    return trace(s, k, e.substr(0, to), before, depth + 1);
  }
  // tmp4 = tl.where(tmp3, tmp2, tmp0) with tmp3 = tmp0 < 0, tmp2 = tmp0 + tmp1
  if (e.compare(0, 9, "tl.where(") == 0) {
    const size_t close = balanced_end(e, 8);
    if (close == std::string::npos) return {};
    const auto args = split_top_level(e.substr(9, close - 9));
    if (args.size() != 3) return {};
    const std::string cond = definition(s, k, trim(args[0]), before), wrapped = trim(args[1]), v = trim(args[2]);
    const std::string sum = definition(s, k, wrapped, before);
    if (cond != v + " < 0" || sum.compare(0, v.size() + 3, v + " + ") != 0) return {};
    Origin o = trace(s, k, v, before, depth + 1);
    o.wrap = !o.ptr.empty();
    return o;
  }
  return {};
}

// The argument each launch of `kernel` passes as parameter `param` (its
// plain name), "" where it is no plain name.
std::vector<std::string> launch_arguments(const std::string& s, const std::string& kernel, size_t param) {
  std::vector<std::string> out;
  for (const std::string& a : call_argument_texts(s, "call_" + kernel, param)) {
    out.push_back(!a.empty() && identifier_at(a, 0) == a ? a : "");
  }
  return out;
}

}  // namespace

void add_triton_index_checks(const std::string& s, IndexChecks* out) {
  const std::map<std::string, size_t> inputs = source_text::wrapper_input_names(s);
  const std::map<std::string, size_t> constants = source_text::wrapper_names(s, "constants_info_");
  std::map<size_t, IndexBound> merged;
  for (const IndexBound& b : out->bounds) merged.emplace(b.input, b);
  for (const TritonKernel& k : find_triton_kernels(s)) {
    for (size_t at = s.find(kAssert, k.body); at != std::string::npos && at < k.end; at = s.find(kAssert, at + 1)) {
      const size_t close = balanced_end(s, at + sizeof kAssert - 2);
      if (close == std::string::npos || close > k.end) break;
      const std::string message = last_literal(s, at, close);
      if (message.compare(0, sizeof kIndexMessage - 1, kIndexMessage) != 0) continue;
      const std::string range = message.substr(sizeof kIndexMessage - 1);
      std::string name;
      int64_t lo = 0, hi = 0;
      const Origin o = parse_index_message(range, &name, &lo, &hi) ? trace(s, k, name, at, 0) : Origin{};
      std::vector<std::string> args;
      for (size_t p = 0; !o.ptr.empty() && p < k.params.size(); ++p) {
        if (k.params[p] == o.ptr) args = launch_arguments(s, k.name, p);
      }
      const CheckTie tie = tie_check(args, inputs, constants, lo, hi, o.wrap, k.name + ": " + range, &merged);
      if (tie == CheckTie::Constants) {
        ++out->from_constants;
        out->dim_fed.push_back(UnguardedCheck{k.name, message, true});
      }
      if (tie == CheckTie::Unguarded) out->unguarded.push_back(UnguardedCheck{k.name, message, true});
    }
  }
  out->bounds.clear();
  for (auto& [i, b] : merged) out->bounds.push_back(b);
}

}  // namespace aotrun::pt2
