// Package library files as the loader meets them: damaged copies of a real
// package library (truncated, or one header field changed) are refused with
// LOAD_FAILED naming the file and the defect, never with a crash, even when
// the caller pinned the damaged file's own sha256 (issue #14, item 1). And a
// 1.0 package exporting the 1.1 run_single_threaded is reported as exporting
// it, but not using it (item 8).
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <functional>

#include "rel_util.hpp"

using namespace aotrun_test;
using rel::open_fails;

namespace {

// The host's ELF types: the packages are built for it.
using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Dyn = ElfW(Dyn);

#if defined(__aarch64__)
constexpr uint16_t kForeignMachine = EM_X86_64;
constexpr const char* kForeignText = "was built for x86-64 (e_machine 62); this process runs AArch64 (183)";
#else
constexpr uint16_t kForeignMachine = EM_AARCH64;
constexpr const char* kForeignText = "was built for AArch64 (e_machine 183); this process runs ";
#endif

// A real package library, read once, with its headers decoded.
struct RealLibrary {
  std::string bytes;
  Ehdr eh{};
  std::vector<Phdr> ph;

  explicit RealLibrary(const std::string& path) : bytes(rel::read_file(path)) {
    if (bytes.size() < sizeof(Ehdr)) return;
    std::memcpy(&eh, bytes.data(), sizeof(eh));
    ph.resize(eh.e_phnum);
    if (eh.e_phoff + ph.size() * sizeof(Phdr) <= bytes.size()) {
      std::memcpy(ph.data(), bytes.data() + eh.e_phoff, ph.size() * sizeof(Phdr));
    }
  }
  template <typename T>
  T at(size_t offset) const {
    T v{};
    std::memcpy(&v, bytes.data() + offset, sizeof(T));
    return v;
  }
  template <typename T>
  static void put(std::string& b, size_t offset, T v) {
    std::memcpy(&b[offset], &v, sizeof(T));
  }
  size_t phdr_offset(size_t i) const { return eh.e_phoff + i * sizeof(Phdr); }
  // File offset of the dynamic entry with `tag`, or 0.
  size_t dyn_entry_offset(int64_t tag) const {
    for (const Phdr& p : ph) {
      if (p.p_type != PT_DYNAMIC) continue;
      for (size_t off = p.p_offset; off + sizeof(Dyn) <= p.p_offset + p.p_filesz; off += sizeof(Dyn)) {
        const Dyn d = at<Dyn>(off);
        if (d.d_tag == DT_NULL) break;
        if (static_cast<int64_t>(d.d_tag) == tag) return off;
      }
    }
    return 0;
  }
};

const RealLibrary& noop() {
  static const RealLibrary lib(bare_so("noop"));
  EXPECT_GE(lib.bytes.size(), sizeof(Ehdr));
  EXPECT_EQ(lib.eh.e_type, ET_DYN);
  EXPECT_GT(lib.ph.size(), 1u);
  return lib;
}

// Writes `bytes` as a bare package library and opens it with its own sha256
// pinned: first in a child (which must exit normally, having been refused
// with LOAD_FAILED), then in this process, where the message must name the
// file and contain `needle`.
void expect_refused(const std::string& bytes, const std::string& tag, const std::string& needle) {
  SCOPED_TRACE(tag);
  rel::ScratchDir dir("elf_" + tag);
  const std::string path = dir / "libdamaged.so";
  rel::write_file(path, bytes);
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  const std::string hash = rel::sha256_of(path);
  ASSERT_EQ(hash.size(), 64u);
  rel::PackageOptions opts;
  opts.expected_sha256(hash);

  const rel::ChildResult child = rel::in_child([&] {
    aotrun_package* p = nullptr;
    aotrun_status* s = aotrun_package_open(path.c_str(), opts.get(), &p);
    const int rc = aotrun_status_code(s) == AOTRUN_ERR_LOAD_FAILED ? 0 : 3;
    aotrun_status_free(s);
    aotrun_package_close(p);
    return rc;
  });
  ASSERT_TRUE(child.ok()) << "opening the damaged library in a child process: " << child.describe();

  const rel::Outcome o = open_fails(path, opts.get());
  REL_EXPECT_OUTCOME(o, AOTRUN_ERR_LOAD_FAILED, "'" + path + "'");
  EXPECT_TRUE(rel::contains(o.message, needle)) << "'" << needle << "' not in: " << o.message;
}

std::string cut(const std::string& bytes, size_t n) { return bytes.substr(0, n); }

}  // namespace

