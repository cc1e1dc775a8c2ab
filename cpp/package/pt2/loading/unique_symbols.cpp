#include "package/pt2/loading/unique_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace aotrun::pt2 {
namespace {

bool read_at(int fd, uint64_t off, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    off += static_cast<uint64_t>(r);
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_at(int fd, uint64_t off, const void* buf, size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    off += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Every bound is checked against the file's size: a damaged table is
// skipped, never followed.
size_t demote(int fd, uint64_t file_size) {
  Elf64_Ehdr eh{};
  if (!read_at(fd, 0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return 0;
  }
  const unsigned char host_data = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  if (eh.e_ident[EI_DATA] != host_data || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shoff > file_size || uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > file_size - eh.e_shoff) {
    return 0;
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!read_at(fd, eh.e_shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr))) return 0;
  size_t demoted = 0;
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_type != SHT_DYNSYM || s.sh_entsize != sizeof(Elf64_Sym) || s.sh_offset > file_size ||
        s.sh_size > file_size - s.sh_offset) {
      continue;
    }
    std::vector<Elf64_Sym> syms(s.sh_size / sizeof(Elf64_Sym));
    if (!read_at(fd, s.sh_offset, syms.data(), syms.size() * sizeof(Elf64_Sym))) continue;
    for (size_t i = 0; i < syms.size(); ++i) {
      if (ELF64_ST_BIND(syms[i].st_info) != STB_GNU_UNIQUE) continue;
      const unsigned char info = ELF64_ST_INFO(STB_WEAK, ELF64_ST_TYPE(syms[i].st_info));
      if (write_at(fd, s.sh_offset + i * sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_info), &info, 1)) ++demoted;
    }
  }
  return demoted;
}

}  // namespace

size_t demote_unique_symbols(int dir_fd, const std::string& name) noexcept {
  // The extracted library is read-only (0500); the private directory is
  // ours, so the file is made writable for the rewrite and read-only again.
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return 0;
  if (::fchmodat(dir_fd, name.c_str(), 0700, 0) != 0) return 0;
  const int fd = ::openat(dir_fd, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  size_t n = 0;
  if (fd >= 0) {
    n = demote(fd, static_cast<uint64_t>(st.st_size));
    ::close(fd);
  }
  (void)::fchmodat(dir_fd, name.c_str(), st.st_mode & 07777, 0);
  return n;
}

}  // namespace aotrun::pt2
