// Where a zip entry stored without compression lies in the archive file, so
// that it can be mapped in place instead of extracted (a .pt2's weights
// blob, or its pickled weights, each a torch.save zip archive itself: torch
// writes entries stored, 64-byte aligned). libzip does not say,
// so the central directory (ZIP64 included) and the entry's local header
// are read here, every offset checked against the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::pt2 {

// The file offset of the data of entry `name` in the zip archive open as
// `fd`, when it is stored (method 0), unencrypted, `size` bytes long and
// lies inside the file; false otherwise (a compressed entry, an index this
// reader does not understand: the caller extracts instead).
bool stored_entry_offset(int fd, const std::string& name, uint64_t size, uint64_t* offset);

struct StoredEntry {
  std::string name;
  uint64_t offset = 0;  // of its data, from the start of the archive
  uint64_t size = 0;
};

// Every entry of the zip archive held in the `size` bytes at `data` (a
// torch.save archive inside a .pt2), when at most `max_entries` and each
// stored, unencrypted and inside the bytes; false otherwise, `why` saying
// what failed.
bool stored_entries(const uint8_t* data, uint64_t size, size_t max_entries, std::vector<StoredEntry>* out,
                    std::string* why);

}  // namespace aotrun::pt2