// The SIGBUS class: dlopen maps a segment whose file bytes are missing and
// dies touching it. Every PT_LOAD, cut in its middle, is refused; a file cut
// after its last segment (no section headers or debug information: the
// dynamic loader never reads them) still loads and runs.
TEST(ElfCheck, TruncatedInsideEachLoadSegmentIsRefusedNotFatal) {
  const RealLibrary& lib = noop();
  int segments = 0;
  for (size_t i = 0; i < lib.ph.size(); ++i) {
    const Phdr& p = lib.ph[i];
    if (p.p_type != PT_LOAD || p.p_filesz == 0) continue;
    const size_t table_end = lib.eh.e_phoff + lib.ph.size() * sizeof(Phdr);
    const size_t at = std::max<size_t>(p.p_offset + p.p_filesz / 2, table_end + 1);
    ASSERT_LT(at, p.p_offset + p.p_filesz);
    ++segments;
    expect_refused(cut(lib.bytes, at), "load" + std::to_string(i),
                   "is truncated: segment " + std::to_string(i) + " (PT_LOAD) ends at byte " +
                       std::to_string(p.p_offset + p.p_filesz) + " but the file has " + std::to_string(at) + " bytes");
  }
  EXPECT_GE(segments, 2);

  size_t image_end = 0;
  for (const Phdr& p : lib.ph) {
    if (p.p_type == PT_LOAD) image_end = std::max<size_t>(image_end, p.p_offset + p.p_filesz);
  }
  ASSERT_LT(image_end, lib.bytes.size());
  std::string b = cut(lib.bytes, image_end);
  // The section header table now lies beyond the end, its count absurd.
  RealLibrary::put<decltype(Ehdr::e_shoff)>(b, offsetof(Ehdr, e_shoff), lib.bytes.size() * 4);
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_shnum), 0xFFFF);
  rel::ScratchDir dir("elf_ok");
  const std::string path = dir / "libnoop.so";
  rel::write_file(path, b);
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  rel::PackageOptions o;
  o.expected_sha256(rel::sha256_of(path));
  Package pkg(path, o);
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  Tensor x({2, 4}, 1.5f), y({2, 4});
  AOTRUN_EXPECT_OK(run_vec(r.get(), x, y));
}

TEST(ElfCheck, TruncatedInsideTheHeaders) {
  const RealLibrary& lib = noop();
  expect_refused(cut(lib.bytes, 3), "magic", "is not an ELF shared object (bad magic)");
  expect_refused(cut(lib.bytes, 10), "ident", "is truncated: the ELF header needs 64 bytes but the file has 10 bytes");
  expect_refused(cut(lib.bytes, 40), "ehdr", "is truncated: the ELF header needs 64 bytes but the file has 40 bytes");
  const size_t table_end = lib.eh.e_phoff + lib.ph.size() * sizeof(Phdr);
  const size_t mid_table = lib.eh.e_phoff + 2 * sizeof(Phdr) + 10;
  expect_refused(cut(lib.bytes, mid_table), "phdrs",
                 "is truncated: its program header table ends at byte " + std::to_string(table_end) +
                     " but the file has " + std::to_string(mid_table) + " bytes");
}

TEST(ElfCheck, EmptyFileAndDirectory) {
  expect_refused("", "empty", "is empty (0 bytes)");

  // A directory named as the library of a package directory.
  rel::PackageCopy pkg("noop", "elfdir");
  nlohmann::json m = pkg.manifest();
  ASSERT_EQ(::mkdir(pkg.file("libsub.so").c_str(), 0755), 0);
  m["library"] = "libsub.so";
  m["files"]["libsub.so"] = std::string(64, '0');
  pkg.write_manifest(m);
  rel::PackageOptions o;
  o.verify_hashes(false);
  REL_EXPECT_OUTCOME(open_fails(pkg.dir(), o.get()), AOTRUN_ERR_LOAD_FAILED,
                     "'" + pkg.file("libsub.so") + "' is a directory, not an ELF shared object");
}

TEST(ElfCheck, ForeignArchitectureIsNamed) {
  std::string b = noop().bytes;
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_machine), kForeignMachine);
  expect_refused(b, "machine", kForeignText);
