#include "base/sha256.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "base/error.hpp"

namespace aotrun {
namespace {

// OpenSSL keeps failures in a per-thread queue; take ours out of it so that
// neither they nor their text outlive this call in the host's process.
[[noreturn]] void openssl_failed(const char* what) {
  std::string detail;
  if (unsigned long e = ERR_get_error(); e != 0) {
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    detail = std::string(": ") + text;
  }
  ERR_clear_error();
  fail(Code::Internal, std::string("sha256: OpenSSL ") + what + " failed" + detail);
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
  if (EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    openssl_failed("EVP_DigestInit_ex");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void* data, size_t len) {
  if (len > 0 && EVP_DigestUpdate(ctx_, data, len) != 1) openssl_failed("EVP_DigestUpdate");
}

std::array<uint8_t, 32> Sha256::finish() {
  std::array<uint8_t, 32> out{};
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_, out.data(), &n) != 1 || n != out.size()) openssl_failed("EVP_DigestFinal_ex");
  return out;
}

std::string to_hex(const uint8_t* data, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string s(len * 2, '0');
  for (size_t i = 0; i < len; ++i) {
    s[2 * i] = digits[data[i] >> 4];
    s[2 * i + 1] = digits[data[i] & 15];
  }
  return s;
}

std::string sha256_fd_hex(int fd, const std::string& what) {
  Sha256 h;
  // Fixed-size reads: memory stays bounded whatever the file's size.
  uint8_t buf[1 << 16];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), off);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(Code::LoadFailed, "cannot read '" + what + "': " + std::strerror(errno));
    }
    if (n == 0) break;
    h.update(buf, static_cast<size_t>(n));
    off += n;
  }
  auto d = h.finish();
  return to_hex(d.data(), d.size());
}

std::string sha256_file_hex(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed, "cannot open '" + path + "': " + std::strerror(err));
  }
  try {
    std::string hex = sha256_fd_hex(fd, path);
    ::close(fd);
    return hex;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace aotrun
