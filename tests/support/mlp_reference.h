// Test support: a naive reference of the example MLP (double accumulation),
// a small safetensors reader, and the deterministic inputs shared by the C++
// and Rust tests. Not thread-safe objects; use one per thread or share const.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

namespace aotrun {
namespace test {

// A whole safetensors file in memory. Throws std::runtime_error naming the
// file on any format error.
class Safetensors {
 public:
  struct Tensor {
    std::string name;
    std::string dtype;  // "F32", ...
    std::vector<int64_t> shape;
    size_t begin = 0;  // byte offsets into the data section
    size_t end = 0;
  };

  static Safetensors load(const std::string& path);

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const Tensor* find(const std::string& name) const;
  const void* data(const Tensor& t) const { return bytes_.data() + data_start_ + t.begin; }

  // Every tensor as a package constant (DLTensor on CPU pointing into this
  // object), as the host passes them. Valid while this object lives.
  const std::vector<aotrun_pkg_constant>& constants();

 private:
  std::vector<unsigned char> bytes_;
  size_t data_start_ = 0;
  std::vector<Tensor> tensors_;
  std::vector<aotrun_pkg_constant> constants_;
};

class MlpReference {
 public:
  explicit MlpReference(const Safetensors& weights);
  // x: [batch, 256] row-major; returns y: [batch, 64].
  std::vector<float> forward(const std::vector<float>& x, int64_t batch) const;

  static constexpr int64_t kIn = 256;
  static constexpr int64_t kOut = 64;

 private:
  struct Layer {
    std::vector<float> weight;  // [out, in]
    std::vector<float> bias;
    int64_t in = 0, out = 0;
  };
  static Layer layer(const Safetensors& w, const std::string& prefix);
  Layer fc1_, fc2_, fc3_;
};

// Deterministic input for a batch: values in [-1, 1), fixed per (batch, seed).
std::vector<float> mlp_reference_input(int64_t batch, uint64_t seed = 1);

}  // namespace test
}  // namespace aotrun
