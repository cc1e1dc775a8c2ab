#include "package/pt2/constants/source_constants.hpp"

#include <cctype>
#include <string>

#include "base/checked_math.hpp"

namespace aotrun::pt2 {
namespace {

constexpr size_t kMaxDims = 64;
constexpr const char kPrefix[] = "constants_info_[";

// A cursor over one line's value; every read is bounded by `end`.
struct Cursor {
  const char* p;
  const char* end;
  void spaces() {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
  }
  bool eat(char c) {
    spaces();
    if (p < end && *p == c) {
      ++p;
      return true;
    }
    return false;
  }
  bool integer(int64_t* out) {
    spaces();
    bool neg = false;
    if (p < end && *p == '-') {
      neg = true;
      ++p;
    }
    if (p >= end || !std::isdigit(static_cast<unsigned char>(*p))) return false;
    int64_t v = 0;
    while (p < end && std::isdigit(static_cast<unsigned char>(*p))) {
      if (!checked_mul<int64_t>(v, 10, &v) || !checked_add<int64_t>(v, *p - '0', &v)) return false;
      ++p;
    }
    // A literal suffix (64L, 1LL) is part of the number's spelling.
    while (p < end && (*p == 'L' || *p == 'l' || *p == 'U' || *p == 'u')) ++p;
    *out = neg ? -v : v;
    return true;
  }
  bool list(std::vector<int64_t>* out) {
    out->clear();
    if (!eat('{')) return false;
    if (eat('}')) return true;  // a 0-d constant
    for (;;) {
      int64_t v = 0;
      if (out->size() >= kMaxDims || !integer(&v)) return false;
      out->push_back(v);
      if (eat('}')) return true;
      if (!eat(',')) return false;
    }
  }
  // A plain string literal: no escapes (inductor's names are identifiers and
  // dotted FQNs), so one with a backslash is refused rather than misread.
  bool literal(std::string* out) {
    if (!eat('"')) return false;
    const char* start = p;
    while (p < end && *p != '"') {
      if (*p == '\\') return false;
      ++p;
    }
    if (p >= end) return false;
    out->assign(start, p);
    ++p;
    return true;
  }
  bool finish() { return eat(';'); }
};

}  // namespace

std::vector<SourceConstant> parse_source_constants(const std::string& source, size_t max_constants) {
  std::vector<SourceConstant> out;
  std::vector<bool> malformed, has_shape, has_stride;
  size_t pos = 0;
  while ((pos = source.find(kPrefix, pos)) != std::string::npos) {
    const size_t line_end = std::min(source.find('\n', pos), source.size());
    Cursor c{source.data() + pos + sizeof kPrefix - 1, source.data() + line_end};
    pos = line_end;
    int64_t index = -1;
    if (!c.integer(&index) || !c.eat(']') || !c.eat('.')) continue;
    if (index < 0 || static_cast<uint64_t>(index) >= max_constants) continue;
    const char* field = c.p;
    while (c.p < c.end && (std::isalnum(static_cast<unsigned char>(*c.p)) || *c.p == '_')) ++c.p;
    const std::string name(field, c.p);
    if (!c.eat('=')) continue;  // a read of the field, not its initialisation
    const size_t i = static_cast<size_t>(index);
    if (out.size() <= i) {
      out.resize(i + 1);
      malformed.resize(i + 1, false);
      has_shape.resize(i + 1, false);
      has_stride.resize(i + 1, false);
    }
    SourceConstant& s = out[i];
    bool ok = true;
    if (name == "name") {
      ok = c.literal(&s.name) && c.finish();
    } else if (name == "shape") {
      ok = c.list(&s.shape) && c.finish();
      has_shape[i] = ok;
    } else if (name == "stride") {
      ok = c.list(&s.stride) && c.finish();
      has_stride[i] = ok;
    } else if (name == "offset") {
      ok = c.integer(&s.offset) && c.finish() && s.offset >= 0;
    } else if (name == "data_size") {
      ok = c.integer(&s.data_size) && c.finish() && s.data_size >= 0;
    } else if (name == "layout") {
      // static_cast<int32_t>(cached_torch_layout__mkldnn): the name says it.
      s.packed = std::string(c.p, c.end).find("layout__mkldnn") != std::string::npos;
    }
    if (!ok) malformed[i] = true;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    SourceConstant& s = out[i];
    s.valid = !malformed[i] && !s.name.empty() && has_shape[i] && has_stride[i] && s.shape.size() == s.stride.size();
    for (int64_t d : s.shape) s.valid = s.valid && d >= 0;
    for (int64_t d : s.stride) s.valid = s.valid && d >= 0;
  }
  return out;
}

}  // namespace aotrun::pt2
