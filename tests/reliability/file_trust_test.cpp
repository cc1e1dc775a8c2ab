// File trust: loading a package runs its code, so files someone else could
// have replaced are refused (INTEGRITY) unless the caller opts in, and a
// pinned sha256 is checked before any code is loaded.
#include <sys/stat.h>
#include <unistd.h>

#include "rel_util.hpp"

using nlohmann::json;
using rel::open_fails;
using rel::PackageCopy;

namespace {

void expect_refused_then_allowed(const std::string& dir, const std::string& needle) {
  REL_EXPECT_OUTCOME(open_fails(dir), AOTRUN_ERR_INTEGRITY, needle);
  rel::PackageOptions allow;
  allow.allow_untrusted_files(true);
  aotrun_package* p = nullptr;
  AOTRUN_EXPECT_OK(aotrun_package_open(dir.c_str(), allow.get(), &p));
  aotrun_package_close(p);
}

}  // namespace

TEST(FileTrust, GroupOrWorldWritableFilesAreRefused) {
  struct Case {
    const char* what;
    const char* file;  // "" = the package directory itself
    mode_t mode;
  };
  for (const Case& c :
       {Case{"library world-writable", "libmlp.so", 0757}, Case{"library group-writable", "libmlp.so", 0775},
        Case{"manifest world-writable", "manifest.json", 0666},
        Case{"weights group-writable", "weights.safetensors", 0664},
        Case{"package directory world-writable", "", 0777}}) {
    SCOPED_TRACE(c.what);
    PackageCopy pkg("mlp", "perm");
    const std::string path = *c.file ? pkg.file(c.file) : pkg.dir();
    ASSERT_EQ(::chmod(path.c_str(), c.mode), 0);
    expect_refused_then_allowed(pkg.dir(), "'" + path + "' is writable by group or others");
  }
}

TEST(FileTrust, ForeignOwnerIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user (chown)";
  PackageCopy pkg("mlp", "owner");
  const uid_t stranger = 12345;
  ASSERT_EQ(::chown(pkg.file("libmlp.so").c_str(), stranger, static_cast<gid_t>(-1)), 0);
  expect_refused_then_allowed(pkg.dir(), "is owned by uid 12345, neither this process's user nor root");
}

TEST(FileTrust, PinnedSha256Mismatch) {
  PackageCopy pkg("mlp", "pin");
  const std::string manifest_hash = rel::sha256_of(pkg.file("manifest.json"));
  ASSERT_EQ(manifest_hash.size(), 64u);
  {
    rel::PackageOptions o;
    o.expected_sha256(std::string(64, 'e'));
    REL_EXPECT_OUTCOME(open_fails(pkg.dir(), o.get()), AOTRUN_ERR_INTEGRITY, "but the caller pinned eeee");
  }
  {
    // The right pin, upper-case: accepted.
    std::string upper = manifest_hash;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    rel::PackageOptions o;
    o.expected_sha256(upper);
    aotrun_package* p = nullptr;
    AOTRUN_ASSERT_OK(aotrun_package_open(pkg.dir().c_str(), o.get(), &p));
    aotrun_package_close(p);
  }
  {
    // A pinned manifest pins every file: verification happens even with
    // verify_hashes off, so a modified library is caught.
    std::string lib = rel::read_file(pkg.file("libmlp.so"));
    lib[lib.size() / 2] ^= 0x5A;
    rel::write_file(pkg.file("libmlp.so"), lib);
    rel::PackageOptions o;
    o.expected_sha256(manifest_hash).verify_hashes(false);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir(), o.get()), AOTRUN_ERR_INTEGRITY, "libmlp.so' is");
  }
  // Malformed pins are refused by the setter.
  rel::PackageOptions o;
  for (const char* bad : {"", "abc", "zz", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg"}) {
    SCOPED_TRACE(bad);
    REL_EXPECT_OUTCOME(rel::outcome(aotrun_package_options_set_expected_sha256(o.get(), bad)),
                       AOTRUN_ERR_INVALID_ARGUMENT, "expected sha256 must be 64 hex digits");
  }
}

TEST(FileTrust, ManifestHashMismatchNamesTheFile) {
  for (const char* file : {"libmlp.so", "weights.safetensors"}) {
    SCOPED_TRACE(file);
    PackageCopy pkg("mlp", "hash");
    std::string bytes = rel::read_file(pkg.file(file));
    bytes[bytes.size() - 1] ^= 0x01;
    rel::write_file(pkg.file(file), bytes);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_INTEGRITY, std::string(file) + "' is ");
    // Without verification the weights change is harmless (still a valid
    // file) and the package opens: the hash was the only thing guarding it.
    if (std::string(file) == "weights.safetensors") {
      rel::PackageOptions o;
      o.verify_hashes(false);
      aotrun_package* p = nullptr;
      AOTRUN_EXPECT_OK(aotrun_package_open(pkg.dir().c_str(), o.get(), &p));
      aotrun_package_close(p);
    }
  }
}
