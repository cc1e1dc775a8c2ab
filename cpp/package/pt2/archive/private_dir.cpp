#include "package/pt2/archive/private_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include "base/error.hpp"

namespace aotrun::pt2 {

PrivateDir::PrivateDir(const std::string& base) {
  std::string root = base;
  for (const char* var : {"AOTRUN_TMPDIR", "TMPDIR"}) {
    if (!root.empty()) break;
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') root = v;
  }
  if (root.empty()) root = "/tmp";
  std::vector<char> tmpl(root.begin(), root.end());
  const char suffix[] = "/aotrun-pt2-XXXXXX";
  tmpl.insert(tmpl.end(), suffix, suffix + sizeof suffix);  // with the NUL
  if (::mkdtemp(tmpl.data()) == nullptr) {
    fail(Code::LoadFailed, "cannot create a private directory under '" + root + "' to extract the archive: " +
                               std::strerror(errno) + " (set AOTRUN_TMPDIR to a writable directory)");
  }
  path_ = tmpl.data();
  fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    ::rmdir(path_.c_str());
    fail(Code::LoadFailed, "cannot open '" + path_ + "': " + std::strerror(err));
  }
}

PrivateDir::~PrivateDir() { remove(); }

void PrivateDir::remove() {
  if (fd_ < 0) return;
  // Only plain files are ever created inside (ZipArchive::extract).
  const int dup = ::dup(fd_);
  if (DIR* d = dup >= 0 ? ::fdopendir(dup) : nullptr) {
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    ::closedir(d);
    for (const auto& n : names) ::unlinkat(fd_, n.c_str(), 0);
  } else if (dup >= 0) {
    ::close(dup);
  }
  ::close(fd_);
  fd_ = -1;
  ::rmdir(path_.c_str());
}

}  // namespace aotrun::pt2
