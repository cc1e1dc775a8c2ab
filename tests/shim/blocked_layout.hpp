// oneDNN blocked layouts built by hand, for tests that make mkldnn-layout
// constants as a frozen export's load_constants does
// (aoti_torch_create_tensor_from_blob_v2 with layout 3): the blocked bytes
// of given values and the 772-byte metadata torch writes beside them
// (docs/FROZEN_EXPORTS.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace aotrun_shim_test {

// A blocked layout of `dims` (oneDNN's logical order): outer dims in `outer`
// order (outermost first), then the inner blocks (size, dim), outermost first.
struct Blocked {
  std::vector<int64_t> dims;
  std::vector<int> outer;
  std::vector<std::pair<int64_t, int>> blocks;
  int32_t groups = 1;
  std::vector<int64_t> block, padded, strides;
  int64_t total = 0;  // elements, padding included

  Blocked(std::vector<int64_t> d, std::vector<int> o, std::vector<std::pair<int64_t, int>> b, int32_t g = 1)
      : dims(std::move(d)), outer(std::move(o)), blocks(std::move(b)), groups(g) {
    const size_t n = dims.size();
    block.assign(n, 1);
    int64_t inner = 1;
    for (auto [s, d] : blocks) block[d] *= s, inner *= s;
    padded.resize(n);
    strides.resize(n);
    for (size_t d = 0; d < n; ++d) padded[d] = (dims[d] + block[d] - 1) / block[d] * block[d];
    int64_t s = inner;
    for (size_t i = outer.size(); i-- > 0;) {
      strides[outer[i]] = s;
      s *= padded[outer[i]] / block[outer[i]];
    }
    total = s;
  }
  // The element offset of a logical index.
  int64_t offset(const std::vector<int64_t>& idx) const {
    int64_t off = 0;
    std::vector<int64_t> rem(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] / block[d] * strides[d], rem[d] = idx[d] % block[d];
    int64_t mult = 1;
    for (size_t k = blocks.size(); k-- > 0;) {
      const auto [s, d] = blocks[k];
      off += (rem[d] % s) * mult;
      rem[d] /= s;
      mult *= s;
    }
    return off;
  }
  // oneDNN 3.x's memory descriptor as torch serialises it, plus ideep's groups.
  std::vector<uint8_t> metadata() const {
    std::vector<uint8_t> m(772, 0);
    auto put32 = [&](size_t at, int32_t v) { std::memcpy(&m[at], &v, 4); };
    auto put64 = [&](size_t at, int64_t v) { std::memcpy(&m[at], &v, 8); };
    m[0] = 1;
    put32(4, static_cast<int32_t>(dims.size()));
    for (size_t d = 0; d < dims.size(); ++d) {
      put64(8 + 8 * d, dims[d]);
      put64(112 + 8 * d, padded[d]);
      put64(320 + 8 * d, strides[d]);
    }
    put32(104, 3);  // f32
    put32(312, 2);  // blocked
    put32(416, static_cast<int32_t>(blocks.size()));
    for (size_t k = 0; k < blocks.size(); ++k) {
      put64(424 + 8 * k, blocks[k].first);
      put64(520 + 8 * k, blocks[k].second);
    }
    put32(768, groups);
    return m;
  }
  // `plain` (row-major over dims) in this layout, padding zero.
  std::vector<float> pack(const std::vector<float>& plain) const {
    std::vector<float> out(static_cast<size_t>(total), 0.0f);
    std::vector<int64_t> idx(dims.size(), 0);
    for (size_t i = 0; i < plain.size(); ++i) {
      int64_t rem = static_cast<int64_t>(i);
      for (size_t d = dims.size(); d-- > 0;) idx[d] = rem % dims[d], rem /= dims[d];
      out[static_cast<size_t>(offset(idx))] = plain[i];
    }
    return out;
  }
};

}  // namespace aotrun_shim_test