#if defined(__x86_64__)
  expect_refused(b, "machine_host", "this process runs x86-64 (62)");
#endif
  // An unnamed machine number.
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_machine), 4660);
  expect_refused(b, "machine_unknown", "was built for e_machine 4660; this process runs ");
}

TEST(ElfCheck, OtherClassOsAbiAndTypeAreRefused) {
  const std::string real = noop().bytes;
  std::string b = real;
  const bool host64 = sizeof(void*) == 8;
  b[EI_CLASS] = static_cast<char>(host64 ? ELFCLASS32 : ELFCLASS64);
  expect_refused(b, "class", host64 ? "is a 32-bit ELF file (ELFCLASS32)" : "is a 64-bit ELF file (ELFCLASS64)");
  expect_refused(b, "class_host", host64 ? "this process runs 64-bit" : "this process runs 32-bit");

  b = real;
  b[EI_OSABI] = static_cast<char>(ELFOSABI_FREEBSD);
  expect_refused(b, "osabi", "was built for OS ABI 9 (FreeBSD)");

  b = real;
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_type), ET_EXEC);
  expect_refused(b, "type", "is an ELF file but not a shared object (e_type 2, an executable)");
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_type), ET_REL);
  expect_refused(b, "type_rel", "is an ELF file but not a shared object (e_type 1, a relocatable object file (.o))");
}

TEST(ElfCheck, ProgramHeaderTableOutOfRange) {
  const RealLibrary& lib = noop();
  std::string b = lib.bytes;
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_phnum), 0xFFFF);
  expect_refused(b, "phnum", "it declares 65535 program headers (at most 1024 are accepted)");

  b = lib.bytes;
  const uint64_t beyond = lib.bytes.size() + 100;
  RealLibrary::put<decltype(Ehdr::e_phoff)>(b, offsetof(Ehdr, e_phoff), beyond);
  expect_refused(b, "phoff",
                 "its program header table starts at byte " + std::to_string(beyond) +
                     ", beyond the end of the file (" + std::to_string(lib.bytes.size()) + " bytes)");
  // An offset near the top of the range: offset + size must not wrap.
  RealLibrary::put<decltype(Ehdr::e_phoff)>(b, offsetof(Ehdr, e_phoff), ~decltype(Ehdr::e_phoff){0} - 8);
  expect_refused(b, "phoff_wrap", "beyond the end of the file");

  b = lib.bytes;
  RealLibrary::put<uint16_t>(b, offsetof(Ehdr, e_phentsize), sizeof(Phdr) - 8);
  expect_refused(b, "phentsize", "declares program headers of " + std::to_string(sizeof(Phdr) - 8) + " bytes");
}

TEST(ElfCheck, DamagedLoadSegmentHeaders) {
  const RealLibrary& lib = noop();
  size_t last_load = 0;
  for (size_t i = 0; i < lib.ph.size(); ++i) {
    if (lib.ph[i].p_type == PT_LOAD) last_load = i;
  }
  const size_t at = lib.phdr_offset(last_load);
  const std::string seg = "segment " + std::to_string(last_load) + " (PT_LOAD)";

  std::string b = lib.bytes;
  // An offset whose sum with the size wraps around.
  RealLibrary::put<decltype(Phdr::p_offset)>(b, at + offsetof(Phdr, p_offset), ~decltype(Phdr::p_offset){0} - 0x10);
  expect_refused(b, "offset_wrap", seg + " has file offset");
  expect_refused(b, "offset_wrap2", "whose sum overflows");

  b = lib.bytes;
  RealLibrary::put<decltype(Phdr::p_filesz)>(b, at + offsetof(Phdr, p_filesz), lib.ph[last_load].p_memsz + 1);
  expect_refused(b, "filesz", seg + " has p_filesz");

  b = lib.bytes;
  RealLibrary::put<decltype(Phdr::p_align)>(b, at + offsetof(Phdr, p_align), 0x3000);
  expect_refused(b, "align", seg + " has alignment 0x3000, not a power of two");
}

