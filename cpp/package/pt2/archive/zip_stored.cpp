#include "package/pt2/archive/zip_stored.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace aotrun::pt2 {
namespace {

constexpr uint32_t kEocd = 0x06054b50, kZip64Locator = 0x07064b50, kZip64Eocd = 0x06064b50;
constexpr uint32_t kCentral = 0x02014b50, kLocal = 0x04034b50;
constexpr uint64_t kMaxCentral = 64u << 20;

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The bytes of a zip archive: a file, or a buffer (an archive inside one).
struct Source {
  int fd = -1;
  const unsigned char* data = nullptr;
  uint64_t size = 0;

  bool read_at(uint64_t off, void* buf, size_t n) const {
    if (off > size || n > size - off) return false;
    if (n == 0) return true;  // an empty central directory: no buffer to copy into
    if (data != nullptr) {
      std::memcpy(buf, data + off, n);
      return true;
    }
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
      const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
      if (r <= 0) return false;
      p += r;
      off += static_cast<uint64_t>(r);
      n -= static_cast<size_t>(r);
    }
    return true;
  }
};

// Central directory location: offset, size.
bool find_central(const Source& src, uint64_t* cd_off, uint64_t* cd_size) {
  const uint64_t file_size = src.size;
  const uint64_t tail = std::min<uint64_t>(file_size, 22 + 65535);
  std::vector<unsigned char> t(tail);
  if (tail < 22 || !src.read_at(file_size - tail, t.data(), tail)) return false;
  for (uint64_t i = tail - 22 + 1; i-- > 0;) {
    const unsigned char* e = t.data() + i;
    if (le(e, 4) != kEocd) continue;
    *cd_size = le(e + 12, 4);
    *cd_off = le(e + 16, 4);
    if (*cd_off != 0xFFFFFFFFu && *cd_size != 0xFFFFFFFFu) return true;
    // ZIP64: the locator sits right before the end record.
    const uint64_t eocd_pos = file_size - tail + i;
    unsigned char loc[20], z[56];
    if (eocd_pos < 20 || !src.read_at(eocd_pos - 20, loc, 20) || le(loc, 4) != kZip64Locator) return false;
    const uint64_t z_off = le(loc + 8, 8);
    if (z_off > file_size - 56 || !src.read_at(z_off, z, 56) || le(z, 4) != kZip64Eocd) return false;
    *cd_size = le(z + 40, 8);
    *cd_off = le(z + 48, 8);
    return true;
  }
  return false;
}

// One central directory record, its ZIP64 fields resolved.
struct Central {
  std::string name;
  uint64_t flags = 0, method = 0, csize = 0, usize = 0, local = 0;
};

enum class Walk { Stopped, Ended, Broken };

// Calls `f` with every central directory record until it returns true.
template <typename F>
Walk walk_central(const Source& src, F&& f) {
  if (src.size < 22) return Walk::Broken;
  uint64_t cd_off = 0, cd_size = 0;
  if (!find_central(src, &cd_off, &cd_size) || cd_size > kMaxCentral || cd_off > src.size ||
      cd_size > src.size - cd_off) {
    return Walk::Broken;
  }
  std::vector<unsigned char> cd(cd_size);
  if (!src.read_at(cd_off, cd.data(), cd_size)) return Walk::Broken;
  for (uint64_t at = 0; at + 46 <= cd_size;) {
    const unsigned char* h = cd.data() + at;
    if (le(h, 4) != kCentral) return Walk::Broken;
    const uint64_t n = le(h + 28, 2), x = le(h + 30, 2), c = le(h + 32, 2);
    if (at + 46 + n + x + c > cd_size) return Walk::Broken;
    Central r;
    r.name.assign(reinterpret_cast<const char*>(h + 46), n);
    r.flags = le(h + 8, 2);
    r.method = le(h + 10, 2);
    r.csize = le(h + 20, 4);
    r.usize = le(h + 24, 4);
    r.local = le(h + 42, 4);
    // ZIP64 extra field: the 64-bit values of the fields saturated above, in order.
    for (const unsigned char* e = h + 46 + n; e + 4 <= h + 46 + n + x;) {
      const uint64_t id = le(e, 2), len = le(e + 2, 2);
      if (e + 4 + len > h + 46 + n + x) return Walk::Broken;
      if (id == 1) {
        const unsigned char* v = e + 4;
        const unsigned char* end = v + len;
        for (uint64_t* fld : {&r.usize, &r.csize, &r.local}) {
          if (*fld != 0xFFFFFFFFu) continue;
          if (v + 8 > end) return Walk::Broken;
          *fld = le(v, 8);
          v += 8;
        }
      }
      e += 4 + len;
    }
    if (f(r)) return Walk::Stopped;
    at += 46 + n + x + c;
  }
  return Walk::Ended;
}

// Where the data of a stored, unencrypted entry lies; false when it does not
// lie inside the archive.
bool stored_data(const Source& src, const Central& r, uint64_t* offset) {
  if (r.method != 0 || (r.flags & 1) != 0 || r.usize != r.csize) return false;
  unsigned char lh[30];
  if (r.local > src.size - std::min<uint64_t>(src.size, 30) || !src.read_at(r.local, lh, 30) || le(lh, 4) != kLocal) {
    return false;
  }
  const uint64_t data = r.local + 30 + le(lh + 26, 2) + le(lh + 28, 2);
  if (data > src.size || r.usize > src.size - data) return false;
  *offset = data;
  return true;
}

}  // namespace

bool stored_entry_offset(int fd, const std::string& name, uint64_t size, uint64_t* offset) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 64) return false;
  Source src;
  src.fd = fd;
  src.size = static_cast<uint64_t>(st.st_size);
  bool ok = false;
  walk_central(src, [&](const Central& r) {
    if (r.name != name) return false;
    ok = r.usize == size && stored_data(src, r, offset);
    return true;
  });
  return ok;
}

bool stored_entries(const uint8_t* data, uint64_t size, size_t max_entries, std::vector<StoredEntry>* out,
                    std::string* why) {
  Source src;
  src.data = data;
  src.size = size;
  out->clear();
  *why = "";
  const Walk w = walk_central(src, [&](const Central& r) {
    uint64_t offset = 0;
    if (out->size() >= max_entries) {
      *why = "it has more than " + std::to_string(max_entries) + " entries";
    } else if (!stored_data(src, r, &offset)) {
      *why = "entry '" + r.name + "' is compressed, encrypted or outside the archive";
    } else {
      out->push_back({r.name, offset, r.usize});
      return false;
    }
    return true;
  });
  if (w == Walk::Broken) *why = "its index is unreadable";
  return w == Walk::Ended;
}

}  // namespace aotrun::pt2
