#include "mlp_reference.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace aotrun {
namespace test {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw std::runtime_error("safetensors file '" + path + "': " + what);
}

}  // namespace

Safetensors Safetensors::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open");
  Safetensors st;
  st.bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (st.bytes_.size() < 8) bad(path, "shorter than its 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | st.bytes_[i];
  if (header_len > st.bytes_.size() - 8) bad(path, "header length exceeds the file");
  st.data_start_ = 8 + header_len;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(st.bytes_.begin() + 8, st.bytes_.begin() + 8 + header_len);
  } catch (const std::exception& e) {
    bad(path, std::string("header is not JSON: ") + e.what());
  }
  const size_t data_size = st.bytes_.size() - st.data_start_;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    Tensor t;
    t.name = it.key();
    t.dtype = it.value().at("dtype").get<std::string>();
    t.shape = it.value().at("shape").get<std::vector<int64_t>>();
    const auto offsets = it.value().at("data_offsets").get<std::vector<size_t>>();
    if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size) {
      bad(path, "tensor '" + t.name + "' has bad data_offsets");
    }
    t.begin = offsets[0];
    t.end = offsets[1];
    st.tensors_.push_back(std::move(t));
  }
  return st;
}

const Safetensors::Tensor* Safetensors::find(const std::string& name) const {
  for (const Tensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const std::vector<aotrun_pkg_constant>& Safetensors::constants() {
  constants_.clear();
  for (Tensor& t : tensors_) {
    aotrun_pkg_constant c;
    std::memset(&c, 0, sizeof(c));
    c.name = t.name.c_str();
    c.tensor.data = bytes_.data() + data_start_ + t.begin;
    c.tensor.device = DLDevice{kDLCPU, 0};
    c.tensor.ndim = static_cast<int32_t>(t.shape.size());
    c.tensor.shape = t.shape.data();
    c.tensor.strides = nullptr;
    c.tensor.byte_offset = 0;
    if (t.dtype == "F32") {
      c.tensor.dtype = DLDataType{kDLFloat, 32, 1};
    } else if (t.dtype == "F64") {
      c.tensor.dtype = DLDataType{kDLFloat, 64, 1};
    } else if (t.dtype == "I64") {
      c.tensor.dtype = DLDataType{kDLInt, 64, 1};
    } else {
      c.tensor.dtype = DLDataType{kDLOpaqueHandle, 8, 1};
    }
    constants_.push_back(c);
  }
  return constants_;
}

MlpReference::Layer MlpReference::layer(const Safetensors& w, const std::string& prefix) {
  const Safetensors::Tensor* weight = w.find(prefix + ".weight");
  const Safetensors::Tensor* bias = w.find(prefix + ".bias");
  if (weight == nullptr || bias == nullptr || weight->shape.size() != 2 || bias->shape.size() != 1 ||
      weight->shape[0] != bias->shape[0] || weight->dtype != "F32" || bias->dtype != "F32") {
    throw std::runtime_error("mlp reference: weights of layer " + prefix + " missing or malformed");
  }
  Layer l;
  l.out = weight->shape[0];
  l.in = weight->shape[1];
  l.weight.resize(static_cast<size_t>(l.out * l.in));
  l.bias.resize(static_cast<size_t>(l.out));
  std::memcpy(l.weight.data(), w.data(*weight), l.weight.size() * sizeof(float));
  std::memcpy(l.bias.data(), w.data(*bias), l.bias.size() * sizeof(float));
  return l;
}

MlpReference::MlpReference(const Safetensors& weights)
    : fc1_(layer(weights, "fc1")), fc2_(layer(weights, "fc2")), fc3_(layer(weights, "fc3")) {
  if (fc1_.in != kIn || fc2_.in != fc1_.out || fc3_.in != fc2_.out || fc3_.out != kOut) {
    throw std::runtime_error("mlp reference: layer sizes do not chain 256 -> ... -> 64");
  }
}

std::vector<float> MlpReference::forward(const std::vector<float>& x, int64_t batch) const {
  if (static_cast<int64_t>(x.size()) != batch * kIn) {
    throw std::runtime_error("mlp reference: input has " + std::to_string(x.size()) + " values, expected batch * 256");
  }
  auto apply = [batch](const Layer& l, const std::vector<double>& in, bool relu) {
    std::vector<double> out(static_cast<size_t>(batch * l.out));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < l.out; ++o) {
        double acc = l.bias[o];
        const float* w = l.weight.data() + o * l.in;
        const double* xi = in.data() + b * l.in;
        for (int64_t i = 0; i < l.in; ++i) acc += static_cast<double>(w[i]) * xi[i];
        out[b * l.out + o] = relu && acc < 0 ? 0.0 : acc;
      }
    }
    return out;
  };
  std::vector<double> h(x.begin(), x.end());
  h = apply(fc1_, h, true);
  h = apply(fc2_, h, true);
  h = apply(fc3_, h, false);
  return std::vector<float>(h.begin(), h.end());
}

std::vector<float> mlp_reference_input(int64_t batch, uint64_t seed) {
  // splitmix64 seeded by (batch, seed): independent of the weights' stream.
  uint64_t state = 0x696e707574ULL ^ (seed * 0x9E3779B97F4A7C15ULL) ^ static_cast<uint64_t>(batch);
  std::vector<float> x(static_cast<size_t>(batch * MlpReference::kIn));
  for (float& v : x) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    v = static_cast<float>(2.0 * (static_cast<double>(z >> 40) / 16777216.0) - 1.0);
  }
  return x;
}

}  // namespace test
}  // namespace aotrun
