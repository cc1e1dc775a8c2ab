// libFuzzer target: bytes -> the ELF readers run before dlopen: the loader's
// structural check (check_elf_shared_object), the dynamic symbol and version
// tables (read_elf_dynamic_symbols), the symbol-version findings against this
// process's libraries and everything `aotrun inspect` shows
// (examine_library). Refusals must be aotrun::Error LOAD_FAILED;
// examine_library must not throw; what is accepted must satisfy the
// invariants below. Anything else is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "linkinfo/elf_check.hpp"
#include "linkinfo/elf_symbols.hpp"
#include "linkinfo/link_findings.hpp"
#include "linkinfo/version_check.hpp"
#include "base/error.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

void expect_load_failed(const aotrun::Error& e, const char* who) {
  if (e.code() != aotrun::Code::LoadFailed) {
    finding(std::string(who) + " refused with code " + aotrun::code_name(e.code()) + ": " + e.what());
  }
}

// The input as a file: the readers take a path (or a descriptor).
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) : fd_(::memfd_create("fuzz_elf", MFD_CLOEXEC)) {
    if (fd_ < 0) finding("memfd_create failed");
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) finding("write to memfd failed");
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const MemFile file(data, size);
  try {
    aotrun::check_elf_shared_object(file.fd(), "fuzz.so");
  } catch (const aotrun::Error& e) {
    expect_load_failed(e, "check_elf_shared_object");
  }
  try {
    const aotrun::ElfDynamicSymbols t = aotrun::read_elf_dynamic_symbols(file.path(), "aoti_");
    if (!std::is_sorted(t.defined.begin(), t.defined.end())) finding("defined symbols not sorted");
    for (const auto& s : t.defined) {
      if (s.rfind("aoti_", 0) != 0) finding("export '" + s + "' kept without the prefix");
    }
    for (const auto& v : aotrun::version_findings(t)) {
      if (v.needed.empty()) finding("a version family with nothing needed: " + v.family);
      for (const auto& m : v.missing) {
        if (std::find(v.needed.begin(), v.needed.end(), m) == v.needed.end()) finding("missing " + m + " not needed");
      }
    }
    try {
      aotrun::check_symbol_versions(t, "fuzz.so");
    } catch (const aotrun::Error& e) {
      expect_load_failed(e, "check_symbol_versions");
    }
  } catch (const aotrun::Error& e) {
    expect_load_failed(e, "read_elf_dynamic_symbols");
  }
  const aotrun::LinkFindings f = aotrun::examine_library(file.path(), "", "AVX2");
  if (!f.tables_error.empty() && (!f.shim_calls.empty() || !f.versions.empty())) {
    finding("tables unreadable yet findings made: " + f.tables_error);
  }
  return 0;
}
