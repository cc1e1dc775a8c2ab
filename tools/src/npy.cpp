#include "npy.hpp"

#include <cctype>
#include <cstring>
#include <fstream>
#include <map>

#include "describe.hpp"
#include "error.hpp"

namespace aotrun::cli {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "'" + path + "' is not a usable .npy file: " + why);
}

void require_little_endian_host(const std::string& path) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  throw Failure(AOTRUN_ERR_UNSUPPORTED, "'" + path + "': .npy support assumes a little-endian host");
#else
  (void)path;
#endif
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Only the forms NumPy writes are accepted: string keys; string, bool, int
// or tuple-of-int values.
struct HeaderValue {
  enum Kind { kString, kBool, kInt, kTuple } kind = kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  std::map<std::string, HeaderValue> parse() {
    std::map<std::string, HeaderValue> dict;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      dict[key] = parse_value();
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') bad(path_, "malformed header dict");
    }
    return dict;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(path_, std::string("malformed header, expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad(path_, "malformed header, expected a string");
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad(path_, "malformed header, unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  int64_t parse_int() {
    skip_space();
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    // Python 2 era files may write long ints as "3L".
    const std::string digits = s_.substr(start, pos_ - start);
    if (peek() == 'L') ++pos_;
    if (digits.empty() || digits == "-") bad(path_, "malformed header, expected an integer");
    try {
      return std::stoll(digits);
    } catch (const std::exception&) {
      bad(path_, "dimension out of range: " + digits);
    }
  }
  HeaderValue parse_value() {
    skip_space();
    HeaderValue v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = HeaderValue::kString;
      v.text = parse_string();
    } else if (s_.compare(pos_, 4, "True") == 0) {
      v.kind = HeaderValue::kBool;
      v.flag = true;
      pos_ += 4;
    } else if (s_.compare(pos_, 5, "False") == 0) {
      v.kind = HeaderValue::kBool;
      pos_ += 5;
    } else if (c == '(') {
      v.kind = HeaderValue::kTuple;
      ++pos_;
      while (true) {
        skip_space();
        if (peek() == ')') {
          ++pos_;
          break;
        }
        v.ints.push_back(parse_int());
        skip_space();
        if (peek() == ',') {
          ++pos_;
        } else if (peek() != ')') {
          bad(path_, "malformed shape tuple");
        }
      }
    } else {
      v.kind = HeaderValue::kInt;
      v.ints.push_back(parse_int());
    }
    return v;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Reverse of npy_descr: the byte-order mark may be '<' (little), '|' (not
// applicable, one-byte types) or '=' (native, little-endian here).
bool dtype_from_descr(const std::string& descr, DLDataType* out) {
  if (descr.size() < 3) return false;
  const char order = descr[0];
  if (order != '<' && order != '|' && order != '=') return false;
  const std::string body = descr.substr(1);
  static const std::map<std::string, DLDataType> kTypes = {
      {"f4", {kDLFloat, 32, 1}},     {"f8", {kDLFloat, 64, 1}},      {"i1", {kDLInt, 8, 1}},
      {"i2", {kDLInt, 16, 1}},       {"i4", {kDLInt, 32, 1}},        {"i8", {kDLInt, 64, 1}},
      {"u1", {kDLUInt, 8, 1}},       {"b1", {kDtypeCodeBool, 8, 1}}, {"c8", {kDLComplex, 64, 1}},
      {"c16", {kDLComplex, 128, 1}},
  };
  auto it = kTypes.find(body);
  if (it == kTypes.end()) return false;
  if (order == '|' && dtype_size(it->second) != 1) return false;
  *out = it->second;
  return true;
}

uint32_t read_le(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

std::string npy_descr(DLDataType d) {
  if (d.lanes != 1) return "";
  if (d.code == kDLFloat && d.bits == 32) return "<f4";
  if (d.code == kDLFloat && d.bits == 64) return "<f8";
  if (d.code == kDLInt && d.bits == 8) return "|i1";
  if (d.code == kDLInt && d.bits == 16) return "<i2";
  if (d.code == kDLInt && d.bits == 32) return "<i4";
  if (d.code == kDLInt && d.bits == 64) return "<i8";
  if (d.code == kDLUInt && d.bits == 8) return "|u1";
  if (is_bool(d)) return "|b1";
  if (d.code == kDLComplex && d.bits == 64) return "<c8";
  if (d.code == kDLComplex && d.bits == 128) return "<c16";
  return "";
}

HostTensor read_npy(const std::string& path, const std::string& name) {
  require_little_endian_host(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Failure(AOTRUN_ERR_NOT_FOUND, "cannot open input file '" + path + "': " + std::strerror(errno));
  }
  unsigned char prefix[kMagicLen + 2];
  if (!in.read(reinterpret_cast<char*>(prefix), sizeof(prefix)) || std::memcmp(prefix, kMagic, kMagicLen) != 0) {
    bad(path, "missing the \\x93NUMPY magic");
  }
  const unsigned major = prefix[kMagicLen];
  size_t len_bytes = 0;
  if (major == 1) {
    len_bytes = 2;
  } else if (major == 2 || major == 3) {
    len_bytes = 4;
  } else {
    bad(path, "format version " + std::to_string(major) + " is not supported");
  }
  unsigned char len_buf[4];
  if (!in.read(reinterpret_cast<char*>(len_buf), static_cast<std::streamsize>(len_bytes))) {
    bad(path, "truncated header");
  }
  const uint32_t header_len = read_le(len_buf, len_bytes);
  if (header_len > (1u << 24)) bad(path, "header length " + std::to_string(header_len));
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) bad(path, "truncated header");

  const auto dict = HeaderParser(header, path).parse();
  auto descr = dict.find("descr");
  auto fortran = dict.find("fortran_order");
  auto shape = dict.find("shape");
  if (descr == dict.end() || descr->second.kind != HeaderValue::kString) {
    bad(path, "header has no 'descr' string");
  }
  if (fortran == dict.end() || fortran->second.kind != HeaderValue::kBool) {
    bad(path, "header has no 'fortran_order' flag");
  }
  if (shape == dict.end() || shape->second.kind != HeaderValue::kTuple) {
    bad(path, "header has no 'shape' tuple");
  }
  DLDataType dtype{};
  if (!dtype_from_descr(descr->second.text, &dtype)) {
    bad(path, "dtype '" + descr->second.text + "' is not supported (little-endian f4, f8, i1, i2, i4, i8, u1, b1 are)");
  }
  if (fortran->second.flag) bad(path, "Fortran-order arrays are not supported; save C order");
  for (int64_t d : shape->second.ints) {
    if (d < 0) bad(path, "negative dimension in shape");
  }

  HostTensor tensor(name, dtype, shape->second.ints);
  if (!in.read(static_cast<char*>(tensor.data()), static_cast<std::streamsize>(tensor.nbytes()))) {
    bad(path, "data truncated: expected " + std::to_string(tensor.nbytes()) + " bytes for " + dtype_name(dtype) +
                  shape_text(tensor.shape()));
  }
  if (in.peek() != std::char_traits<char>::eof()) {
    bad(path, "trailing bytes after " + std::to_string(tensor.nbytes()) + " bytes of data");
  }
  return tensor;
}

void write_npy(const std::string& path, const HostTensor& tensor) {
  require_little_endian_host(path);
  const std::string descr = npy_descr(tensor.dtype());
  if (descr.empty()) {
    throw Failure(AOTRUN_ERR_UNSUPPORTED, "cannot write '" + tensor.name() + "' as .npy: dtype " +
                                              dtype_name(tensor.dtype()) + " is not supported");
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    shape += std::to_string(tensor.shape()[i]);
    // A one-element Python tuple needs its trailing comma.
    if (tensor.shape().size() == 1 || i + 1 < tensor.shape().size()) shape += ",";
    if (i + 1 < tensor.shape().size()) shape += " ";
  }
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";

  // Pad with spaces and a final newline so the data starts on a 64-byte
  // boundary, as NumPy does.
  size_t len_bytes = 2;
  unsigned major = 1;
  auto padded = [&](size_t lb) {
    const size_t unpadded = kMagicLen + 2 + lb + header.size() + 1;
    return header.size() + (64 - unpadded % 64) % 64 + 1;
  };
  size_t total = padded(len_bytes);
  if (total > 0xFFFF) {
    len_bytes = 4;
    major = 2;
    total = padded(len_bytes);
  }
  header.append(total - header.size() - 1, ' ');
  header.push_back('\n');

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Failure("IO_ERROR", "cannot create '" + path + "': " + std::strerror(errno));
  out.write(kMagic, kMagicLen);
  const char version[2] = {static_cast<char>(major), 0};
  out.write(version, 2);
  for (size_t i = 0; i < len_bytes; ++i) out.put(static_cast<char>((total >> (8 * i)) & 0xFF));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(tensor.data()), static_cast<std::streamsize>(tensor.nbytes()));
  out.close();
  if (!out) throw Failure("IO_ERROR", "writing '" + path + "' failed: " + std::strerror(errno));
}

}  // namespace aotrun::cli
