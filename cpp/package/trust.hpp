// The checks a package's files pass before any of their code is loaded:
// who could have replaced them, the caller's pin, the manifest's hashes.
#pragma once

#include <string>

namespace aotrun {

struct PackageOptions;

// Loading a package runs its code: a file that someone else could have
// replaced (group/world-writable, or owned by another user than this
// process's or root) is refused with INTEGRITY unless the options allow
// untrusted files. `fd` >= 0: check that open descriptor instead of the path.
// A path that does not exist passes (its absence is reported where needed).
void check_trusted(const std::string& path, const PackageOptions& options, int fd = -1);

// The caller's pin (options.expected_sha256, "" = none) against the file's
// SHA-256: INTEGRITY naming both on a mismatch.
void check_pin(const std::string& path, const PackageOptions& options, int fd = -1);

// <dir>/<file> against the manifest's hash: BAD_PACKAGE if the file is
// missing, INTEGRITY if it differs. `fd` >= 0: hash that descriptor.
void verify_hash(const std::string& dir, const std::string& file, const std::string& expected, int fd = -1);

}  // namespace aotrun
