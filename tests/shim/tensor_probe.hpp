// Reading a tensor handle's metadata and logical values through a ShimApi,
// for comparisons between providers and with reference implementations.
#pragma once

#include <cstring>
#include <ostream>
#include <vector>

#include "shim_api.hpp"

struct TensorDesc {
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0, storage_size = 0, numel = 0, dim = 0;
  int32_t dtype = 0, device_type = 0, device_index = 0;
  bool contiguous = false;
  bool operator==(const TensorDesc& o) const {
    return sizes == o.sizes && strides == o.strides && storage_offset == o.storage_offset &&
           storage_size == o.storage_size && numel == o.numel && dim == o.dim && dtype == o.dtype &&
           device_type == o.device_type && device_index == o.device_index && contiguous == o.contiguous;
  }
};

inline std::ostream& operator<<(std::ostream& os, const TensorDesc& d) {
  auto list = [&](const std::vector<int64_t>& v) {
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
    os << "]";
  };
  os << "sizes=";
  list(d.sizes);
  os << " strides=";
  list(d.strides);
  return os << " offset=" << d.storage_offset << " storage_bytes=" << d.storage_size << " numel=" << d.numel
            << " dim=" << d.dim << " dtype=" << d.dtype << " device=" << d.device_type << ":" << d.device_index
            << " contiguous=" << d.contiguous;
}

inline TensorDesc describe(const ShimApi& a, AtenTensorHandle h) {
  TensorDesc d;
  int64_t *sz = nullptr, *st = nullptr;
  a.aoti_torch_get_dim(h, &d.dim);
  a.aoti_torch_get_sizes(h, &sz);
  a.aoti_torch_get_strides(h, &st);
  d.sizes.assign(sz, sz + d.dim);
  d.strides.assign(st, st + d.dim);
  a.aoti_torch_get_storage_offset(h, &d.storage_offset);
  a.aoti_torch_get_storage_size(h, &d.storage_size);
  a.aoti_torch_get_numel(h, &d.numel);
  a.aoti_torch_get_dtype(h, &d.dtype);
  a.aoti_torch_get_device_type(h, &d.device_type);
  a.aoti_torch_get_device_index(h, &d.device_index);
  a.aoti_torch_is_contiguous(h, &d.contiguous);
  return d;
}

inline float bf16_value(uint16_t v) {
  uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t bf16_bits(float f) {  // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// The logical elements in row-major order, as doubles (float32, float64,
// bfloat16, int64, int32, bool, uint8).
inline std::vector<double> values(const ShimApi& a, AtenTensorHandle h) {
  const TensorDesc d = describe(a, h);
  void* data = nullptr;
  a.aoti_torch_get_data_ptr(h, &data);
  std::vector<double> out(static_cast<size_t>(d.numel));
  for (int64_t i = 0; i < d.numel; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t k = d.dim - 1; k >= 0; --k) {
      off += (rem % d.sizes[k]) * d.strides[k];
      rem /= d.sizes[k];
    }
    const char* p = static_cast<const char*>(data);
    if (d.dtype == a.aoti_torch_dtype_float32()) {
      float v;
      std::memcpy(&v, p + off * 4, 4);
      out[i] = v;
    } else if (d.dtype == a.aoti_torch_dtype_float64()) {
      std::memcpy(&out[i], p + off * 8, 8);
    } else if (d.dtype == a.aoti_torch_dtype_bfloat16()) {
      uint16_t v;
      std::memcpy(&v, p + off * 2, 2);
      out[i] = bf16_value(v);
    } else if (d.dtype == a.aoti_torch_dtype_int64()) {
      int64_t v;
      std::memcpy(&v, p + off * 8, 8);
      out[i] = static_cast<double>(v);
    } else if (d.dtype == a.aoti_torch_dtype_int32()) {
      int32_t v;
      std::memcpy(&v, p + off * 4, 4);
      out[i] = v;
    } else {  // bool, uint8
      out[i] = static_cast<unsigned char>(p[off]);
    }
  }
  return out;
}

// Every |x - y| <= atol + rtol * |y| (torch.testing.assert_close's rule);
// returns "" or the first offending index.
inline std::string close(const std::vector<double>& x, const std::vector<double>& y, double rtol, double atol) {
  if (x.size() != y.size()) return "sizes differ: " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double diff = x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
    const double ay = y[i] < 0 ? -y[i] : y[i];
    if (!(diff <= atol + rtol * ay)) {
      return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
    }
  }
  return "";
}
