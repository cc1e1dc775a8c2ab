// Where a zip entry stored without compression lies in the archive file, so
// that it can be mapped in place instead of extracted (a .pt2's weights
// blob: torch writes entries stored, 64-byte aligned). libzip does not say,
// so the central directory (ZIP64 included) and the entry's local header
// are read here, every offset checked against the file.
#pragma once

#include <cstdint>
#include <string>

namespace aotrun::pt2 {

// The file offset of the data of entry `name` in the zip archive open as
// `fd`, when it is stored (method 0), unencrypted, `size` bytes long and
// lies inside the file; false otherwise (a compressed entry, an index this
// reader does not understand: the caller extracts instead).
bool stored_entry_offset(int fd, const std::string& name, uint64_t size, uint64_t* offset);

}  // namespace aotrun::pt2
