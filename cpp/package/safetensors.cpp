#include "package/safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <tuple>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/checked_math.hpp"
#include "base/error.hpp"
#include "base/json.hpp"
#include "base/safetensors_dtype.hpp"

namespace aotrun {

std::vector<MappedTensor> SafetensorsFile::parse_header(const char* json, size_t json_len, const uint8_t* data,
                                                        uint64_t data_size, const std::string& where) {
  const PackageJson doc = parse_package_json(json, json + json_len, where, "safetensors header", Code::BadPackage);
  const nlohmann::json& j = doc.get();
  if (!j.is_object()) fail(Code::BadPackage, where + ": safetensors header is not a JSON object");
  if (j.size() > kMaxSafetensorsTensors) fail(Code::BadPackage, where + ": too many tensors in header");
  std::vector<MappedTensor> out;
  out.reserve(j.size());
  std::vector<std::tuple<uint64_t, uint64_t, size_t>> ranges;  // begin, end, index
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string what = where + ": tensor '" + it.key() + "'";
    const auto& t = it.value();
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets")) {
      fail(Code::BadPackage, what + " needs dtype, shape and data_offsets");
    }
    MappedTensor m;
    m.name = it.key();
    if (!t["dtype"].is_string() || !safetensors_dtype(t["dtype"].get<std::string>(), &m.dtype)) {
      fail(Code::BadPackage, what + " has an unsupported dtype");
    }
    const auto& shape = t["shape"];
    if (!shape.is_array() || shape.size() > 32) fail(Code::BadPackage, what + " has a malformed shape");
    uint64_t elems = 1;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) fail(Code::BadPackage, what + " has a negative or non-integer dimension");
      uint64_t v = d.get<uint64_t>();
      if (v > (uint64_t(1) << 48) || !checked_mul(elems, v, &elems) || elems > (uint64_t(1) << 62)) {
        fail(Code::BadPackage, what + " has a shape too large");
      }
      m.shape.push_back(static_cast<int64_t>(v));
    }
    const auto& off = t["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned()) {
      fail(Code::BadPackage, what + " has malformed data_offsets");
    }
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      fail(Code::BadPackage, what + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                 ") lie outside the " + std::to_string(data_size) + "-byte data section");
    }
    // Divide before multiplying: elems * element size may not fit 64 bits.
    const uint64_t elem_bytes = m.dtype.bits / 8;
    if (elems > data_size / elem_bytes) {
      fail(Code::BadPackage, what + " has " + std::to_string(elems) + " elements, more than the " +
                                 std::to_string(data_size) + "-byte data section can hold");
    }
    uint64_t expect = 0;
    if (!checked_mul(elems, elem_bytes, &expect)) {  // cannot fail after the bound above; checked anyway
      fail(Code::BadPackage, what + " has a byte size that overflows 64 bits");
    }
    if (end - begin != expect) {
      fail(Code::BadPackage, what + " occupies " + std::to_string(end - begin) +
                                 " bytes but its dtype and shape need " + std::to_string(expect));
    }
    m.data = data + begin;
    m.bytes = expect;
    ranges.emplace_back(begin, end, out.size());
    out.push_back(std::move(m));
  }
  // The format tiles the data section: no overlap (two constants aliasing one
  // buffer), no gap, nothing after the last tensor.
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (const auto& [b, e, i] : ranges) {
    if (b != at) {
      fail(Code::BadPackage, where + ": tensor '" + out[i].name + "' starts at byte " + std::to_string(b) +
                                 " of the data section, expected " + std::to_string(at) +
                                 (b < at ? " (overlaps the previous tensor)" : " (gap)"));
    }
    at = e;
  }
  if (at != data_size) {
    fail(Code::BadPackage, where + ": the tensors cover " + std::to_string(at) + " of the " +
                               std::to_string(data_size) + " bytes of the data section");
  }
  return out;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    fail(err == ENOENT ? Code::BadPackage : Code::LoadFailed,
         "weights file '" + path + "' cannot be opened: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(Code::BadPackage, "weights file '" + path + "' is not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    fail(Code::BadPackage, "weights file '" + path + "' is truncated (" + std::to_string(size) + " bytes)");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) fail(Code::LoadFailed, "cannot map weights file '" + path + "': " + std::strerror(err));

  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  f->map_ = map;
  f->map_len_ = size;
  const uint8_t* bytes = static_cast<const uint8_t*>(map);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  // Compared as header_len > size - 8 (size >= 8 here): 8 + header_len could wrap.
  if (header_len > kMaxSafetensorsHeader || header_len > size - 8) {
    fail(Code::BadPackage, "weights file '" + path + "': header length " + std::to_string(header_len) +
                               " exceeds the file (" + std::to_string(size) + " bytes)");
  }
  const uint8_t* data = bytes + 8 + header_len;
  f->data_bytes_ = size - 8 - header_len;
  f->tensors_ = parse_header(reinterpret_cast<const char*>(bytes + 8), header_len, data, f->data_bytes_, path);
  return f;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) ::munmap(map_, map_len_);
}

}  // namespace aotrun
