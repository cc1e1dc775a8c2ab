// SHA-256 (FIPS 180-4), used to verify package files against their manifest
// before any of their code is loaded. Own implementation: libaotrun must not
// pull a crypto library into every process that loads a model.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace aotrun {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t len);
  std::array<uint8_t, 32> finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

// Lower-case hex digest of a whole file. Throws Error(NotFound/LoadFailed).
std::string sha256_file_hex(const std::string& path);
// Digest of everything readable from `fd` starting at offset 0 (pread; the
// file offset is not moved). `what` names the file in errors.
std::string sha256_fd_hex(int fd, const std::string& what);
std::string to_hex(const uint8_t* data, size_t len);

}  // namespace aotrun
