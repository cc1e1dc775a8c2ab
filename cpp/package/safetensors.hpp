// Read-only view of a .safetensors weights file: the file is mmap'd once and
// every tensor points into the mapping, so opening a package does not copy
// weights and open time does not grow with their size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace aotrun {

struct MappedTensor {
  std::string name;
  DLDataType dtype{};
  std::vector<int64_t> shape;
  const void* data = nullptr;
  uint64_t bytes = 0;
};

class SafetensorsFile {
 public:
  // Maps and indexes `path`. Every size, offset and count in the header is
  // checked against the file before use. Throws Error(NotFound, LoadFailed,
  // BadPackage) naming the file and the offending tensor.
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::vector<MappedTensor>& tensors() const { return tensors_; }
  uint64_t data_bytes() const { return data_bytes_; }
  const std::string& path() const { return path_; }

  // Parses a header (the JSON after the 8-byte length) against a data section
  // of `data_size` bytes. Exposed for tests and fuzzing.
  static std::vector<MappedTensor> parse_header(const char* json, size_t json_len, const uint8_t* data,
                                                uint64_t data_size, const std::string& where);

 private:
  SafetensorsFile() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t map_len_ = 0;
  uint64_t data_bytes_ = 0;
  std::vector<MappedTensor> tensors_;
};

constexpr uint64_t kMaxSafetensorsHeader = 100u << 20;  // the format's own limit
constexpr size_t kMaxSafetensorsTensors = 1u << 20;

}  // namespace aotrun
