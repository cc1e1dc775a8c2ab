// aoti_torch_cpu_cat (since aotrun-shim 1.4): torch.cat, which AOTInductor
// leaves to the C shim for complex tensors (it generates no code for them: a
// spectrum rebuilt as torch.cat([X[..., :k], torch.zeros_like(X[..., k:])],
// -1)). As libtorch 2.15's cat (TensorShape.cpp's meta function and CPU
// kernel):
//   - 0-d tensors refused; dim wrapped against the first tensor that is not
//     1-d and empty (the "legacy" empties, [0]), which are skipped: they
//     take no part in the shape checks or the result's shape, but their
//     dtype takes part in the promotion;
//   - the result's dtype is the promotion of every tensor's (c10's
//     promoteTypes), values converted as copy_ converts them;
//   - the result is laid out channels-last (4-d) or channels-last-3d (5-d)
//     when every tensor suggests that format, else contiguous; all skipped:
//     a [0] tensor;
//   - other shapes must match except in dim (libtorch's messages).
// Complex64/complex128, every real dtype and bool; any strides.
#include <cstdint>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"
#include "tensor.hpp"

namespace aotrun::shim::kernels {
namespace {

bool is_cpx(int32_t d) { return d == kComplex64 || d == kComplex128; }

// Tensor.suggest_memory_format().
int32_t suggested_format(const Tensor& t) {
  if (is_channels_last(t)) return kChannelsLast;
  if (is_channels_last_3d(t)) return kChannelsLast3d;
  return kContiguousFormat;
}

bool skipped(const Tensor& t) { return t.dim() == 1 && t.sizes[0] == 0; }

}  // namespace

Tensor cat(const std::vector<const Tensor*>& tensors, int64_t dim, const char* op) {
  if (tensors.empty()) fail_arg(op, "tensors", "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    expect_cpu_defined(t, op, "tensors");
    if (!is_cpx(t.dtype) && !is_convertible(t.dtype)) {
      fail_arg(op, "tensors", std::string("has unsupported dtype ") + dtype_name(t.dtype));
    }
    if (t.dim() == 0) {
      fail_arg(op, "tensors", "zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
    }
  }
  // legacy_cat_wrap_dim.
  for (const Tensor* t : tensors) {
    if (skipped(*t)) continue;
    const int64_t n = t->dim();
    if (dim < -n || dim >= n) {
      fail_arg(op, "dim",
               "Dimension out of range (expected to be in range of [" + std::to_string(-n) + ", " +
                   std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
    }
    if (dim < 0) dim += n;
    break;
  }
  int32_t dtype = tensors[0]->dtype;
  for (const Tensor* t : tensors) dtype = promote_types(dtype, t->dtype, op);
  // cat_compute_output_memory_format: every tensor's suggestion, skipped ones too.
  int32_t format = -1;
  for (const Tensor* t : tensors) {
    const int32_t f = suggested_format(*t);
    if (f == kContiguousFormat || (format >= 0 && format != f)) {
      format = kContiguousFormat;
      break;
    }
    format = f;
  }
  const Tensor* valid = nullptr;
  for (const Tensor* t : tensors) {
    if (!skipped(*t)) {
      valid = t;
      break;
    }
  }
  std::vector<int64_t> sizes = {0};
  if (valid != nullptr) {
    if (dim < 0 || dim >= valid->dim()) {
      fail_arg(op, "dim", "cat(): dimension " + std::to_string(dim) + "out of range");
    }
    int64_t total = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = *tensors[i];
      if (skipped(t)) continue;
      if (t.dim() != valid->dim()) {
        fail_arg(op, "tensors",
                 "Tensors must have same number of dimensions: got " + std::to_string(valid->dim()) + " and " +
                     std::to_string(t.dim()));
      }
      for (int64_t d = 0; d < t.dim(); ++d) {
        if (d != dim && t.sizes[d] != valid->sizes[d]) {
          fail_arg(op, "tensors",
                   "Sizes of tensors must match except in dimension " + std::to_string(dim) + ". Expected size " +
                       std::to_string(valid->sizes[d]) + " but got size " + std::to_string(t.sizes[d]) +
                       " for tensor number " + std::to_string(i) + " in the list.");
        }
      }
      total += t.sizes[dim];
    }
    sizes = valid->sizes;
    sizes[dim] = total;
  }
  const bool cl = (format == kChannelsLast && sizes.size() == 4) || (format == kChannelsLast3d && sizes.size() == 5);
  Tensor out = cl ? empty_tensor(sizes, channels_last_strides(sizes), dtype) : empty_contiguous(sizes, dtype);
  if (valid == nullptr) return out;
  int64_t at = 0;
  for (const Tensor* t : tensors) {
    if (skipped(*t)) continue;
    const int64_t k = t->sizes[dim];
    if (k > 0 && t->numel() > 0) {
      Tensor dst = out;  // out's part along dim, a view
      dst.storage_offset += at * out.strides[dim];
      dst.sizes[dim] = k;
      copy_host_elements(dst, *t);
    }
    at += k;
  }
  return out;
}

}  // namespace aotrun::shim::kernels

using namespace aotrun::shim;

extern "C" AOTITorchError aoti_torch_cpu_cat(const AtenTensorHandle* tensors, int64_t tensors_len_, int64_t dim,
                                             AtenTensorHandle* ret0) {
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu_cat";
    AtenTensorHandle* out = out_arg(ret0, "ret0");
    if (tensors_len_ < 0) kernels::fail_arg(op, "tensors_len_", "is negative");
    if (tensors_len_ > 0 && tensors == nullptr) kernels::fail_arg(op, "tensors", "is null");
    std::vector<const Tensor*> ts;
    for (int64_t i = 0; i < tensors_len_; ++i) ts.push_back(&as_tensor(tensors[i], "tensors"));
    *out = new_handle(kernels::cat(ts, dim, op));
  });
}
