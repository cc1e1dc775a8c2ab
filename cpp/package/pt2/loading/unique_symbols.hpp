// Why a model library could never be unloaded, and the fix. g++ gives the
// static locals of inline functions and templates (the AOTInductor
// runtime's settings and log guards, std::regex's tables, ...) the binding
// STB_GNU_UNIQUE: one instance per process, whatever RTLD_LOCAL says. glibc
// marks every library that defines such a symbol NODELETE when it binds it,
// so dlclose of a model never unmapped anything (+6 mappings, +0.35 MB RSS
// per reload of the smallest corpus model).
//
// Before dlopen, aotrun rewrites those symbols of its private extracted
// copy to STB_WEAK. Each model then binds its own instance (or the one a
// library in the global scope already defines, as before), which is what
// RTLD_LOCAL asks for anyway: two models, even of two torch releases, no
// longer share (and race on) one copy of the runtime's statics. Only the
// binding byte of those .dynsym entries changes; the archive and its
// sha256 pin are untouched.
#pragma once

#include <cstddef>
#include <string>

namespace aotrun::pt2 {

// Demotes the STB_GNU_UNIQUE symbols of `dir_fd`/`name`'s .dynsym to
// STB_WEAK and returns how many. Best effort and never throws: a file it
// cannot read as a 64-bit ELF of this byte order with section headers is
// left as it is (0), and such a library stays loaded for the life of the
// process, as every model did before.
size_t demote_unique_symbols(int dir_fd, const std::string& name) noexcept;

}  // namespace aotrun::pt2
