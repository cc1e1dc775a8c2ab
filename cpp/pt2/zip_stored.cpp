#include "pt2/zip_stored.hpp"

#include <sys/stat.h>
#include <unistd.h>

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

bool read_at(int fd, uint64_t off, void* buf, size_t n) {
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

// Central directory location: offset, size.
bool find_central(int fd, uint64_t file_size, uint64_t* cd_off, uint64_t* cd_size) {
  const uint64_t tail = std::min<uint64_t>(file_size, 22 + 65535);
  std::vector<unsigned char> t(tail);
  if (tail < 22 || !read_at(fd, file_size - tail, t.data(), tail)) return false;
  for (uint64_t i = tail - 22 + 1; i-- > 0;) {
    const unsigned char* e = t.data() + i;
    if (le(e, 4) != kEocd) continue;
    *cd_size = le(e + 12, 4);
    *cd_off = le(e + 16, 4);
    if (*cd_off != 0xFFFFFFFFu && *cd_size != 0xFFFFFFFFu) return true;
    // ZIP64: the locator sits right before the end record.
    const uint64_t eocd_pos = file_size - tail + i;
    unsigned char loc[20], z[56];
    if (eocd_pos < 20 || !read_at(fd, eocd_pos - 20, loc, 20) || le(loc, 4) != kZip64Locator) return false;
    const uint64_t z_off = le(loc + 8, 8);
    if (z_off > file_size - 56 || !read_at(fd, z_off, z, 56) || le(z, 4) != kZip64Eocd) return false;
    *cd_size = le(z + 40, 8);
    *cd_off = le(z + 48, 8);
    return true;
  }
  return false;
}

}  // namespace

bool stored_entry_offset(int fd, const std::string& name, uint64_t size, uint64_t* offset) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return false;
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 64) return false;
  uint64_t cd_off = 0, cd_size = 0;
  if (!find_central(fd, file_size, &cd_off, &cd_size) || cd_size > kMaxCentral || cd_off > file_size ||
      cd_size > file_size - cd_off) {
    return false;
  }
  std::vector<unsigned char> cd(cd_size);
  if (!read_at(fd, cd_off, cd.data(), cd_size)) return false;
  for (uint64_t at = 0; at + 46 <= cd_size;) {
    const unsigned char* h = cd.data() + at;
    if (le(h, 4) != kCentral) return false;
    const uint64_t n = le(h + 28, 2), x = le(h + 30, 2), c = le(h + 32, 2);
    if (at + 46 + n + x + c > cd_size) return false;
    const bool match = n == name.size() && std::memcmp(h + 46, name.data(), n) == 0;
    if (!match) {
      at += 46 + n + x + c;
      continue;
    }
    const uint64_t flags = le(h + 8, 2), method = le(h + 10, 2);
    uint64_t csize = le(h + 20, 4), usize = le(h + 24, 4), local = le(h + 42, 4);
    // ZIP64 extra field: the 64-bit values of the fields saturated above, in order.
    for (const unsigned char* e = h + 46 + n; e + 4 <= h + 46 + n + x;) {
      const uint64_t id = le(e, 2), len = le(e + 2, 2);
      if (e + 4 + len > h + 46 + n + x) return false;
      if (id == 1) {
        const unsigned char* v = e + 4;
        const unsigned char* end = v + len;
        for (uint64_t* f : {&usize, &csize, &local}) {
          if (*f != 0xFFFFFFFFu) continue;
          if (v + 8 > end) return false;
          *f = le(v, 8);
          v += 8;
        }
      }
      e += 4 + len;
    }
    if (method != 0 || (flags & 1) != 0 || usize != size || csize != size) return false;
    unsigned char lh[30];
    if (local > file_size - 30 || !read_at(fd, local, lh, 30) || le(lh, 4) != kLocal) return false;
    const uint64_t data = local + 30 + le(lh + 26, 2) + le(lh + 28, 2);
    if (data > file_size || size > file_size - data) return false;
    *offset = data;
    return true;
  }
  return false;
}

}  // namespace aotrun::pt2
