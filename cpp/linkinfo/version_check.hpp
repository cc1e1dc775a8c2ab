// Symbol versions a shared object needs (GLIBCXX_3.4.32, CXXABI_1.3.15,
// GLIBC_2.38, ...) against the libraries this process has already loaded,
// checked before dlopen: dlopen would name only the first missing one, and
// a library built by a newer toolchain than this system's is a common way
// for an old-system deployment to fail.
#pragma once

#include <string>
#include <vector>

#include "linkinfo/elf_symbols.hpp"

namespace aotrun {

// One family of symbol versions (GLIBCXX, CXXABI, GLIBC, ...) a shared
// object needs from one library, against the library of that name this
// process has loaded.
struct VersionFinding {
  std::string file;                  // as the object names it: "libstdc++.so.6"
  std::string family;                // "GLIBCXX"
  std::vector<std::string> needed;   // every version of the family it needs, oldest first
  std::string loaded;                // the process's library of that name; "" when none is loaded
  std::string newest_available;      // its newest version of the family; "" when unknown
  std::vector<std::string> missing;  // needed versions it does not define
};

// The needs of `so`, grouped by library and family, in the order the object
// lists them. A library this process has not loaded (or whose tables cannot
// be read) has an empty `loaded` or `newest_available` and nothing missing.
std::vector<VersionFinding> version_findings(const ElfDynamicSymbols& so);

// Throws Error(LOAD_FAILED) "<who> needs symbol versions this process's
// libraries lack: <each, with the library file and the newest version of
// that family it has>. ..." when `so` needs a version that the library of
// this process it names does not define (a library this process has not
// loaded yet is left to dlopen). A file whose tables cannot be read (no or
// damaged section headers, which dlopen does not need) is left to dlopen too.
void check_symbol_versions(const std::string& so, const std::string& who);
// The same for tables already read (`so` is only named in messages).
void check_symbol_versions(const ElfDynamicSymbols& so, const std::string& who);
// The same for findings already made.
void check_symbol_versions(const std::vector<VersionFinding>& findings, const std::string& who);

// "a, b, c and 3 more": at most `max` names, for messages.
std::string list_names(const std::vector<std::string>& names, size_t max = 12);

// read_elf_dynamic_symbols(path, "aoti_"), once per path for the process's
// lifetime (a large library's tables cost milliseconds to read): for the
// libraries of the process (libstdc++, libc, libtorch), never for packages,
// whose files are many, private and replaceable. NULL when the file's tables
// cannot be read (the check that wanted them is then skipped).
const ElfDynamicSymbols* cached_elf_symbols(const std::string& path);

}  // namespace aotrun
