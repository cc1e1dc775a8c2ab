// SHA-256 (FIPS 180-4), used to verify package files against their manifest
// before any of their code is loaded. Computed by OpenSSL's libcrypto (EVP),
// linked privately into libaotrun: none of its symbols is exported, and no
// OpenSSL header is included here, so users of the core do not see it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

// OpenSSL's EVP_MD_CTX, declared without its headers.
struct evp_md_ctx_st;

namespace aotrun {

// Incremental digest. Throws std::bad_alloc when OpenSSL cannot allocate its
// context, Error(Internal) if OpenSSL refuses an operation.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t len);
  // The digest of everything passed to update(); call once.
  std::array<uint8_t, 32> finish();

 private:
  evp_md_ctx_st* ctx_;
};

// Lower-case hex digest of a whole file. Throws Error(NotFound/LoadFailed).
std::string sha256_file_hex(const std::string& path);
// Digest of everything readable from `fd` starting at offset 0 (pread; the
// file offset is not moved). `what` names the file in errors.
std::string sha256_fd_hex(int fd, const std::string& what);
std::string to_hex(const uint8_t* data, size_t len);

}  // namespace aotrun
