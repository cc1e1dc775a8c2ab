// Validation of an ELF shared object before dlopen sees it.
//
// dlopen trusts the file: it maps every PT_LOAD segment and reads the
// dynamic section from memory, so a truncated or damaged file kills the
// process (SIGBUS on a page past the end of the file, SIGSEGV on a pointer
// outside the image), and a file built for another architecture is
// misreported as "No such file or directory". These checks cover exactly
// what the dynamic loader maps and reads while loading; the section headers
// and the debug information, which it ignores, are not looked at.
#pragma once

#include <cstdint>
#include <string>

namespace aotrun {

// Throws Error(Code::LoadFailed), naming `path` and the defect, unless the
// file open as `fd` is an ELF shared object this process could map: a
// regular, non-empty file whose ELF header matches the host (class, byte
// order, version, OS ABI, machine, ET_DYN), whose program header table and
// PT_LOAD segments lie inside the file, and whose dynamic section lies in a
// loaded segment, ends with DT_NULL and points only into the loaded image.
// Reads with pread only (the descriptor's offset is left alone); the size is
// the one fstat reports.
void check_elf_shared_object(int fd, const std::string& path);

}  // namespace aotrun
