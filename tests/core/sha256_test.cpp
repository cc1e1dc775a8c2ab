// Known answers of the core's SHA-256 (util/sha256, OpenSSL's EVP underneath):
// the FIPS 180-2 example messages, whole and streamed, through the class and
// through the fd/file functions the loader uses, and the errors those give.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/sha256.hpp"

namespace aotrun {
namespace {

struct Vector {
  std::string message;
  const char* hex;
};

const Vector kVectors[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    // 448 bits: the padding no longer fits the message's block.
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
};
const char kMillionA[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

std::string digest(const std::string& message, size_t chunk) {
  Sha256 h;
  for (size_t i = 0; i < message.size(); i += chunk) h.update(message.data() + i, std::min(chunk, message.size() - i));
  const auto d = h.finish();
  return to_hex(d.data(), d.size());
}

// A temporary file holding `bytes`, removed with the object.
struct TempFile {
  std::string path;
  int fd = -1;
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/aotrun_sha256_XXXXXX";
    fd = ::mkstemp(name);
    path = name;
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
  }
};

TEST(Sha256, KnownAnswersInOneUpdate) {
  for (const Vector& v : kVectors) EXPECT_EQ(digest(v.message, v.message.size() + 1), v.hex) << '"' << v.message << '"';
}

TEST(Sha256, KnownAnswersStreamed) {
  // Chunks that split the 64-byte blocks anywhere.
  for (size_t chunk : {1, 3, 55, 63, 64, 65}) {
    for (const Vector& v : kVectors) EXPECT_EQ(digest(v.message, chunk), v.hex) << "chunk " << chunk;
  }
}

TEST(Sha256, OneMillionAStreamed) {
  const std::string a(1000000, 'a');
  EXPECT_EQ(digest(a, 1000), kMillionA);
  EXPECT_EQ(digest(a, 4093), kMillionA);
}

TEST(Sha256, FileAndFdDigests) {
  // Larger than the 64 KiB read buffer, and not a multiple of it.
  TempFile file(std::string(1000000, 'a'));
  ASSERT_EQ(::lseek(file.fd, 7, SEEK_SET), 7);
  EXPECT_EQ(sha256_fd_hex(file.fd, file.path), kMillionA);
  EXPECT_EQ(::lseek(file.fd, 0, SEEK_CUR), 7) << "pread must leave the file offset alone";
  EXPECT_EQ(sha256_file_hex(file.path), kMillionA);

  TempFile empty("");
  EXPECT_EQ(sha256_file_hex(empty.path), kVectors[0].hex);
}

TEST(Sha256, MissingFileIsNotFound) {
  const std::string path = "/tmp/aotrun_sha256_no_such_file";
  ::unlink(path.c_str());
  try {
    sha256_file_hex(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::NotFound);
    EXPECT_EQ(std::string(e.what()), "cannot open '" + path + "': No such file or directory");
  }
}

TEST(Sha256, UnreadableFileIsLoadFailed) {
  // A directory opens read-only but cannot be read.
  try {
    sha256_file_hex("/tmp");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::LoadFailed);
    EXPECT_EQ(std::string(e.what()), "cannot read '/tmp': Is a directory");
  }
  try {
    sha256_fd_hex(-1, "nothing");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::LoadFailed);
    EXPECT_EQ(std::string(e.what()), "cannot read 'nothing': Bad file descriptor");
  }
}

}  // namespace
}  // namespace aotrun
