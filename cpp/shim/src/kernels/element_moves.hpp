// Moving elements without looking at them, for the kernels that only copy
// values (index_tensor.cpp, masked_scatter.cpp): a type per element size, so
// that one instantiation serves every dtype of that size, and row-major walks
// over a few strided operands with their dims merged where all of them allow,
// so that the inner loops run over long rows.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace aotrun::shim::kernels {

struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(T{}) with a trivially copyable type of `itemsize` bytes; false
// (f not called) for a size no dtype has.
template <typename F>
bool with_element_bytes(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    case 16: f(Bytes16{}); return true;
    default: return false;
  }
}

// Element `i` of a T array at `base` (memcpy: the bytes may belong to any
// dtype of that size).
template <typename T>
inline T load_elem(const char* base, int64_t i) {
  T v;
  std::memcpy(&v, base + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
template <typename T>
inline void store_elem(char* base, int64_t i, T v) {
  std::memcpy(base + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Dims walked together by K operands in row-major order: the sizes and each
// operand's strides, in elements.
template <size_t K>
struct WalkDims {
  std::vector<int64_t> sizes;
  std::array<std::vector<int64_t>, K> strides;
};

// The same positions in the same order with size-1 dims dropped and each dim
// merged into the one inside it where every operand steps over both as one
// (outer stride == inner stride * inner size).
template <size_t K>
WalkDims<K> merged(const WalkDims<K>& in) {
  WalkDims<K> out;  // innermost first while building
  for (int64_t d = static_cast<int64_t>(in.sizes.size()) - 1; d >= 0; --d) {
    const int64_t n = in.sizes[d];
    if (n == 1) continue;
    bool join = !out.sizes.empty();
    for (size_t k = 0; join && k < K; ++k) join = in.strides[k][d] == out.strides[k].back() * out.sizes.back();
    if (join) {
      out.sizes.back() *= n;
      continue;
    }
    out.sizes.push_back(n);
    for (size_t k = 0; k < K; ++k) out.strides[k].push_back(in.strides[k][d]);
  }
  std::reverse(out.sizes.begin(), out.sizes.end());
  for (auto& s : out.strides) std::reverse(s.begin(), s.end());
  return out;
}

// f(offsets, n, steps) for each run of the positions [begin, end) (row-major
// numbering) along the innermost dim: offsets are each operand's element
// offset of the run's first position, steps its innermost strides. A walk
// with no dims has one position. Nothing when a size is 0.
template <size_t K, typename F>
void for_each_run(const WalkDims<K>& d, int64_t begin, int64_t end, F&& f) {
  std::array<int64_t, K> off{}, step{};
  if (begin >= end) return;
  const int64_t nd = static_cast<int64_t>(d.sizes.size());
  if (nd == 0) {
    f(static_cast<const std::array<int64_t, K>&>(off), int64_t{1}, static_cast<const std::array<int64_t, K>&>(step));
    return;
  }
  for (int64_t i = 0; i < nd; ++i) {
    if (d.sizes[i] == 0) return;
  }
  for (size_t k = 0; k < K; ++k) step[k] = d.strides[k][nd - 1];
  std::vector<int64_t> idx(nd);
  int64_t rem = begin;
  for (int64_t i = nd - 1; i >= 0; --i) {
    idx[i] = rem % d.sizes[i];
    rem /= d.sizes[i];
    for (size_t k = 0; k < K; ++k) off[k] += idx[i] * d.strides[k][i];
  }
  const int64_t len = d.sizes[nd - 1];
  for (int64_t pos = begin;;) {
    const int64_t n = std::min(len - idx[nd - 1], end - pos);
    f(static_cast<const std::array<int64_t, K>&>(off), n, static_cast<const std::array<int64_t, K>&>(step));
    pos += n;
    if (pos >= end) return;
    // The row is done: back to its start, then one step out (carrying).
    for (size_t k = 0; k < K; ++k) off[k] -= idx[nd - 1] * step[k];
    idx[nd - 1] = 0;
    for (int64_t i = nd - 2; i >= 0; --i) {
      for (size_t k = 0; k < K; ++k) off[k] += d.strides[k][i];
      if (++idx[i] < d.sizes[i]) break;
      for (size_t k = 0; k < K; ++k) off[k] -= idx[i] * d.strides[k][i];
      idx[i] = 0;
    }
  }
}

}  // namespace aotrun::shim::kernels
