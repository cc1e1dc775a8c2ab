// aoti_torch_cpu_searchsorted_Tensor and aoti_torch_cpu_bucketize_Tensor:
// for each element of `self`, the insertion point in a sorted sequence (1-d,
// or one row per leading index of self), optionally read through a `sorter`
// permutation. The binary search halves the same way as PyTorch's and uses
// its comparisons (left: first position whose value is not below the input,
// `!(mid >= v)` moves right; right: `!(mid > v)` moves right), so NaN inputs
// land at the end and unsorted sequences give libtorch's answer.
// Result: int64 (or int32 with out_int32) of self's shape, contiguous.
// aoti_torch_cpu_searchsorted_Scalar (since aotrun-shim 1.4): one double
// against a 1-d sequence, a 0-d result. As libtorch wraps the scalar in a
// float64 0-d tensor and promotes both to their result type, the search runs
// in the sequence's dtype when it is floating (the scalar rounded to it,
// through float for the 16-bit ones) and in float32 for integer and bool
// sequences (each element rounded to float32 once).
#include <cstring>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "compute/typed.hpp"

namespace aotrun::shim::kernels {

Tensor searchsorted(const Tensor& seq, const Tensor& self, bool out_int32, bool right, const char* side,
                    const Tensor* sorter, const char* op, const char* seq_arg) {
  expect_cpu_defined(seq, op, seq_arg);
  expect_cpu_defined(self, op, "self");
  if (side != nullptr) {
    const std::string s = side;
    if (s != "left" && s != "right") fail_arg(op, "side", "is '" + s + "'; it must be 'left' or 'right'");
    if (right && s == "left") fail_arg(op, "side", "is 'left' while 'right' is true; they cannot be opposites");
    right = s == "right";
  }
  if (seq.dim() == 0) fail_arg(op, seq_arg, "must have at least one dimension");
  const bool seq_1d = seq.dim() == 1;
  if (!seq_1d) {
    bool leading_match = self.dim() == seq.dim();
    for (int64_t i = 0; leading_match && i + 1 < seq.dim(); ++i) leading_match = seq.sizes[i] == self.sizes[i];
    if (!leading_match) {
      fail_arg(op, seq_arg, "must be 1-d or have the same leading dims as 'self' (all but the last)");
    }
  }
  if (seq.dtype != self.dtype) {
    fail_arg(op, "self",
             std::string("has dtype ") + dtype_name(self.dtype) + " but '" + seq_arg + "' has " +
                 dtype_name(seq.dtype) + "; mixed dtypes are not supported");
  }
  const int64_t len = seq.sizes.back();
  if (sorter != nullptr) {
    expect_cpu_defined(*sorter, op, "sorter");
    if (sorter->dtype != kInt64) fail_arg(op, "sorter", std::string("must be int64, got ") + dtype_name(sorter->dtype));
    if (sorter->sizes != seq.sizes) fail_arg(op, "sorter", std::string("must have the shape of '") + seq_arg + "'");
    bool ok = true;
    const void* sb = sorter->data();
    for_each_index(sorter->sizes, -1, [&](const std::vector<int64_t>& idx) {
      const int64_t v = load<int64_t>(sb, offset_of(idx, sorter->strides));
      if (v < 0 || v >= len) ok = false;
    });
    if (!ok) fail_arg(op, "sorter", "has an index out of range [0, " + std::to_string(len) + ")");
  }
  Tensor out = empty_contiguous(self.sizes, out_int32 ? kInt32 : kInt64);
  if (self.numel() == 0) return out;
  dispatch_real(self.dtype, false, op, "self", [&](auto tag) {
    using S = decltype(tag);
    using K = typename Elem<S>::Key;
    const void* sbase = seq.data();
    const void* vbase = self.data();
    const void* obase = sorter != nullptr ? sorter->data() : nullptr;
    const int64_t seq_stride = seq.strides.back();
    const int64_t srt_stride = sorter != nullptr ? sorter->strides.back() : 0;
    void* rbase = out.data();
    int64_t flat = 0;
    for_each_index(self.sizes, -1, [&](const std::vector<int64_t>& idx) {
      const K v = load_key<S>(vbase, offset_of(idx, self.strides));
      // The row of the sequence (and sorter) for this element.
      int64_t row = 0, srow = 0;
      if (!seq_1d) {
        for (int64_t i = 0; i + 1 < seq.dim(); ++i) {
          row += idx[i] * seq.strides[i];
          if (sorter != nullptr) srow += idx[i] * sorter->strides[i];
        }
      }
      auto at = [&](int64_t j) {
        const int64_t pos = sorter != nullptr ? load<int64_t>(obase, srow + j * srt_stride) : j;
        return load_key<S>(sbase, row + pos * seq_stride);
      };
      int64_t lo = 0, hi = len;
      while (lo < hi) {
        const int64_t mid = lo + ((hi - lo) >> 1);
        const K m = at(mid);
        const bool go_right = right ? !(m > v) : !(m >= v);
        if (go_right) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (out_int32) {
        store<int32_t>(rbase, flat, static_cast<int32_t>(lo));
      } else {
        store<int64_t>(rbase, flat, lo);
      }
      ++flat;
    });
  });
  return out;
}

Tensor searchsorted_scalar(const Tensor& seq, double value, bool out_int32, bool right, const char* side,
                           const Tensor* sorter, const char* op) {
  expect_cpu_defined(seq, op, "sorted_sequence");
  if (seq.dim() != 1) {
    fail_arg(op, "sorted_sequence", "must be 1-d when 'self' is a scalar, got " + std::to_string(seq.dim()) + "-d");
  }
  if (!is_convertible(seq.dtype)) {
    fail_arg(op, "sorted_sequence", std::string("has unsupported dtype ") + dtype_name(seq.dtype));
  }
  const int32_t common = is_floating(seq.dtype) ? seq.dtype : kFloat32;
  Tensor v = empty_contiguous({}, common);
  switch (common) {
    case kFloat64: store<double>(v.data(), 0, value); break;
    case kBFloat16: store<uint16_t>(v.data(), 0, float_to_bf16(static_cast<float>(value))); break;
    case kFloat16: store<uint16_t>(v.data(), 0, float_to_half(static_cast<float>(value))); break;
    default: store<float>(v.data(), 0, static_cast<float>(value)); break;
  }
  if (common == seq.dtype) return searchsorted(seq, v, out_int32, right, side, sorter, op, "sorted_sequence");
  // Integer or bool elements to float32, each rounded once (64-bit ones
  // directly, not through double).
  const int64_t n = seq.sizes[0], st = seq.strides[0];
  Tensor conv = empty_contiguous({n}, kFloat32);
  const char* src = static_cast<const char*>(seq.data());
  const int64_t item = static_cast<int64_t>(seq.itemsize());
  for (int64_t i = 0; i < n; ++i) {
    const char* e = src + i * st * item;
    float f;
    if (seq.dtype == kInt64) {
      f = static_cast<float>(load<int64_t>(e, 0));
    } else if (seq.dtype == kUInt64) {
      f = static_cast<float>(load<uint64_t>(e, 0));
    } else {
      f = static_cast<float>(load_as_double(e, seq.dtype));
    }
    store<float>(conv.data(), i, f);
  }
  return searchsorted(conv, v, out_int32, right, side, sorter, op, "sorted_sequence");
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self,
                                                             int32_t out_int32, int32_t right, const char** side,
                                                             AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& seq = as_tensor(sorted_sequence, "sorted_sequence");
    const Tensor* srt = sorter != nullptr && *sorter != nullptr ? &as_tensor(*sorter, "sorter") : nullptr;
    Tensor out = kernels::searchsorted_scalar(seq, self, out_int32 != 0, right != 0, side != nullptr ? *side : nullptr,
                                              srt, "aoti_torch_cpu_searchsorted_Scalar");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_searchsorted_Tensor(AtenTensorHandle sorted_sequence, AtenTensorHandle self,
                                                             int32_t out_int32, int32_t right, const char** side,
                                                             AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const Tensor& seq = as_tensor(sorted_sequence, "sorted_sequence");
    const Tensor& s = as_tensor(self, "self");
    const Tensor* srt = sorter != nullptr && *sorter != nullptr ? &as_tensor(*sorter, "sorter") : nullptr;
    Tensor out = kernels::searchsorted(seq, s, out_int32 != 0, right != 0, side != nullptr ? *side : nullptr, srt,
                                       "aoti_torch_cpu_searchsorted_Tensor", "sorted_sequence");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}

extern "C" AOTITorchError aoti_torch_cpu_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries,
                                                          int32_t out_int32, int32_t right, AtenTensorHandle* ret0) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu_bucketize_Tensor";
    const Tensor& s = as_tensor(self, "self");
    const Tensor& b = as_tensor(boundaries, "boundaries");
    if (b.defined() && b.dim() != 1) {
      kernels::fail_arg(op, "boundaries", "must be 1-d, got " + std::to_string(b.dim()) + "-d");
    }
    Tensor out = kernels::searchsorted(b, s, out_int32 != 0, right != 0, nullptr, nullptr, op, "boundaries");
    *out_arg(ret0, "ret0") = new_handle(std::move(out));
  });
}
