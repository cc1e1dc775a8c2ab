#include "package/pt2/archive/zip_archive.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <cinttypes>
#include <cstdio>

#include "base/error.hpp"
#include "package/pt2/archive/zip_stored.hpp"

namespace aotrun::pt2 {

struct ZipArchive::Handle {
  zip_t* zip = nullptr;
  std::string copy;  // open_memory: libzip reads from here
  int fd = -1;       // open: the archive file, for stored entries (copy_stored)
  ~Handle() {
    if (zip != nullptr) zip_discard(zip);
    if (fd >= 0) ::close(fd);
  }
};

namespace {

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

[[noreturn]] void bad(const std::string& label, const std::string& what) {
  fail(Code::BadPackage, "archive '" + label + "': " + what);
}

std::string hex32(uint32_t v) {
  char s[16];
  std::snprintf(s, sizeof s, "%08" PRIx32, v);
  return s;
}

}  // namespace

bool safe_entry_name(const std::string& name) {
  if (name.empty() || name.size() > 4096 || name.front() == '/') return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    // A trailing '/' (directory entry) leaves one empty last part.
    if (part.empty() && end != name.size()) return false;
    if (part == "." || part == "..") return false;
    for (unsigned char c : part) {
      if (c < 0x20 || c == 0x7f || c == '\\') return false;
    }
    start = end + 1;
  }
  return true;
}

bool looks_like_zip(int fd) {
  unsigned char magic[4] = {};
  return ::pread(fd, magic, sizeof magic, 0) == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 &&
         magic[3] == 4;
}

std::unique_ptr<ZipArchive> ZipArchive::open(const std::string& path, const ZipLimits& limits) {
  std::unique_ptr<ZipArchive> a(new ZipArchive());
  a->label_ = path;
  a->h_ = std::make_unique<Handle>();
  int err = 0;
  a->h_->zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (a->h_->zip == nullptr) {
    if (err == ZIP_ER_NOENT) fail(Code::NotFound, "archive '" + path + "' does not exist");
    if (err == ZIP_ER_OPEN || err == ZIP_ER_READ) {
      fail(Code::LoadFailed, "archive '" + path + "' cannot be read: " + zip_error_text(err));
    }
    bad(path, err == ZIP_ER_NOZIP ? "not a zip archive (a .pt2 is a zip file)" : zip_error_text(err));
  }
  a->load_index(limits);
  // Read by extract alone, and checked against the index there (size,
  // bounds, CRC-32): a file replaced since libzip read it only fails that
  // check. Without it every entry goes through libzip.
  a->h_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  return a;
}

std::unique_ptr<ZipArchive> ZipArchive::open_memory(const void* data, size_t size, const std::string& label,
                                                    const ZipLimits& limits) {
  std::unique_ptr<ZipArchive> a(new ZipArchive());
  a->label_ = label;
  a->h_ = std::make_unique<Handle>();
  a->h_->copy.assign(static_cast<const char*>(data), size);
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t* src = zip_source_buffer_create(a->h_->copy.data(), a->h_->copy.size(), 0, &zerr);
  if (src == nullptr) {
    zip_error_fini(&zerr);
    fail(Code::OutOfMemory, "archive '" + label + "': out of memory");
  }
  a->h_->zip = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
  if (a->h_->zip == nullptr) {
    const int code = zip_error_code_zip(&zerr);
    zip_source_free(src);
    zip_error_fini(&zerr);
    bad(label, code == ZIP_ER_NOZIP ? "not a zip archive (a .pt2 is a zip file)" : zip_error_text(code));
  }
  zip_error_fini(&zerr);
  a->load_index(limits);
  return a;
}

ZipArchive::~ZipArchive() = default;

void ZipArchive::load_index(const ZipLimits& limits) {
  const zip_int64_t n = zip_get_num_entries(h_->zip, 0);
  if (n < 0) bad(label_, "cannot read the index");
  if (static_cast<uint64_t>(n) > limits.max_entries) {
    bad(label_, std::to_string(n) + " entries, more than the limit of " + std::to_string(limits.max_entries));
  }
  entries_.reserve(static_cast<size_t>(n));
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(h_->zip, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        st.name == nullptr) {
      bad(label_, "entry " + std::to_string(i) + " cannot be read: " + zip_strerror(h_->zip));
    }
    ZipEntry e;
    e.index = static_cast<uint64_t>(i);
    e.name = st.name;
    e.size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    e.compressed_size = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0;
    e.is_dir = !e.name.empty() && e.name.back() == '/';
    e.encrypted = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE;
    // Stored and with a CRC-32 to check a copy against (copy_stored).
    e.stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE && (st.valid & ZIP_STAT_CRC);
    e.crc32 = (st.valid & ZIP_STAT_CRC) ? st.crc : 0;
    zip_uint8_t opsys = 0;
    zip_uint32_t attr = 0;
    if (zip_file_get_external_attributes(h_->zip, e.index, 0, &opsys, &attr) == 0 && opsys == ZIP_OPSYS_UNIX) {
      e.is_symlink = ((attr >> 16) & S_IFMT) == S_IFLNK;
    }
    if (e.size > limits.max_entry_bytes) {
      bad(label_, "entry '" + e.name + "' declares " + std::to_string(e.size) + " bytes, more than the limit of " +
                      std::to_string(limits.max_entry_bytes));
    }
    if (e.size > limits.ratio_floor && e.size / std::max<uint64_t>(e.compressed_size, 1) > limits.max_ratio) {
      bad(label_, "entry '" + e.name + "' expands " + std::to_string(e.compressed_size) + " bytes to " +
                      std::to_string(e.size) + " (over " + std::to_string(limits.max_ratio) +
                      "x): refusing a likely decompression bomb");
    }
    entries_.push_back(std::move(e));
  }
}

