#include "linkinfo/elf_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "base/unique_fd.hpp"

namespace aotrun {
namespace {

// A read-only mapping of the whole file; every access is bounds-checked.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      const int err = errno;
      fail(err == ENOENT ? Code::NotFound : Code::LoadFailed, "cannot open '" + path + "': " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
      fail(Code::LoadFailed, "'" + path + "' is not a readable, non-empty regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) fail(Code::LoadFailed, "cannot map '" + path + "': " + std::strerror(errno));
    data_ = static_cast<const unsigned char*>(p);
  }
  ~MappedFile() { ::munmap(const_cast<unsigned char*>(data_), size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // A pointer to `count` objects of T at `offset`, or a LOAD_FAILED naming `what`.
  template <typename T>
  const T* at(uint64_t offset, uint64_t count, const char* what) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T)) {
      fail(Code::LoadFailed, "'" + path_ + "': " + what + " lies outside the file");
    }
    // The mapping is page-aligned, so this aligns the object in memory: a
    // table at an odd offset is damaged, and reading it in place is undefined.
    if (offset % alignof(T) != 0) {
      fail(Code::LoadFailed, "'" + path_ + "': " + what + " at byte " + std::to_string(offset) + " is not " +
                                 std::to_string(alignof(T)) + "-byte aligned");
    }
    return reinterpret_cast<const T*>(data_ + offset);
  }
  // The NUL-terminated string at `offset` of a string table [base, base+len).
  std::string str(uint64_t base, uint64_t len, uint64_t offset) const {
    if (offset >= len) fail(Code::LoadFailed, "'" + path_ + "': a name lies outside its string table");
    const char* s = at<char>(base, len, "a string table") + offset;
    const void* nul = std::memchr(s, '\0', len - offset);
    if (nul == nullptr) fail(Code::LoadFailed, "'" + path_ + "': an unterminated name in a string table");
    return std::string(s, static_cast<const char*>(nul));
  }

 private:
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

ElfDynamicSymbols read_elf_dynamic_symbols(const std::string& path, const std::string& defined_prefix) {
  const MappedFile f(path);
  const Elf64_Ehdr* eh = f.at<Elf64_Ehdr>(0, 1, "the ELF header");
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_ident[EI_DATA] != ELFDATA2LSB) {
    fail(Code::LoadFailed, "'" + path + "' is not a 64-bit little-endian ELF file");
  }
  ElfDynamicSymbols out;
  if (eh->e_shoff == 0 || eh->e_shnum == 0) return out;
  if (eh->e_shentsize != sizeof(Elf64_Shdr)) fail(Code::LoadFailed, "'" + path + "': unexpected section header size");
  const Elf64_Shdr* sh = f.at<Elf64_Shdr>(eh->e_shoff, eh->e_shnum, "the section header table");
  auto strtab_of = [&](const Elf64_Shdr& s) -> const Elf64_Shdr& {
    if (s.sh_link >= eh->e_shnum) fail(Code::LoadFailed, "'" + path + "': a section links to no string table");
    return sh[s.sh_link];
  };
  for (uint16_t i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& s = sh[i];
    if (s.sh_type == SHT_DYNSYM) {
      const Elf64_Shdr& strs = strtab_of(s);
      const uint64_t n = s.sh_size / sizeof(Elf64_Sym);
      const Elf64_Sym* syms = f.at<Elf64_Sym>(s.sh_offset, n, "the dynamic symbol table");
      for (uint64_t k = 1; k < n; ++k) {  // entry 0 is the null symbol
        const Elf64_Sym& y = syms[k];
        const unsigned bind = ELF64_ST_BIND(y.st_info);
        if (y.st_name == 0 || (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)) continue;
        std::string name = f.str(strs.sh_offset, strs.sh_size, y.st_name);
        if (y.st_shndx == SHN_UNDEF) {
          if (bind != STB_WEAK) out.undefined.push_back(std::move(name));
        } else if (ELF64_ST_VISIBILITY(y.st_other) == STV_DEFAULT && name.rfind(defined_prefix, 0) == 0) {
          out.defined.push_back(std::move(name));
        }
      }
    } else if (s.sh_type == SHT_GNU_verneed) {
      const Elf64_Shdr& strs = strtab_of(s);
      uint64_t off = s.sh_offset;
      for (uint64_t k = 0; k < s.sh_info && k < 4096; ++k) {  // sh_info: the number of entries
        const Elf64_Verneed* vn = f.at<Elf64_Verneed>(off, 1, "a version need");
        const std::string file = f.str(strs.sh_offset, strs.sh_size, vn->vn_file);
        uint64_t aoff = off + vn->vn_aux;
        for (uint16_t a = 0; a < vn->vn_cnt; ++a) {
          const Elf64_Vernaux* va = f.at<Elf64_Vernaux>(aoff, 1, "a version need entry");
          out.needs.push_back({file, f.str(strs.sh_offset, strs.sh_size, va->vna_name)});
          if (va->vna_next == 0) break;
          aoff += va->vna_next;
        }
        if (vn->vn_next == 0) break;
        off += vn->vn_next;
      }
    } else if (s.sh_type == SHT_GNU_verdef) {
      const Elf64_Shdr& strs = strtab_of(s);
      uint64_t off = s.sh_offset;
      for (uint64_t k = 0; k < s.sh_info && k < 65536; ++k) {
        const Elf64_Verdef* vd = f.at<Elf64_Verdef>(off, 1, "a version definition");
        if (vd->vd_cnt > 0 && !(vd->vd_flags & VER_FLG_BASE)) {
          const Elf64_Verdaux* va = f.at<Elf64_Verdaux>(off + vd->vd_aux, 1, "a version definition entry");
          out.versions.push_back(f.str(strs.sh_offset, strs.sh_size, va->vda_name));
        }
        if (vd->vd_next == 0) break;
        off += vd->vd_next;
      }
    }
  }
  std::sort(out.defined.begin(), out.defined.end());
  return out;
}

bool version_less(const std::string& a, const std::string& b) {
  auto numbers = [](const std::string& v) {
    std::vector<long> n;
    const auto us = v.find_last_of('_');
    if (us == std::string::npos) return n;
    const char* p = v.c_str() + us + 1;
    while (*p != '\0') {
      char* end = nullptr;
      const long x = std::strtol(p, &end, 10);
      if (end == p) return std::vector<long>{};
      n.push_back(x);
      p = *end == '.' ? end + 1 : end;
      if (*end != '.' && *end != '\0') return std::vector<long>{};
    }
    return n;
  };
  const auto na = numbers(a), nb = numbers(b);
  if (na.empty() || nb.empty()) return false;
  return std::lexicographical_compare(na.begin(), na.end(), nb.begin(), nb.end());
}

}  // namespace aotrun
