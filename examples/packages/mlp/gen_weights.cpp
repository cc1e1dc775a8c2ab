// Build-time generator of the MLP's weights.safetensors.
//
//   aotrun_mlp_gen_weights OUT_FILE [normal|bad_shape|missing_constant]
//
// Deterministic: a fixed-seed splitmix64 stream, each tensor drawn in turn
// from uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's nn.Linear init
// range). The variants build the broken weights used by the loader tests:
// bad_shape makes fc2.weight [1024, 1000]; missing_constant leaves out fc3.bias.
//
// safetensors layout: 8-byte little-endian header length, JSON header
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}},
// padded with spaces so the data starts 8-byte aligned, then the data.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  int64_t fan_in;
};

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-bound, bound).
  float uniform(float bound) {
    const double u = static_cast<double>(next() >> 40) / static_cast<double>(1ULL << 24);
    return static_cast<float>((2.0 * u - 1.0) * bound);
  }

 private:
  uint64_t state_;
};

void put_le64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

void put_le32(std::vector<unsigned char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s OUT_FILE [normal|bad_shape|missing_constant]\n", argv[0]);
    return 2;
  }
  const std::string variant = argc == 3 ? argv[2] : "normal";
  if (variant != "normal" && variant != "bad_shape" && variant != "missing_constant") {
    std::fprintf(stderr, "unknown variant '%s'\n", variant.c_str());
    return 2;
  }
  std::vector<Tensor> tensors = {
      {"fc1.weight", {1024, 256}, 256}, {"fc1.bias", {1024}, 256},        {"fc2.weight", {1024, 1024}, 1024},
      {"fc2.bias", {1024}, 1024},       {"fc3.weight", {64, 1024}, 1024}, {"fc3.bias", {64}, 1024},
  };
  if (variant == "bad_shape") tensors[2].shape = {1024, 1000};
  if (variant == "missing_constant") tensors.pop_back();

  SplitMix64 rng(0x61'6f'74'72'75'6e'4d'4cULL);  // "aotrunML"
  std::vector<unsigned char> data;
  std::string header = "{\"__metadata__\":{\"generator\":\"aotrun_mlp_gen_weights\",\"variant\":\"" + variant + "\"}";
  for (const Tensor& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    const float bound = 1.0f / std::sqrt(static_cast<float>(t.fan_in));
    const size_t begin = data.size();
    for (int64_t i = 0; i < n; ++i) {
      const float v = rng.uniform(bound);
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      put_le32(data, bits);
    }
    header += ",\"" + t.name + "\":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) {
      header += (d ? "," : "") + std::to_string(t.shape[d]);
    }
    header += "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  while ((8 + header.size()) % 8 != 0) header += ' ';

  FILE* f = std::fopen(argv[1], "wb");
  if (f == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  unsigned char len[8];
  put_le64(len, header.size());
  const bool ok = std::fwrite(len, 1, 8, f) == 8 && std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
                  std::fwrite(data.data(), 1, data.size(), f) == data.size();
  if (std::fclose(f) != 0 || !ok) {
    std::fprintf(stderr, "failed writing %s\n", argv[1]);
    return 1;
  }
  return 0;
}