// The loader walks the dynamic section in memory and follows its pointers:
// outside the mapped image, that is a SIGSEGV inside dlopen.
TEST(ElfCheck, DynamicSectionOutsideTheImageIsRefusedNotFatal) {
  const RealLibrary& lib = noop();
  size_t dyn = lib.ph.size();
  for (size_t i = 0; i < lib.ph.size(); ++i) {
    if (lib.ph[i].p_type == PT_DYNAMIC) dyn = i;
  }
  ASSERT_LT(dyn, lib.ph.size());
  const size_t at = lib.phdr_offset(dyn);
  const uint64_t far = 0x40000000;

  std::string b = lib.bytes;
  RealLibrary::put<decltype(Phdr::p_vaddr)>(b, at + offsetof(Phdr, p_vaddr), far);
  expect_refused(b, "dyn_vaddr", "its dynamic section (segment " + std::to_string(dyn) + " (PT_DYNAMIC)");
  expect_refused(b, "dyn_vaddr2", "lies outside the file contents of every loaded segment");

  b = lib.bytes;
  RealLibrary::put<uint32_t>(b, at + offsetof(Phdr, p_type), PT_NULL);
  expect_refused(b, "no_dynamic", "has no dynamic section (PT_DYNAMIC)");

  const size_t strtab = lib.dyn_entry_offset(DT_STRTAB);
  ASSERT_NE(strtab, 0u);
  b = lib.bytes;
  RealLibrary::put<decltype(Dyn::d_un.d_ptr)>(b, strtab + offsetof(Dyn, d_un), far);
  expect_refused(b, "strtab", "its dynamic entry DT_STRTAB (0x40000000");

  const size_t needed = lib.dyn_entry_offset(DT_NEEDED);
  ASSERT_NE(needed, 0u);
  b = lib.bytes;
  RealLibrary::put<decltype(Dyn::d_un.d_val)>(b, needed + offsetof(Dyn, d_un), far);
  expect_refused(b, "needed", "its dynamic entry DT_NEEDED names string 1073741824, beyond its");
}

// Item 8: symbols newer than the ABI a package declares are ignored even if
// exported, and reported as exported but unused.
TEST(LoaderProbing, Abi10PackageExportingSingleThreadedReportsItUnused) {
  Package pkg(bare_so("rel_abi10_exports_st"));
  ASSERT_NE(pkg.get(), nullptr);
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  AOTRUN_ASSERT_OK(aotrun_package_get_info(pkg.get(), &info));
  EXPECT_EQ(info.abi_version, 1u << 16);
  bool seen = false;
  for (size_t i = 0; i < info.num_symbols; ++i) {
    aotrun_symbol_info s{};
    s.struct_size = sizeof(s);
    AOTRUN_ASSERT_OK(aotrun_package_get_symbol(pkg.get(), i, &s));
    if (std::strcmp(s.name, "aotrun_pkg_container_run_single_threaded") != 0) continue;
    seen = true;
    EXPECT_EQ(s.found, 1) << "the library exports it";
    EXPECT_EQ(s.required, 0);
    EXPECT_EQ(s.since, (1u << 16) | 1u);
    EXPECT_GT(s.since, info.abi_version) << "newer than the declared ABI: the documented sign of 'not used'";
  }
  EXPECT_TRUE(seen);

  const std::string unused =
      "aotrun_pkg_container_run_single_threaded is exported, but the package declares ABI 1.0 and "
      "run_single_threaded is 1.1: not used";
  const char* reason = nullptr;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_SINGLE_THREADED, &reason), 0);
  EXPECT_EQ(std::string(reason), "package 'rel_abi10_exports_st' (ABI 1.0): " + unused +
                                     "; single_threaded runs fall back to aotrun_pkg_container_run");
  EXPECT_FALSE(rel::contains(reason, "lacks")) << reason;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_GRAPH, &reason), 0);
  EXPECT_TRUE(rel::contains(reason, "graph mode unavailable: package 'rel_abi10_exports_st' (ABI 1.0): " + unused))
      << reason;

  // A single_threaded run goes through `run` (the package's
  // run_single_threaded fails if called).
  LogCapture log;
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  ASSERT_NE(r.get(), nullptr);
  Tensor x({3, 4}, 2.5f), y({3, 4});
  AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
  EXPECT_EQ(y.data, x.data);
  const aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.effective_mode, AOTRUN_MODE_THREADED);
  EXPECT_EQ(st.fallback_runs, 1u);
  EXPECT_TRUE(rel::contains(st.fallback_reason, unused)) << st.fallback_reason;
  EXPECT_EQ(log.count_containing(unused), 1u);
}
