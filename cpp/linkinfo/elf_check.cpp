#include "linkinfo/elf_check.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/checked_math.hpp"
#include "base/error.hpp"

namespace aotrun {
namespace {

// The host's ELF flavour, fixed by the build target: the dynamic loader maps
// only objects of its own class, byte order and machine.
constexpr bool kHost64 = sizeof(void*) == 8;
constexpr unsigned char kHostClass = kHost64 ? ELFCLASS64 : ELFCLASS32;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr unsigned char kHostData = ELFDATA2MSB;
#else
constexpr unsigned char kHostData = ELFDATA2LSB;
#endif
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr uint16_t kHostMachine = EM_386;
#elif defined(__arm__)
constexpr uint16_t kHostMachine = EM_ARM;
#elif defined(__riscv)
constexpr uint16_t kHostMachine = EM_RISCV;
#elif defined(__powerpc64__)
constexpr uint16_t kHostMachine = EM_PPC64;
#elif defined(__powerpc__)
constexpr uint16_t kHostMachine = EM_PPC;
#elif defined(__s390__) || defined(__s390x__)
constexpr uint16_t kHostMachine = EM_S390;
#else
#error "aotrun: unknown host architecture; add its ELF e_machine to linkinfo/elf_check.cpp"
#endif

// Host-class structures: a file of another class is refused before they are used.
using Ehdr = std::conditional_t<kHost64, Elf64_Ehdr, Elf32_Ehdr>;
using Phdr = std::conditional_t<kHost64, Elf64_Phdr, Elf32_Phdr>;
using Dyn = std::conditional_t<kHost64, Elf64_Dyn, Elf32_Dyn>;
// Largest address the host's loader can represent: sums above it wrap there.
constexpr uint64_t kAddrMax = kHost64 ? std::numeric_limits<uint64_t>::max() : std::numeric_limits<uint32_t>::max();

// Real shared objects have about ten program headers; the bound keeps a
// damaged count from driving a large read (PN_XNUM, extended numbering,
// is not supported by the dynamic loader and lands above it too).
constexpr uint64_t kMaxProgramHeaders = 1024;

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  fail(Code::LoadFailed, "'" + path + "' " + what);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string dec(uint64_t v) { return std::to_string(v); }

// a + b into *sum, false if it wraps or exceeds the highest address.
bool add_address(uint64_t a, uint64_t b, uint64_t* sum) { return checked_add<uint64_t>(a, b, sum) && *sum <= kAddrMax; }

// Reads `len` bytes at `offset`; fewer only at end of file.
size_t read_at(int fd, uint64_t offset, void* buf, size_t len, const std::string& path) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, static_cast<char*>(buf) + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      refuse(path, std::string("cannot be read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// For ranges already checked against the file size: a short read means the
// file shrank meanwhile.
void read_exact(int fd, uint64_t offset, void* buf, size_t len, const std::string& path) {
  if (read_at(fd, offset, buf, len, path) != len) {
    refuse(path, "changed while it was being checked (a read of " + dec(len) + " bytes at byte " + dec(offset) +
                     " came up short)");
  }
}

const char* osabi_name(unsigned char osabi) {
  switch (osabi) {
    case ELFOSABI_SYSV: return "System V";
    case ELFOSABI_NETBSD: return "NetBSD";
    case ELFOSABI_GNU: return "GNU/Linux";
    case ELFOSABI_SOLARIS: return "Solaris";
    case ELFOSABI_FREEBSD: return "FreeBSD";
    case ELFOSABI_OPENBSD: return "OpenBSD";
    default: return nullptr;
  }
}

const char* type_name(uint16_t type) {
  switch (type) {
    case ET_NONE: return "no file type";
    case ET_REL: return "a relocatable object file (.o)";
    case ET_EXEC: return "an executable";
    case ET_CORE: return "a core dump";
    default: return "an unknown type";
  }
}

std::string segment_name(size_t index, uint32_t type) {
  const char* name = type == PT_LOAD           ? "PT_LOAD"
                     : type == PT_DYNAMIC      ? "PT_DYNAMIC"
                     : type == PT_TLS          ? "PT_TLS"
                     : type == PT_GNU_RELRO    ? "PT_GNU_RELRO"
                     : type == PT_GNU_PROPERTY ? "PT_GNU_PROPERTY"
                                               : "?";
  return "segment " + dec(index) + " (" + name + ")";
}

// Common machines by name; the others by number.
const char* machine_name(uint16_t machine, unsigned char elf_class) {
  switch (machine) {
    case EM_X86_64: return elf_class == ELFCLASS32 ? "x32" : "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_386: return "i386";
    case EM_ARM: return "ARM";
    case EM_RISCV: return elf_class == ELFCLASS32 ? "RISC-V 32" : "RISC-V";
    case EM_PPC64: return "PowerPC64";
    case EM_PPC: return "PowerPC";
    case EM_S390: return elf_class == ELFCLASS32 ? "s390" : "s390x";
    case EM_MIPS: return "MIPS";
    default: return nullptr;
  }
}

// "AArch64 (e_machine 183)", or "e_machine 4660" for an unnamed machine.
std::string machine_text(uint16_t machine, unsigned char elf_class) {
  const char* name = machine_name(machine, elf_class);
  return name ? std::string(name) + " (e_machine " + dec(machine) + ")" : "e_machine " + dec(machine);
}

// "x86-64 (62)": the host, for messages.
std::string host_machine() {
  return std::string(machine_name(kHostMachine, kHostClass)) + " (" + dec(kHostMachine) + ")";
}

// The part of the ELF identification and header that does not depend on the
// class: magic, class, byte order, then (once the header can be read as the
// host's) version, OS ABI, machine, type and table entry sizes.
Ehdr check_header(int fd, uint64_t size, const std::string& path) {
  unsigned char raw[sizeof(Ehdr)] = {};
  const size_t got = read_at(fd, 0, raw, sizeof(raw), path);
  if (got < SELFMAG || std::memcmp(raw, ELFMAG, SELFMAG) != 0) refuse(path, "is not an ELF shared object (bad magic)");
  if (size < EI_NIDENT) {
    refuse(path, "is truncated: the ELF header needs " + dec(sizeof(Ehdr)) + " bytes but the file has " + dec(size) +
                     " bytes");
  }
  const unsigned char cls = raw[EI_CLASS], data = raw[EI_DATA];
  if (cls != ELFCLASS32 && cls != ELFCLASS64) refuse(path, "has an invalid ELF class (" + dec(cls) + ")");
  if (data != ELFDATA2LSB && data != ELFDATA2MSB) refuse(path, "has an invalid ELF byte order (" + dec(data) + ")");
  if (cls != kHostClass) {
    // e_machine sits at byte 18 in both classes, in the file's byte order.
    std::string built_for;
    if (got >= 20) {
      const uint16_t m = data == ELFDATA2LSB ? uint16_t(raw[18] | (raw[19] << 8)) : uint16_t((raw[18] << 8) | raw[19]);
      built_for = " built for " + machine_text(m, cls);
    }
    const std::string bits = cls == ELFCLASS32 ? "32" : "64", host_bits = kHost64 ? "64" : "32";
    refuse(path, "is a " + bits + "-bit ELF file (ELFCLASS" + bits + ")" + built_for + "; this process runs " +
                     host_bits + "-bit " + host_machine() + " and loads only " + host_bits + "-bit (ELFCLASS" +
                     host_bits + ") shared objects");
  }
  if (data != kHostData) {
    refuse(path, std::string("is a ") + (data == ELFDATA2MSB ? "big" : "little") +
                     "-endian ELF file; this process runs " + host_machine() + ", which is " +
                     (kHostData == ELFDATA2MSB ? "big" : "little") + "-endian");
  }
  if (size < sizeof(Ehdr)) {
    refuse(path, "is truncated: the ELF header needs " + dec(sizeof(Ehdr)) + " bytes but the file has " + dec(size) +
                     " bytes");
  }
  Ehdr eh;
  std::memcpy(&eh, raw, sizeof(eh));
  if (eh.e_ident[EI_VERSION] != EV_CURRENT) {
    refuse(path,
           "has ELF identification version " + dec(eh.e_ident[EI_VERSION]) + " (only " + dec(EV_CURRENT) + " exists)");
  }
  const unsigned char osabi = eh.e_ident[EI_OSABI];
  if (osabi != ELFOSABI_SYSV && osabi != ELFOSABI_GNU) {
    const char* name = osabi_name(osabi);
    refuse(path, "was built for OS ABI " + dec(osabi) + (name ? std::string(" (") + name + ")" : std::string()) +
                     "; this system loads System V (0) or GNU/Linux (3) objects only");
  }
  if (eh.e_machine != kHostMachine) {
    refuse(path, "was built for " + machine_text(eh.e_machine, cls) + "; this process runs " + host_machine());
  }
  if (eh.e_type != ET_DYN) {
    refuse(path,
           "is an ELF file but not a shared object (e_type " + dec(eh.e_type) + ", " + type_name(eh.e_type) + ")");
  }
  if (eh.e_version != EV_CURRENT)
    refuse(path, "has ELF version " + dec(eh.e_version) + " (only " + dec(EV_CURRENT) + " exists)");
  if (eh.e_ehsize < sizeof(Ehdr)) {
    refuse(path, "declares an ELF header of " + dec(eh.e_ehsize) + " bytes, smaller than the " + dec(sizeof(Ehdr)) +
                     " it has");
  }
  if (eh.e_phentsize != sizeof(Phdr)) {
    refuse(path, "declares program headers of " + dec(eh.e_phentsize) + " bytes; they have " + dec(sizeof(Phdr)));
  }
  return eh;
}

struct Load {
  size_t index;
  uint64_t vaddr, memsz, filesz, offset;
};

class Image {
 public:
  explicit Image(std::vector<Load> loads) : loads_(std::move(loads)) {}
  // Whether [addr, addr + len) lies inside one segment's memory (`file_backed`:
  // inside the part that comes from the file); *file_offset gets its position
  // in the file.
  bool contains(uint64_t addr, uint64_t len, bool file_backed, uint64_t* file_offset = nullptr) const {
    uint64_t end = 0;
    if (!add_address(addr, len, &end)) return false;
    for (const Load& l : loads_) {
      const uint64_t l_end = l.vaddr + (file_backed ? l.filesz : l.memsz);  // checked in check_segments
      if (addr >= l.vaddr && end <= l_end) {
        if (file_offset != nullptr) *file_offset = l.offset + (addr - l.vaddr);
        return true;
      }
    }
    return false;
  }
  // The address range the loader reserves: from the first segment to the end
  // of the last (the segments are in ascending order).
  bool within_span(uint64_t addr, uint64_t len) const {
    uint64_t end = 0;
    return add_address(addr, len, &end) && addr >= loads_.front().vaddr &&
           end <= loads_.back().vaddr + loads_.back().memsz;
  }

 private:
  std::vector<Load> loads_;
};

// The PT_LOAD segments: what mmap maps. A segment's file bytes past the end of
// the file would be mapped anyway and fault (SIGBUS) on first touch.
Image check_loads(const std::vector<Phdr>& ph, uint64_t size, const std::string& path) {
  std::vector<Load> loads;
  for (size_t i = 0; i < ph.size(); ++i) {
    const Phdr& p = ph[i];
    if (p.p_type != PT_LOAD) continue;
    const std::string seg = segment_name(i, p.p_type);
    if (p.p_filesz > p.p_memsz) {
      refuse(path,
             "is damaged: " + seg + " has p_filesz " + dec(p.p_filesz) + " larger than its p_memsz " + dec(p.p_memsz));
    }
    uint64_t file_end = 0, mem_end = 0;
    if (!checked_add<uint64_t>(p.p_offset, p.p_filesz, &file_end)) {
      refuse(path, "is damaged: " + seg + " has file offset " + hex(p.p_offset) + " and size " + hex(p.p_filesz) +
                       ", whose sum overflows");
    }
    if (file_end > size) {
      refuse(path,
             "is truncated: " + seg + " ends at byte " + dec(file_end) + " but the file has " + dec(size) + " bytes");
    }
    if (!add_address(p.p_vaddr, p.p_memsz, &mem_end)) {
      refuse(path, "is damaged: " + seg + " at address " + hex(p.p_vaddr) + " with " + dec(p.p_memsz) +
                       " bytes runs past the end of the address space");
    }
    if (p.p_align > 1 && (p.p_align & (p.p_align - 1)) != 0) {
      refuse(path, "is damaged: " + seg + " has alignment " + hex(p.p_align) + ", not a power of two");
    }
    if (p.p_align > 1 && (p.p_vaddr & (p.p_align - 1)) != (p.p_offset & (p.p_align - 1))) {
      refuse(path, "is damaged: " + seg + " has address " + hex(p.p_vaddr) + " and file offset " + hex(p.p_offset) +
                       ", which differ modulo its alignment " + hex(p.p_align) + ", so it cannot be mapped");
    }
    // The loader reserves the span from the first segment to the end of the
    // last and maps the others at fixed addresses inside it: out of order,
    // one would land outside, over whatever the process has there.
    if (!loads.empty() && p.p_vaddr < loads.back().vaddr) {
      refuse(path, "is damaged: " + seg + " at address " + hex(p.p_vaddr) + " comes after segment " +
                       dec(loads.back().index) + " at " + hex(loads.back().vaddr) + " (PT_LOAD segments must ascend)");
    }
    if (!loads.empty() && mem_end < loads.back().vaddr + loads.back().memsz) {
      refuse(path, "is damaged: " + seg + " ends below the end of segment " + dec(loads.back().index) +
                       " (PT_LOAD segments must ascend)");
    }
    loads.push_back({i, p.p_vaddr, p.p_memsz, p.p_filesz, p.p_offset});
  }
  if (loads.empty()) refuse(path, "has no loadable segment (PT_LOAD)");
  return Image(std::move(loads));
}

const char* dyn_tag_name(uint64_t tag) {
  switch (tag) {
    case DT_NEEDED: return "DT_NEEDED";
    case DT_PLTRELSZ: return "DT_PLTRELSZ";
    case DT_PLTGOT: return "DT_PLTGOT";
    case DT_HASH: return "DT_HASH";
    case DT_STRTAB: return "DT_STRTAB";
    case DT_SYMTAB: return "DT_SYMTAB";
    case DT_RELA: return "DT_RELA";
    case DT_STRSZ: return "DT_STRSZ";
    case DT_INIT: return "DT_INIT";
    case DT_FINI: return "DT_FINI";
    case DT_SONAME: return "DT_SONAME";
    case DT_RPATH: return "DT_RPATH";
    case DT_REL: return "DT_REL";
    case DT_JMPREL: return "DT_JMPREL";
    case DT_INIT_ARRAY: return "DT_INIT_ARRAY";
    case DT_FINI_ARRAY: return "DT_FINI_ARRAY";
    case DT_RUNPATH: return "DT_RUNPATH";
    case DT_RELR: return "DT_RELR";
    case DT_GNU_HASH: return "DT_GNU_HASH";
    case DT_VERSYM: return "DT_VERSYM";
    case DT_VERDEF: return "DT_VERDEF";
    case DT_VERNEED: return "DT_VERNEED";
    default: return "?";
  }
}

// The dynamic section: the loader finds it at its address in memory, walks it
// to DT_NULL and follows the addresses it holds while relocating and running
// initialisers. Each must land inside the loaded image.
void check_dynamic(int fd, const std::vector<Phdr>& ph, const Image& image, const std::string& path) {
  size_t dynamic_segments = 0;
  for (size_t i = 0; i < ph.size(); ++i) {
    const Phdr& p = ph[i];
    if (p.p_type != PT_DYNAMIC) continue;
    ++dynamic_segments;
    const std::string seg = segment_name(i, p.p_type);
    uint64_t file_offset = 0;
    if (p.p_filesz < sizeof(Dyn)) refuse(path, "is damaged: its dynamic section (" + seg + ") is empty");
    if (!image.contains(p.p_vaddr, p.p_filesz, true, &file_offset)) {
      refuse(path, "is damaged: its dynamic section (" + seg + ", " + dec(p.p_filesz) + " bytes at address " +
                       hex(p.p_vaddr) + ") lies outside the file contents of every loaded segment");
    }
    // What the loader will see at p_vaddr: read in chunks, to the terminator.
    std::vector<Dyn> entries;
    const uint64_t count = p.p_filesz / sizeof(Dyn);
    bool terminated = false;
    for (uint64_t at = 0; at < count && !terminated;) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(count - at, 512));
      std::vector<Dyn> buf(chunk);
      read_exact(fd, file_offset + at * sizeof(Dyn), buf.data(), chunk * sizeof(Dyn), path);
      for (const Dyn& d : buf) {
        if (d.d_tag == DT_NULL) {
          terminated = true;
          break;
        }
        entries.push_back(d);
      }
      at += chunk;
    }
    if (!terminated) {
      refuse(path,
             "is damaged: its dynamic section (" + seg + ", " + dec(p.p_filesz) + " bytes) has no DT_NULL terminator");
    }

    // The last of each tag counts, as in the loader.
    auto value = [&](int64_t tag, uint64_t* out) {
      bool found = false;
      for (const Dyn& d : entries) {
        if (static_cast<int64_t>(d.d_tag) == tag) {
          *out = d.d_un.d_val;
          found = true;
        }
      }
      return found;
    };
    // Tables with a size entry: the whole table; the others: their start.
    struct Pointer {
      int64_t tag, size_tag;
    };
    static constexpr Pointer kPointers[] = {{DT_STRTAB, DT_STRSZ},
                                            {DT_RELA, DT_RELASZ},
                                            {DT_REL, DT_RELSZ},
                                            {DT_JMPREL, DT_PLTRELSZ},
                                            {DT_RELR, DT_RELRSZ},
                                            {DT_INIT_ARRAY, DT_INIT_ARRAYSZ},
                                            {DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
                                            {DT_SYMTAB, 0},
                                            {DT_HASH, 0},
                                            {DT_GNU_HASH, 0},
                                            {DT_PLTGOT, 0},
                                            {DT_INIT, 0},
                                            {DT_FINI, 0},
                                            {DT_VERSYM, 0},
                                            {DT_VERDEF, 0},
                                            {DT_VERNEED, 0}};
    for (const Pointer& ptr : kPointers) {
      uint64_t addr = 0, len = 0;
      if (!value(ptr.tag, &addr)) continue;
      const bool sized = ptr.size_tag != 0 && value(ptr.size_tag, &len);
      if (!image.contains(addr, sized ? len : 1, false)) {
        refuse(path, std::string("is damaged: its dynamic entry ") + dyn_tag_name(static_cast<uint64_t>(ptr.tag)) +
                         " (" + hex(addr) + (sized ? ", " + dec(len) + " bytes" : std::string()) +
                         ") points outside the loaded segments");
      }
    }
    // Names of needed libraries, the soname and search paths are offsets
    // into the string table.
    uint64_t strtab = 0, strsz = 0;
    const bool has_strtab = value(DT_STRTAB, &strtab), has_strsz = value(DT_STRSZ, &strsz);
    for (const Dyn& d : entries) {
      const int64_t tag = static_cast<int64_t>(d.d_tag);
      if (tag != DT_NEEDED && tag != DT_SONAME && tag != DT_RPATH && tag != DT_RUNPATH) continue;
      if (!has_strtab)
        refuse(path,
               std::string("is damaged: it has a ") + dyn_tag_name(tag) + " entry but no string table (DT_STRTAB)");
      if (has_strsz && d.d_un.d_val >= strsz) {
        refuse(path, std::string("is damaged: its dynamic entry ") + dyn_tag_name(tag) + " names string " +
                         dec(d.d_un.d_val) + ", beyond its " + dec(strsz) + "-byte string table");
      }
    }
  }
  if (dynamic_segments == 0) refuse(path, "has no dynamic section (PT_DYNAMIC)");
}

// Other segments the loader reads or changes in memory: the TLS initial
// image is copied for every thread, the GNU property note is parsed, the
// RELRO range is made read-only (outside the image that would hit another
// mapping of the process).
void check_in_image(const std::vector<Phdr>& ph, const Image& image, const std::string& path) {
  for (size_t i = 0; i < ph.size(); ++i) {
    const Phdr& p = ph[i];
    bool ok = true;
    if (p.p_type == PT_TLS && p.p_filesz > 0) ok = image.contains(p.p_vaddr, p.p_filesz, false);
    if (p.p_type == PT_GNU_PROPERTY && p.p_memsz > 0) ok = image.contains(p.p_vaddr, p.p_memsz, false);
    if (p.p_type == PT_GNU_RELRO && p.p_memsz > 0) ok = image.within_span(p.p_vaddr, p.p_memsz);
    if (!ok) {
      refuse(path, "is damaged: " + segment_name(i, p.p_type) + " at address " + hex(p.p_vaddr) +
                       " lies outside the loaded segments");
    }
  }
}

}  // namespace

void check_elf_shared_object(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) refuse(path, std::string("cannot be examined: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) refuse(path, "is a directory, not an ELF shared object");
  if (!S_ISREG(st.st_mode)) refuse(path, "is not a regular file, so not an ELF shared object");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) refuse(path, "is empty (0 bytes), not an ELF shared object");

  const Ehdr eh = check_header(fd, size, path);
  if (eh.e_phnum == 0) refuse(path, "has no program headers, so nothing to load");
  if (eh.e_phnum > kMaxProgramHeaders) {
    refuse(path, "is damaged: it declares " + dec(eh.e_phnum) + " program headers (at most " + dec(kMaxProgramHeaders) +
                     " are accepted)");
  }
  const uint64_t table_bytes = uint64_t(eh.e_phnum) * sizeof(Phdr);  // < 2^16 * 56: no overflow
  uint64_t table_end = 0;
  if (eh.e_phoff >= size) {
    refuse(path, "is damaged: its program header table starts at byte " + dec(eh.e_phoff) +
                     ", beyond the end of the file (" + dec(size) + " bytes)");
  }
  if (!checked_add<uint64_t>(eh.e_phoff, table_bytes, &table_end) || table_end > size) {
    refuse(path, "is truncated: its program header table ends at byte " + dec(table_end) + " but the file has " +
                     dec(size) + " bytes");
  }
  std::vector<Phdr> ph(eh.e_phnum);
  read_exact(fd, eh.e_phoff, ph.data(), static_cast<size_t>(table_bytes), path);

  const Image image = check_loads(ph, size, path);
  check_dynamic(fd, ph, image, path);
  check_in_image(ph, image, path);
}

}  // namespace aotrun
