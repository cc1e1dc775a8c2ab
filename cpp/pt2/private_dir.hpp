// A directory only this process's user can enter (mkdtemp: mode 0700, an
// unpredictable name), removed with its files when the owner goes away.
// Holds what a .pt2 archive extracts: nothing is ever written to a shared,
// predictable path.
#pragma once

#include <string>

namespace aotrun::pt2 {

class PrivateDir {
 public:
  // Creates <base>/aotrun-pt2-XXXXXX; `base` "" means $AOTRUN_TMPDIR, else
  // $TMPDIR, else /tmp. Throws Error(LOAD_FAILED) naming the base on failure.
  explicit PrivateDir(const std::string& base = "");
  // Removes the files directly inside it, then the directory (best effort).
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // O_DIRECTORY descriptor, for openat

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace aotrun::pt2
