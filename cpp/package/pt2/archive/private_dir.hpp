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
  // remove().
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // O_DIRECTORY descriptor, for openat
  // Removes the files directly inside it, then the directory (best effort;
  // once). A process killed later then leaves nothing behind: call it as
  // soon as nothing needs the files by name any more (a loaded library and
  // mapped files stay usable once unlinked). path() keeps the old name.
  void remove();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace aotrun::pt2
