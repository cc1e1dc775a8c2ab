// A read-only zip archive (libzip) whose index is checked before anything is
// trusted: entry count, names, sizes and kinds are bounded, so a truncated or
// hostile archive gives an error instead of a crash, a traversal or a disk
// filled by a decompression bomb.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aotrun::pt2 {

struct ZipLimits {
  uint64_t max_entries = 1u << 16;
  // A declared size over this many times the compressed size is a bomb, for
  // entries larger than ratio_floor (weights compress ~1.1x, code ~4x).
  uint64_t max_ratio = 200;
  uint64_t ratio_floor = 16u << 20;
  uint64_t max_entry_bytes = 64ull << 30;
};

struct ZipEntry {
  uint64_t index = 0;
  std::string name;
  uint64_t size = 0;  // declared uncompressed size
  uint64_t compressed_size = 0;
  bool is_dir = false;
  bool is_symlink = false;  // made on Unix with S_IFLNK
  bool encrypted = false;
  bool stored = false;  // method 0: its bytes lie in the archive as they are
  uint32_t crc32 = 0;   // the index's CRC-32 of its data
};

class ZipArchive {
 public:
  // Opens `path` (or a copy of `size` bytes at `data`, for fuzzing) and reads
  // its index. Throws Error: BAD_PACKAGE when it is not a zip archive or its
  // index is inconsistent or exceeds `limits`, naming `label` (the path).
  static std::unique_ptr<ZipArchive> open(const std::string& path, const ZipLimits& limits = {});
  static std::unique_ptr<ZipArchive> open_memory(const void* data, size_t size, const std::string& label,
                                                 const ZipLimits& limits = {});
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const std::string& label() const { return label_; }

  // Writes entry `e` to a new file `name` (a plain file name, no '/') inside
  // the directory `dir_fd`, mode `mode`. Refuses directories, symlinks and
  // encrypted entries; stops with BAD_PACKAGE when the data runs past the
  // declared size or ends before it (truncated archive) or its CRC-32 is not
  // the index's ("is corrupt or truncated"), and with LOAD_FAILED when the
  // file cannot be written. A stored entry of an archive opened from a path
  // is copied from the archive file itself (pread, checked with libdeflate's
  // CRC-32, written): a .pt2's model library is stored, and libzip's reads
  // and zlib's CRC took a sixth of a small model's open
  // (frozen MobileNetV3's, docs/PERFORMANCE.md section 37).
  void extract(const ZipEntry& e, int dir_fd, const std::string& name, unsigned mode) const;

  // Reads a small entry whole (at most `max_bytes`, else BAD_PACKAGE).
  std::string read(const ZipEntry& e, size_t max_bytes) const;

 private:
  ZipArchive() = default;
  void load_index(const ZipLimits& limits);
  template <typename Sink>
  void stream(const ZipEntry& e, Sink&& sink) const;
  // BAD_PACKAGE for a directory, symlink or encrypted entry.
  void check_readable(const ZipEntry& e) const;
  // Writes all `n` bytes to `fd`; LOAD_FAILED naming `name` when it cannot.
  void write_all(int fd, const char* p, size_t n, const std::string& name) const;
  // extract's copy of a stored entry whose data starts at `offset` in the
  // archive file, into the open file `out`.
  void copy_stored(const ZipEntry& e, uint64_t offset, int out, const std::string& name) const;

  struct Handle;
  std::unique_ptr<Handle> h_;
  std::string label_;
  std::vector<ZipEntry> entries_;
};

// Whether a zip entry name is safe to treat as a relative path inside the
// archive: not empty, not absolute, no "." / ".." / empty component, no
// backslash or control character. Names failing it are never extracted.
bool safe_entry_name(const std::string& name);

// Whether the first bytes of the file open as `fd` are a zip local-file
// header (read with pread: the offset is left alone).
bool looks_like_zip(int fd);

}  // namespace aotrun::pt2
