// Writes .safetensors files of float32 tensors for tests: the 8-byte
// little-endian header length, the JSON header (padded with spaces to a
// multiple of 8), then the data in order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace aotrun_test {

struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// False if the file cannot be written.
inline bool write_safetensors(const std::string& path, const std::vector<F32Tensor>& tensors) {
  std::string header = "{";
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const F32Tensor& t = tensors[i];
    const uint64_t bytes = t.data.size() * sizeof(float);
    std::string shape;
    for (size_t d = 0; d < t.shape.size(); ++d) shape += (d ? "," : "") + std::to_string(t.shape[d]);
    header += (i ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  unsigned char len[8];
  for (int b = 0; b < 8; ++b) len[b] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * b));
  bool ok = std::fwrite(len, 1, 8, f) == 8 && std::fwrite(header.data(), 1, header.size(), f) == header.size();
  for (const F32Tensor& t : tensors) {
    ok = ok && std::fwrite(t.data.data(), sizeof(float), t.data.size(), f) == t.data.size();
  }
  return std::fclose(f) == 0 && ok;
}

}  // namespace aotrun_test
