// Helpers of the reliability suite: scratch package directories (a copy of a
// built package with one file changed), safetensors files built byte by byte,
// manifest rewriting with correct hashes, and open outcomes.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace rel {

using aotrun_test::bare_so;
using aotrun_test::Outcome;
using aotrun_test::outcome;
using aotrun_test::PackageOptions;
using aotrun_test::pkg_path;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

// Lower-case hex sha256 of a file, computed by coreutils (independently of
// aotrun's own implementation).
inline std::string sha256_of(const std::string& path) {
  std::string cmd = "sha256sum '" + path + "'";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return "";
  char hex[65] = {};
  size_t n = std::fread(hex, 1, 64, f);
  pclose(f);
  return n == 64 ? std::string(hex) : std::string();
}

// A fresh directory under the test temp dir, removed with its contents.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    std::string tmpl = testing::TempDir() + "/aotrun_rel_" + tag + "_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    if (made == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << tmpl;
      return;
    }
    path_ = made;
    ::chmod(path_.c_str(), 0755);
  }
  ~ScratchDir() {
    if (!path_.empty()) sh("chmod -R u+rwx '" + path_ + "' 2>/dev/null; rm -rf '" + path_ + "'");
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Copy of a built package directory (<build>/packages/<name>) in a scratch
// directory, writable, with helpers to change one thing about it.
class PackageCopy {
 public:
  PackageCopy(const std::string& name, const std::string& tag) : scratch_(tag) {
    dir_ = scratch_ / name;
    if (sh("cp -r '" + pkg_path(name) + "' '" + dir_ + "' && chmod -R go-w '" + dir_ + "'") != 0) {
      ADD_FAILURE() << "cannot copy package " << name;
    }
  }
  const std::string& dir() const { return dir_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

  nlohmann::json manifest() const { return nlohmann::json::parse(read_file(file("manifest.json"))); }
  void write_manifest_text(const std::string& text) const { write_file(file("manifest.json"), text); }
  void write_manifest(const nlohmann::json& j) const { write_manifest_text(j.dump(2)); }

  // Replaces file `name` and updates its hash in the manifest, so that only
  // the file's contents are wrong, not its integrity record.
  void replace_file_rehash(const std::string& name, const std::string& bytes) const {
    write_file(file(name), bytes);
    nlohmann::json j = manifest();
    j["files"][name] = sha256_of(file(name));
    write_manifest(j);
  }

 private:
  ScratchDir scratch_;
  std::string dir_;
};

// A safetensors file: 8-byte little-endian header length, header, data.
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

// Opens `path` expecting failure: returns code + message and checks that the
// out parameter was left untouched.
inline Outcome open_fails(const std::string& path, const aotrun_package_options* opts = nullptr) {
  aotrun_package* sentinel = reinterpret_cast<aotrun_package*>(0x1);
  aotrun_package* p = sentinel;
  Outcome o = outcome(aotrun_package_open(path.c_str(), opts, &p));
  EXPECT_EQ(p, sentinel) << "out parameter written on failure";
  if (o.code == AOTRUN_OK && p != sentinel) aotrun_package_close(p);
  return o;
}

// How a forked child ended.
struct ChildResult {
  bool exited = false;
  int status = -1;  // exit status, or the signal number when !exited
  bool ok() const { return exited && status == 0; }
  // "" when ok(); else how it ended (SIGALRM: it hung).
  std::string describe() const {
    if (ok()) return "";
    if (exited) return "exited with status " + std::to_string(status);
    if (status < 0) return "fork or waitpid failed";
    return "killed by signal " + std::to_string(status) + " (" + ::strsignal(status) + ")" +
           (status == SIGALRM ? " (hung: alarm)" : "");
  }
};

// Runs `body` in a forked child (0 = success), so that a crash or a hang in
// the library fails the test instead of killing or stalling the test binary.
// With `alarm_s` > 0 the child dies of SIGALRM after that many seconds.
inline ChildResult in_child(const std::function<int()>& body, unsigned alarm_s = 0) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (alarm_s > 0) ::alarm(alarm_s);
    const int rc = body();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  ChildResult r;
  int st = 0;
  if (pid < 0 || ::waitpid(pid, &st, 0) != pid) return r;
  r.exited = WIFEXITED(st);
  r.status = r.exited ? WEXITSTATUS(st) : WTERMSIG(st);
  return r;
}

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

#define REL_EXPECT_OUTCOME(o, code_, needle)                                                           \
  do {                                                                                                 \
    const ::aotrun_test::Outcome& _o = (o);                                                            \
    EXPECT_EQ(_o.code, code_) << aotrun_code_name(_o.code) << ": " << _o.message;                      \
    EXPECT_TRUE(::rel::contains(_o.message, needle)) << "'" << (needle) << "' not in: " << _o.message; \
  } while (0)

}  // namespace rel
