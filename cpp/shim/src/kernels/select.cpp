// The shim's ops whose output size depends on the data:
//   aoti_torch_cpu_nonzero                 [n, ndim] int64 coordinates of the
//                                          non-zero elements (NaN counts), row-major order,
//                                          laid out column by column as libtorch's
//   aoti_torch_cpu_nonzero_static          [size, ndim] int64, contiguous: nonzero's
//                                          first `size` rows, then rows of fill_value
//                                          (since aotrun-shim 1.4)
//   aoti_torch_cpu_masked_select           1-d: self's elements where the bool
//                                          mask is true, both broadcast, row-major order
//   aoti_torch_cpu_repeat_interleave_Tensor  1-d: i repeated repeats[i] times
// Each counts first, allocates the contiguous result, then fills it.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {

namespace {

// Broadcast shape of a and b (numpy rules), failing naming `op`.
std::vector<int64_t> broadcast_shape(const Tensor& a, const Tensor& b, const char* op) {
  const int64_t n = std::max(a.dim(), b.dim());
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ai = i - (n - a.dim()), bi = i - (n - b.dim());
    const int64_t as = ai >= 0 ? a.sizes[ai] : 1, bs = bi >= 0 ? b.sizes[bi] : 1;
    if (as != bs && as != 1 && bs != 1) {
      fail_arg(op, "mask",
               "of size " + std::to_string(bs) + " does not broadcast with 'self' of size " + std::to_string(as) +
                   " at dim " + std::to_string(i));
    }
    out[i] = as == 1 ? bs : as;
  }
  return out;
}

// t's strides for a view broadcast to `shape` (0 where broadcast).
std::vector<int64_t> strides_for(const Tensor& t, const std::vector<int64_t>& shape) {
  const int64_t n = static_cast<int64_t>(shape.size());
  std::vector<int64_t> st(n, 0);
  for (int64_t i = 0; i < t.dim(); ++i) {
    const int64_t o = n - t.dim() + i;
    st[o] = t.sizes[i] == 1 && shape[o] != 1 ? 0 : t.strides[i];
  }
  return st;
}

}  // namespace

Tensor nonzero(const Tensor& self, const char* op) {
  expect_cpu_defined(self, op, "self");
  Tensor out;
  dispatch_real(self.dtype, true, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    const void* base = self.data();
    std::vector<int64_t> coords;
    for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& idx) {
      if (load_key<S>(base, offset_of(idx, self.strides)) != K(0)) coords.insert(coords.end(), idx.begin(), idx.end());
    });
    const int64_t nd = self.dim();
    int64_t n = 0;
    if (nd > 0) {
      n = static_cast<int64_t>(coords.size()) / nd;
    } else if (self.numel() == 1) {
      n = load_key<S>(base, 0) != K(0) ? 1 : 0;  // 0-d: one row of no coordinates
    }
    // Laid out as libtorch's CPU kernel leaves it: strides {1, n}, each
    // coordinate's column contiguous.
    const int64_t col = n;
    out = empty_tensor({n, nd}, {1, col}, kInt64);
    int64_t* o = static_cast<int64_t*>(out.data());
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t k = 0; k < nd; ++k) o[k * col + r] = coords[static_cast<size_t>(r * nd + k)];
    }
  });
  return out;
}

Tensor nonzero_static(const Tensor& self, int64_t size, int64_t fill_value, const char* op) {
  expect_cpu_defined(self, op, "self");
  if (size < 0) fail_arg(op, "size", "must be non-negative, got " + std::to_string(size));
  const Tensor nz = nonzero(self, op);  // strides {1, n}
  const int64_t nd = self.dim(), n = nz.sizes[0];
  Tensor out = empty_contiguous({size, nd}, kInt64);
  const int64_t* src = static_cast<const int64_t*>(nz.data());
  int64_t* o = static_cast<int64_t*>(out.data());
  for (int64_t r = 0; r < size; ++r) {
    for (int64_t k = 0; k < nd; ++k) o[r * nd + k] = r < n ? src[k * n + r] : fill_value;
  }
  return out;
}

Tensor masked_select(const Tensor& self, const Tensor& mask, const char* op) {
  expect_cpu_defined(self, op, "self");
  expect_cpu_defined(mask, op, "mask");
  if (mask.dtype != kBool) fail_arg(op, "mask", std::string("must be bool, got ") + dtype_name(mask.dtype));
  const std::vector<int64_t> shape = broadcast_shape(self, mask, op);
  const std::vector<int64_t> sst = strides_for(self, shape), mst = strides_for(mask, shape);
  Tensor out;
  dispatch_real(self.dtype, true, op, "self", [&](auto tag) {
    using S = decltype(tag);
    const void* sb = self.data();
    const void* mb = mask.data();
    std::vector<S> picked;
    for_each_index(shape, -1, [&](const std::vector<int64_t>& idx) {
      if (load<uint8_t>(mb, offset_of(idx, mst)) != 0) picked.push_back(load<S>(sb, offset_of(idx, sst)));
    });
    out = empty_contiguous({static_cast<int64_t>(picked.size())}, self.dtype);
    if (!picked.empty()) std::memcpy(out.data(), picked.data(), picked.size() * sizeof(S));
  });
  return out;
}

Tensor repeat_interleave(const Tensor& repeats, const int64_t* output_size, const char* op) {
  expect_cpu_defined(repeats, op, "repeats");
  if (repeats.dim() != 1) fail_arg(op, "repeats", "must be 1-d, got " + std::to_string(repeats.dim()) + "-d");
  if (repeats.dtype != kInt64 && repeats.dtype != kInt32) {
    fail_arg(op, "repeats", std::string("must be int64 or int32, got ") + dtype_name(repeats.dtype));
  }
  const int64_t n = repeats.sizes[0];
  std::vector<int64_t> r(static_cast<size_t>(n));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t off = i * repeats.strides[0];
    r[i] = repeats.dtype == kInt64 ? load<int64_t>(repeats.data(), off) : load<int32_t>(repeats.data(), off);
    if (r[i] < 0) fail_arg(op, "repeats", "has a negative value (" + std::to_string(r[i]) + ")");
    total += r[i];
  }
  if (output_size != nullptr && *output_size != total) {
    fail_arg(op, "output_size",
             "is " + std::to_string(*output_size) + " but the repeats add up to " + std::to_string(total));
  }
  Tensor out = empty_contiguous({total}, repeats.dtype);
  void* ob = out.data();
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < r[i]; ++j, ++k) {
      if (repeats.dtype == kInt64) {
        store<int64_t>(ob, k, i);
      } else {
        store<int32_t>(ob, k, static_cast<int32_t>(i));
      }
    }
  }
  return out;
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    Tensor out = kernels::nonzero(as_tensor(self, "self"), "aoti_torch_cpu_nonzero");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_nonzero_static(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                                        AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    Tensor out = kernels::nonzero_static(as_tensor(self, "self"), size, fill_value, "aoti_torch_cpu_nonzero_static");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
                                                       AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    Tensor out =
        kernels::masked_select(as_tensor(self, "self"), as_tensor(mask, "mask"), "aoti_torch_cpu_masked_select");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_repeat_interleave_Tensor(AtenTensorHandle repeats, int64_t* output_size,
                                                                  AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    Tensor out = kernels::repeat_interleave(as_tensor(repeats, "repeats"), output_size,
                                            "aoti_torch_cpu_repeat_interleave_Tensor");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}
