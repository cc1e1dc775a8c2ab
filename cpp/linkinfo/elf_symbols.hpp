// What an ELF shared object asks of, and offers to, the dynamic linker: its
// dynamic symbols and symbol versions, read from the section headers without
// loading it. Used to say, before dlopen, which symbol or library version a
// package needs that this process cannot give it (dlopen would only say the
// first one, or the process would die later).
#pragma once

#include <string>
#include <vector>

namespace aotrun {

struct VersionNeed {
  std::string file;     // the library that must define it, e.g. "libstdc++.so.6"
  std::string version;  // e.g. "GLIBCXX_3.4.30"
};

struct ElfDynamicSymbols {
  std::vector<std::string> undefined;  // undefined and not weak: must be found elsewhere
  std::vector<std::string> defined;    // exported (global or weak, defined), sorted
  std::vector<VersionNeed> needs;      // .gnu.version_r
  std::vector<std::string> versions;   // .gnu.version_d: the versions this library defines
};

// Reads the dynamic symbol table and the version sections of the ELF file at
// `path` (64-bit little-endian, as this process). Every offset and size is
// checked against the file. Throws Error(NOT_FOUND / LOAD_FAILED) naming the
// file; a file without section headers yields empty lists. `defined_prefix`
// keeps only the exports that start with it (a large library exports
// hundreds of thousands of names).
ElfDynamicSymbols read_elf_dynamic_symbols(const std::string& path, const std::string& defined_prefix = "");

// "GLIBCXX_3.4.30" < "GLIBCXX_3.4.32": compares the dotted numbers after the
// last '_' (same prefix assumed); false for names without numbers.
bool version_less(const std::string& a, const std::string& b);

}  // namespace aotrun
