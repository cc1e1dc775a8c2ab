#include "package/pt2/provider/tensor_convert.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/checked_math.hpp"
#include "base/dltensor.hpp"

namespace aotrun::pt2 {
namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Copies a strided tensor of `rank` dims element by element into packed `dst`.
void strided_copy(char* dst, const char* src, const int64_t* sizes, const int64_t* strides, int rank, size_t item) {
  if (rank == 0) {
    std::memcpy(dst, src, item);
    return;
  }
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += idx[static_cast<size_t>(d)] * strides[d];
    std::memcpy(dst, src + off * static_cast<int64_t>(item), item);
    dst += item;
    int d = rank - 1;
    while (d >= 0 && ++idx[static_cast<size_t>(d)] == sizes[d]) idx[static_cast<size_t>(d--)] = 0;
    if (d < 0) return;
  }
}

}  // namespace

void to_strided(char* dst, const char* src, const int64_t* sizes, const int64_t* strides, int rank, size_t item) {
  if (rank == 0) {
    std::memcpy(dst, src, item);
    return;
  }
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return;
  }
  // The source in order; the destination offset follows the index like an
  // odometer (no multiplication per element). Runs of the innermost dim are
  // strided by strides[rank - 1] elements.
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  const int last = rank - 1;
  const int64_t step = strides[last] * static_cast<int64_t>(item);
  int64_t off = 0;  // bytes into dst of idx
  for (;;) {
    char* out = dst + off;
    for (int64_t k = 0; k < sizes[last]; ++k, src += item, out += step) std::memcpy(out, src, item);
    int d = last - 1;
    for (; d >= 0; --d) {
      off += strides[d] * static_cast<int64_t>(item);
      if (++idx[static_cast<size_t>(d)] < sizes[d]) break;
      off -= sizes[d] * strides[d] * static_cast<int64_t>(item);
      idx[static_cast<size_t>(d)] = 0;
    }
    if (d < 0) return;
  }
}

bool wrap_input(const TorchShim& shim, const DLTensor& t, AtenTensorHandle* out, std::string* why,
                const int64_t* layout) {
  const int32_t dtype = shim.torch_dtype(t.dtype);
  if (dtype < 0) {
    *why = "dtype (code " + std::to_string(t.dtype.code) + ", " + std::to_string(t.dtype.bits) +
           " bits) has no torch equivalent";
    return false;
  }
  // Row-major unless the model was compiled for another layout (then the
  // data is in that layout: the runner accepted it so or the bridge
  // converted it). The runner bounds the byte size, but a stride product
  // must not overflow (signed) whatever reaches here.
  if (t.ndim < 0 || t.ndim > 32) {
    *why = "rank " + std::to_string(t.ndim) + " is outside 0..32";
    return false;
  }
  int64_t strides[32];
  int64_t step = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    strides[d] = step;
    if (!checked_mul<int64_t>(step, t.shape[d] > 0 ? t.shape[d] : 1, &step)) {
      *why = "shape is too large to address";
      return false;
    }
  }
  if (layout != nullptr) std::copy(layout, layout + t.ndim, strides);
  const bool cuda = t.device.device_type == kDLCUDA;
  if (shim.create_tensor_from_blob(t.data, t.ndim, t.shape, strides, 0, dtype,
                                   cuda ? shim.device_type_cuda : shim.device_type_cpu, cuda ? t.device.device_id : 0,
                                   out) != 0) {
    *why = "aoti_torch_create_tensor_from_blob failed";
    return false;
  }
  return true;
}

bool describe_output(const TorchShim& shim, AtenTensorHandle h, OutputMeta* out, std::string* why) {
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  int32_t dtype = 0;
  if (shim.get_dim(h, &dim) != 0 || shim.get_sizes(h, &sizes) != 0 || shim.get_dtype(h, &dtype) != 0 || dim < 0 ||
      dim > 32) {
    *why = "libtorch could not describe an output tensor";
    return false;
  }
  if (!shim.dlpack_dtype(dtype, &out->dtype)) {
    *why = "an output has torch dtype " + std::to_string(dtype) + ", which aotrun cannot represent";
    return false;
  }
  out->shape.assign(sizes, sizes + dim);
  return true;
}

// Why copy_output refused an output (cold: builds the message).
[[gnu::cold, gnu::noinline]] bool output_mismatch(const int64_t* sizes, int64_t dim, int32_t torch_dtype,
                                                  const DLTensor& dst, std::string* why) {
  *why = "the model returned " + shape_text(std::vector<int64_t>(sizes, sizes + dim)) + " of torch dtype " +
         std::to_string(torch_dtype) + "; the output tensor given is " +
         shape_text(std::vector<int64_t>(dst.shape, dst.shape + dst.ndim)) + " of " + std::to_string(dst.dtype.bits) +
         "-bit DLPack code " + std::to_string(dst.dtype.code);
  return false;
}

