#include "package/trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "package/package.hpp"
#include "base/error.hpp"
#include "base/sha256.hpp"

namespace aotrun {

void verify_hash(const std::string& dir, const std::string& file, const std::string& expected, int fd) {
  const std::string path = dir + "/" + file;
  std::string actual;
  try {
    actual = fd >= 0 ? sha256_fd_hex(fd, path) : sha256_file_hex(path);
  } catch (const Error& e) {
    if (e.code() == Code::NotFound) fail(Code::BadPackage, "manifest lists '" + file + "' but " + path + " is missing");
    throw;
  }
  if (actual != expected) {
    fail(Code::Integrity, "sha256 of '" + path + "' is " + actual + " but the manifest says " + expected +
                              " (file modified or corrupted)");
  }
}

void check_trusted(const std::string& path, const PackageOptions& options, int fd) {
  if (options.allow_untrusted_files) return;
  struct stat st {};
  if ((fd >= 0 ? ::fstat(fd, &st) : ::stat(path.c_str(), &st)) != 0) return;
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    fail(Code::Integrity, "'" + path +
                              "' is writable by group or others; refusing to load it "
                              "(fix its permissions, or allow untrusted files in the package options)");
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    fail(Code::Integrity, "'" + path + "' is owned by uid " + std::to_string(st.st_uid) +
                              ", neither this process's user nor root; refusing to load it "
                              "(or allow untrusted files in the package options)");
  }
}

void check_pin(const std::string& path, const PackageOptions& options, int fd) {
  if (options.expected_sha256.empty()) return;
  const std::string actual = fd >= 0 ? sha256_fd_hex(fd, path) : sha256_file_hex(path);
  if (actual != options.expected_sha256) {
    fail(Code::Integrity,
         "sha256 of '" + path + "' is " + actual + " but the caller pinned " + options.expected_sha256);
  }
}

}  // namespace aotrun