void ZipArchive::check_readable(const ZipEntry& e) const {
  if (e.is_dir || e.is_symlink) {
    bad(label_, "entry '" + e.name + "' is a " + (e.is_dir ? "directory" : "symbolic link") + ", not a file");
  }
  if (e.encrypted) bad(label_, "entry '" + e.name + "' is encrypted");
}

template <typename Sink>
void ZipArchive::stream(const ZipEntry& e, Sink&& sink) const {
  check_readable(e);
  zip_file_t* f = zip_fopen_index(h_->zip, e.index, 0);
  if (f == nullptr) bad(label_, "entry '" + e.name + "' cannot be opened: " + zip_strerror(h_->zip));
  struct Closer {
    zip_file_t* f;
    ~Closer() { zip_fclose(f); }
  } closer{f};
  char buf[1 << 16];
  uint64_t total = 0;
  for (;;) {
    const zip_int64_t got = zip_fread(f, buf, sizeof buf);
    if (got < 0) {
      bad(label_, "entry '" + e.name + "' is corrupt or truncated: " + zip_file_strerror(f));
    }
    if (got == 0) break;
    total += static_cast<uint64_t>(got);
    // libzip checks this too; never trust the stream past what the index said.
    if (total > e.size)
      bad(label_, "entry '" + e.name + "' holds more data than its declared " + std::to_string(e.size) + " bytes");
    sink(buf, static_cast<size_t>(got));
  }
  if (total != e.size) {
    bad(label_, "entry '" + e.name + "' ends after " + std::to_string(total) + " of " + std::to_string(e.size) +
                    " bytes (truncated archive)");
  }
}

void ZipArchive::extract(const ZipEntry& e, int dir_fd, const std::string& name, unsigned mode) const {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    fail(Code::Internal, "extract: '" + name + "' is not a plain file name");
  }
  const int fd = ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    fail(Code::LoadFailed, "archive '" + label_ + "': cannot create " + name + ": " + std::strerror(errno));
  }
  struct Fd {
    int fd;
    ~Fd() { ::close(fd); }
  } guard{fd};
  check_readable(e);
  uint64_t offset = 0;
  if (e.stored && h_->fd >= 0 && stored_entry_offset(h_->fd, e.name, e.size, &offset)) {
    copy_stored(e, offset, fd, name);
    return;
  }
  stream(e, [&](const char* p, size_t n) { write_all(fd, p, n, name); });
}

void ZipArchive::write_all(int fd, const char* p, size_t n, const std::string& name) const {
  // At most 32 KiB per write: the page cache takes a folio as large as the
  // write (ext4), and folios above 32 KiB come from the buddy allocator's
  // high-order blocks, which a VM with free page reporting has handed back
  // to its host; each page of them then faults in on the host as it is
  // written. 47 MB in 1 MiB writes took 124-162 ms there, in 32 KiB writes
  // 21-28 ms, on a quiet host as on a busy one (docs/PERFORMANCE.md
  // section 37). Smaller folios come from the per-CPU lists, memory the
  // kernel freed just now.
  constexpr size_t kPiece = size_t(32) << 10;
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min(n, kPiece));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(Code::LoadFailed, "archive '" + label_ + "': writing " + name + " failed: " + std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void ZipArchive::copy_stored(const ZipEntry& e, uint64_t offset, int out, const std::string& name) const {
  // 1 MiB: read, checked and written while it is still in the core's cache.
  constexpr size_t kChunk = size_t(1) << 20;
  const std::unique_ptr<char[]> buf(new char[kChunk]);
  uint32_t crc = 0;
  uint64_t done = 0;
  while (done < e.size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, e.size - done));
    const ssize_t got = ::pread(h_->fd, buf.get(), want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(Code::LoadFailed,
           "archive '" + label_ + "': reading entry '" + e.name + "' failed: " + std::strerror(errno));
    }
    if (got == 0) {
      bad(label_, "entry '" + e.name + "' ends after " + std::to_string(done) + " of " + std::to_string(e.size) +
                      " bytes (truncated archive)");
    }
    crc = static_cast<uint32_t>(libdeflate_crc32(crc, buf.get(), static_cast<size_t>(got)));
    write_all(out, buf.get(), static_cast<size_t>(got), name);
    done += static_cast<uint64_t>(got);
  }
  if (crc != e.crc32) {
    bad(label_, "entry '" + e.name + "' is corrupt or truncated: the CRC-32 of its data is " + hex32(crc) +
                    ", the index says " + hex32(e.crc32));
  }
}

std::string ZipArchive::read(const ZipEntry& e, size_t max_bytes) const {
  if (e.size > max_bytes) {
    bad(label_, "entry '" + e.name + "' is " + std::to_string(e.size) + " bytes, more than the " +
                    std::to_string(max_bytes) + " expected");
  }
  std::string out;
  out.reserve(static_cast<size_t>(e.size));
  stream(e, [&](const char* p, size_t n) { out.append(p, n); });
  return out;
}

}  // namespace aotrun::pt2
