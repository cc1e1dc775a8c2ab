#include "package/pt2/specs/wrapper_specs.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace aotrun::pt2 {
namespace {

constexpr const char kHandle[] = "\"input_handles[";
constexpr size_t kMaxRank = 32;
constexpr size_t kDtypeLookBack = 600;  // from the message back to aoti_torch_dtype_<T>()

// Reads a non-negative decimal at s[*pos]; false if none or out of range.
bool read_int(const std::string& s, size_t* pos, int64_t* out) {
  size_t p = *pos;
  int64_t v = 0;
  bool any = false;
  while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (s[p] - '0');
    ++p;
    any = true;
  }
  if (!any) return false;
  *pos = p;
  *out = v;
  return true;
}

// Expects `lit` at s[*pos] and moves past it.
bool eat(const std::string& s, size_t* pos, const char* lit) {
  const size_t n = std::strlen(lit);
  if (s.compare(*pos, n, lit) != 0) return false;
  *pos += n;
  return true;
}

// After a message, the expected value stands in the next string literal:
//   ss << "...at 0, " << "expected: 4, "       (or ">= 1", "<= 64")
bool value_after(const std::string& s, size_t pos, const char* marker, int64_t* out) {
  const size_t limit = std::min(s.size(), pos + 200);
  const size_t at = s.find(marker, pos);
  if (at == std::string::npos || at >= limit) return false;
  size_t p = at + std::strlen(marker);
  return read_int(s, &p, out);
}

void grow(InputCheck* c, size_t rank) {
  if (rank > static_cast<size_t>(c->rank)) c->rank = static_cast<int>(rank);
  if (c->dims.size() < rank) {
    c->dims.resize(rank, -1);
    c->min_dims.resize(rank, 0);
    c->max_dims.resize(rank, -1);
    c->strides.resize(rank, -1);
  }
}

}  // namespace

bool parse_input_checks(const std::string& source, size_t num_inputs, std::vector<InputCheck>* out, std::string* why) {
  std::vector<InputCheck> checks(num_inputs);
  std::vector<bool> seen(num_inputs, false);
  for (size_t at = source.find(kHandle); at != std::string::npos; at = source.find(kHandle, at + 1)) {
    size_t p = at + sizeof kHandle - 1;
    int64_t idx = 0;
    if (!read_int(source, &p, &idx) || !eat(source, &p, "]: ")) continue;
    if (idx < 0 || static_cast<size_t>(idx) >= num_inputs) continue;
    InputCheck& c = checks[static_cast<size_t>(idx)];
    int64_t d = 0, v = 0;
    if (eat(source, &p, "unmatched dtype, ")) {
      // The expected dtype is the aoti_torch_dtype_<T>() call just before.
      const size_t from = at > kDtypeLookBack ? at - kDtypeLookBack : 0;
      const size_t call = source.rfind("aoti_torch_dtype_", at);
      if (call == std::string::npos || call < from) continue;
      size_t q = call + std::strlen("aoti_torch_dtype_");
      std::string name;
      while (q < source.size() && (std::isalnum(static_cast<unsigned char>(source[q])) || source[q] == '_')) {
        name += source[q++];
      }
      if (name.empty() || source.compare(q, 2, "()") != 0) continue;
      c.dtype = name;
      seen[static_cast<size_t>(idx)] = true;
    } else if (eat(source, &p, "unmatched dim value at ") && read_int(source, &p, &d) && d < int64_t(kMaxRank) &&
               value_after(source, p, "expected: ", &v)) {
      grow(&c, static_cast<size_t>(d) + 1);
      c.dims[static_cast<size_t>(d)] = v;
    } else if (eat(source, &p, "dim value is too small at ") && read_int(source, &p, &d) && d < int64_t(kMaxRank) &&
               value_after(source, p, "expected it to be >= ", &v)) {
      grow(&c, static_cast<size_t>(d) + 1);
      c.min_dims[static_cast<size_t>(d)] = v;
    } else if (eat(source, &p, "dim value is too large at ") && read_int(source, &p, &d) && d < int64_t(kMaxRank) &&
               value_after(source, p, "expected to be <= ", &v)) {
      grow(&c, static_cast<size_t>(d) + 1);
      c.max_dims[static_cast<size_t>(d)] = v;
    } else if (eat(source, &p, "unmatched stride value at ") && read_int(source, &p, &d) && d < int64_t(kMaxRank)) {
      grow(&c, static_cast<size_t>(d) + 1);
      if (value_after(source, p, "expected: ", &v)) c.strides[static_cast<size_t>(d)] = v;
    }
  }
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!seen[i]) {
      *why = num_inputs == 0 || std::find(seen.begin(), seen.end(), true) == seen.end()
                 ? "the model's sources carry no input checks (older torch releases, 2.6 among them, generate "
                   "them only with aot_inductor.debug_compile)"
                 : "the model's sources carry no dtype check for input " + std::to_string(i);
      return false;
    }
  }
  *out = std::move(checks);
  return true;
}

}  // namespace aotrun::pt2
