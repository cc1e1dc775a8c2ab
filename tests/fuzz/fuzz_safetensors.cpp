// libFuzzer target: a whole .safetensors file (8-byte little-endian header
// length, JSON header, data section).
//  1. SafetensorsFile::open on it (through a memfd), which checks the header
//     length against the file and parses the header against the mapping;
//  2. SafetensorsFile::parse_header directly, over a heap copy of the data
//     section of exactly its size (so AddressSanitizer sees any overrun).
// Every accepted tensor must satisfy invariants.hpp; refusals must be
// aotrun::Error(BAD_PACKAGE); both calls must agree.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "invariants.hpp"
#include "base/error.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

// 1 accepted, 0 refused with BAD_PACKAGE; anything else aborts.
int open_outcome(const uint8_t* data, size_t size) {
  int fd = ::memfd_create("aotrun_fuzz_st", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) {
    ::close(fd);
    return -1;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  int result = -1;
  try {
    auto f = aotrun::SafetensorsFile::open(path);
    result = 1;
  } catch (const aotrun::Error& e) {
    if (e.code() != aotrun::Code::BadPackage) {
      ::close(fd);
      finding("open refused with code " + std::to_string(static_cast<int>(e.code())) + ": " + e.what());
    }
    result = 0;
  }
  ::close(fd);
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int opened = open_outcome(data, size);

  if (size < 8) {
    if (opened == 1) finding("a file shorter than 8 bytes was accepted");
    return 0;
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data[i];
  if (header_len > aotrun::kMaxSafetensorsHeader || header_len > size - 8) {
    if (opened == 1) finding("header length " + std::to_string(header_len) + " beyond the file was accepted");
    return 0;
  }
  const uint64_t data_size = size - 8 - header_len;
  // Exact-size copies: an over-read of either is an ASan report.
  std::unique_ptr<char[]> header(new char[header_len > 0 ? header_len : 1]);
  std::memcpy(header.get(), data + 8, header_len);
  std::unique_ptr<uint8_t[]> section(new uint8_t[data_size > 0 ? data_size : 1]);
  std::memcpy(section.get(), data + 8 + header_len, data_size);

  int parsed = 0;
  try {
    auto tensors = aotrun::SafetensorsFile::parse_header(header.get(), header_len, section.get(), data_size, "fuzz");
    const std::string broken = aotrun_fuzz::check_tensors(tensors, section.get(), data_size);
    // F1 (byte size wraps in 64 bits) can be let through with
    // AOTRUN_FUZZ_ALLOW_KNOWN=F1 so that fuzzing explores past it.
    const char* known = std::getenv("AOTRUN_FUZZ_ALLOW_KNOWN");
    const bool f1 = broken.find("does not fit in 64 bits") != std::string::npos ||
                    broken.find("but its dtype and shape need more") != std::string::npos;
    if (!broken.empty() && !(f1 && known != nullptr && std::strstr(known, "F1") != nullptr)) {
      finding("accepted safetensors breaks an invariant: " + broken);
    }
    parsed = 1;
  } catch (const aotrun::Error& e) {
    if (e.code() != aotrun::Code::BadPackage)
      finding(std::string("parse_header refused with another code: ") + e.what());
  }
  if (opened >= 0 && opened != parsed) finding("open and parse_header disagree on the same bytes");
  return 0;
}