bool copy_output(const TorchShim& shim, AtenTensorHandle h, const DLTensor& dst, std::string* why, bool leading_block) {
  // Runs on every call: reads the handle in place, allocates only to explain
  // a mismatch.
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  int32_t torch_dtype = 0;
  void* src = nullptr;
  if (shim.get_dim(h, &dim) != 0 || shim.get_sizes(h, &sizes) != 0 || shim.get_strides(h, &strides) != 0 ||
      shim.get_dtype(h, &torch_dtype) != 0 || shim.get_data_ptr(h, &src) != 0 || dim < 0 || dim > 32) {
    *why = "libtorch could not describe the output";
    return false;
  }
  // The destination's dtype in torch's numbering (one table lookup, no
  // conversion of the output's).
  if (dim != dst.ndim || torch_dtype != shim.torch_dtype(dst.dtype)) {
    return output_mismatch(sizes, dim, torch_dtype, dst, why);
  }
  int64_t block[33];
  if (leading_block) {
    // The leading block: index 0 first in every dim, so the strides are
    // unchanged and only the sizes shrink.
    std::copy(sizes, sizes + dim, block);
    for (int64_t d = 0; d < dim; ++d) {
      if (dst.shape[d] >= 0 && dst.shape[d] < block[d]) block[d] = dst.shape[d];
    }
    sizes = block;
  }
  // One pass from the innermost dim: the shapes must match, the element
  // count must not wrap (sizes equal the destination's shape, whose byte
  // size the runner bounded; checked anyway, a wrapped count would copy too
  // little or too much), and the strides decide between one memcpy and an
  // element-wise copy.
  uint64_t count = 1;
  bool compact = true, wrapped = false;
  for (int64_t d = dim - 1; d >= 0; --d) {
    const int64_t n = sizes[d];
    if (n != dst.shape[d] || n < 0) return output_mismatch(sizes, dim, torch_dtype, dst, why);
    if (n != 1 && strides[d] != static_cast<int64_t>(count)) compact = false;
    wrapped |= __builtin_mul_overflow(count, static_cast<uint64_t>(n), &count);
  }
  if (count == 0) return true;  // any dim of 0 (a wrap before it does not matter)
  const size_t item = element_bytes(dst.dtype);
  uint64_t bytes = 0;
  if (wrapped || count > static_cast<uint64_t>(INT64_MAX) || !checked_mul<uint64_t>(count, item, &bytes)) {
    *why = "the output is too large to address";
    return false;
  }
  if (dst.device.device_type == kDLCUDA) {
    // Device memory: the shim copies it (on its current stream, which the
    // caller set), following the output's strides, into a view of `dst`.
    if (sizes == block) {
      *why = "a padded batch is not supported on CUDA";
      return false;
    }
    if (shim.copy == nullptr) {
      *why = "the C shim in use cannot copy device memory";
      return false;
    }
    AtenTensorHandle view = nullptr;
    if (!wrap_input(shim, dst, &view, why)) return false;
    const bool ok = shim.copy(view, h, 0) == 0;
    (void)shim.delete_tensor_object(view);
    if (!ok) *why = "copying the output on the device failed" + shim_error(shim);
    return ok;
  }
  if (compact) {
    std::memcpy(dst.data, src, bytes);
  } else {
    strided_copy(static_cast<char*>(dst.data), static_cast<const char*>(src), sizes, strides, static_cast<int>(dim),
                 item);
  }
  return true;
}

void delete_handles(const TorchShim& shim, AtenTensorHandle* handles, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    AtenTensorHandle h = handles[i];
    if (h == nullptr) continue;
    // A model returns one handle as two outputs when its graph returns a
    // tensor twice (AOTInductor writes output_handles[4] =
    // output_handles[0]: a BERT's last hidden state is also the last of its
    // hidden_states); each handle is deleted once.
    for (size_t j = i; j < n; ++j) {
      if (handles[j] == h) handles[j] = nullptr;
    }
    (void)shim.delete_tensor_object(h);
  }
}

bool copy_to_cuda(const TorchShim& shim, AtenTensorHandle h, AtenTensorHandle* out, std::string* why) {
  int64_t dim = 0, *sizes = nullptr, *strides = nullptr;
  int32_t dtype = 0;
  AtenTensorHandle dev = nullptr;
  if (shim.empty_strided == nullptr || shim.copy == nullptr || shim.get_dim(h, &dim) != 0 ||
      shim.get_sizes(h, &sizes) != 0 || shim.get_strides(h, &strides) != 0 || shim.get_dtype(h, &dtype) != 0 ||
      shim.empty_strided(dim, sizes, strides, dtype, shim.device_type_cuda, 0, &dev) != 0) {
    *why = "allocating device memory failed" + shim_error(shim);
    return false;
  }
  if (shim.copy(dev, h, 0) != 0) {
    *why = "copying to the device failed" + shim_error(shim);
    (void)shim.delete_tensor_object(dev);
    return false;
  }
  *out = dev;
  return true;
}

}  // namespace aotrun::pt2
