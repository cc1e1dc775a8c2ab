// Reading frozen constants stored in the mkldnn layout (mkldnn_blob.hpp).
#include "mkldnn_blob.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "compute/onednn.hpp"
#include "compute/packed_memory.hpp"
#include "huge_pages.hpp"

namespace aotrun::shim {
namespace {

// Offsets in the metadata (docs/FROZEN_EXPORTS.md, section 2).
constexpr size_t kNdims = 4, kDims = 8, kDataType = 104, kPaddedDims = 112, kPaddedOffsets = 208, kOffset0 = 304,
                 kFormatKind = 312, kStrides = 320, kInnerNblks = 416, kInnerBlks = 424, kInnerIdxs = 520,
                 kExtraFlags = 640, kGroups = 768;
// The 668-byte form (torch 2.6): the same fields at the same offsets, extra
// flags included; its extra descriptor ends at 664 (flags, the two
// compensation masks and scale_adjust, then 4 bytes of padding that torch
// leaves uninitialised), and the groups follow it.
constexpr size_t kGroupsTorch26 = 664;
constexpr int32_t kDnnlF32 = 3, kDnnlBlocked = 2;

template <typename T>
T read_at(const uint8_t* p, size_t offset) {
  T v;
  std::memcpy(&v, p + offset, sizeof v);
  return v;
}

// AOTRUN_SHIM_ALIGN_CONSTANTS=0 keeps every blob where the model put it.
bool moving_allowed() {
  static const bool allowed = [] {
    const char* env = std::getenv("AOTRUN_SHIM_ALIGN_CONSTANTS");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return allowed;
}

// A 64-byte-aligned copy of the `bytes` at `data`.
std::shared_ptr<const void> aligned_copy(const void* data, size_t bytes) {
  std::shared_ptr<float> copy =
      kernels::packed_floats(static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float)));
  std::memcpy(copy.get(), data, bytes);
  return copy;
}

std::string shape_of(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string list_of(const int64_t* v, int64_t n) { return shape_of(std::vector<int64_t>(v, v + n)); }

[[noreturn]] void refuse(const std::vector<int64_t>& sizes, const std::string& why) {
  throw ShimError("mkldnn constant of shape " + shape_of(sizes) + ": " + why);
}

// Whether the blocked layout `b` is one the shim reads: in range, agreeing
// with the constant's sizes, and addressing only inside its own size.
void validate(const MkldnnBlobDesc& b, const std::vector<int64_t>& sizes) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  if (b.data_type != kDnnlF32) {
    refuse(sizes, "oneDNN data type " + std::to_string(b.data_type) + " is not supported (only f32, 3)");
  }
  if (b.format_kind != kDnnlBlocked) {
    refuse(sizes, "oneDNN format kind " + std::to_string(b.format_kind) + " is not supported (only blocked, 2)");
  }
  if (b.extra_flags != 0) {
    refuse(sizes, "oneDNN extra flags " + std::to_string(b.extra_flags) +
                      " (compensation, scale adjustment) are not supported (int8 weights)");
  }
  if (b.ndims < 1 || b.ndims > MkldnnBlobDesc::kMaxDims) {
    refuse(sizes, "ndims " + std::to_string(b.ndims) + " is out of range");
  }
  if (b.groups < 1) refuse(sizes, "groups " + std::to_string(b.groups) + " is not positive");
  // dims: the sizes themselves, or for a grouped weight [g, O/g, rest...]
  // where the sizes are [O, rest...].
  bool agree = false;
  if (b.ndims == ndim) {
    agree = std::vector<int64_t>(b.dims, b.dims + b.ndims) == sizes;
  } else if (b.groups > 1 && b.ndims == ndim + 1 && ndim >= 1) {
    agree = b.dims[0] == b.groups && b.dims[0] * b.dims[1] == sizes[0];
    for (int64_t d = 1; d < ndim; ++d) agree = agree && b.dims[d + 1] == sizes[d];
  }
  if (!agree) {
    refuse(sizes, "the layout's dims " + list_of(b.dims, b.ndims) + " (groups " + std::to_string(b.groups) +
                      ") do not match the constant's sizes");
  }
  if (b.offset0 != 0) refuse(sizes, "a non-zero offset0 " + std::to_string(b.offset0) + " is not supported");
  if (b.inner_nblks < 0 || b.inner_nblks > MkldnnBlobDesc::kMaxDims) {
    refuse(sizes, "inner_nblks " + std::to_string(b.inner_nblks) + " is out of range");
  }
  int64_t block[MkldnnBlobDesc::kMaxDims];
  for (int d = 0; d < b.ndims; ++d) block[d] = 1;
  for (int k = 0; k < b.inner_nblks; ++k) {
    if (b.inner_idxs[k] < 0 || b.inner_idxs[k] >= b.ndims || b.inner_blks[k] < 1 || b.inner_blks[k] > 1024) {
      refuse(sizes, "inner block " + std::to_string(k) + " (" + std::to_string(b.inner_blks[k]) + " on dim " +
                        std::to_string(b.inner_idxs[k]) + ") is out of range");
    }
    block[b.inner_idxs[k]] *= b.inner_blks[k];
  }
  for (int d = 0; d < b.ndims; ++d) {
    if (b.dims[d] < 1) refuse(sizes, "an empty dim is not supported");
    if (b.padded_offsets[d] != 0) refuse(sizes, "padded offsets are not supported");
    if (b.padded_dims[d] < b.dims[d] || b.padded_dims[d] % block[d] != 0 || b.padded_dims[d] > 2 * b.dims[d] + 1024) {
      refuse(sizes, "padded dim " + std::to_string(d) + " (" + std::to_string(b.padded_dims[d]) +
                        ") does not fit its size " + std::to_string(b.dims[d]) + " and inner blocks " +
                        std::to_string(block[d]));
    }
    if (b.strides[d] < 0) refuse(sizes, "negative strides are not supported");
  }
}

dnnl::memory::desc blocked_desc(const MkldnnBlobDesc& b) {
  dnnl_memory_desc_t md;
  std::memset(&md, 0, sizeof md);
  md.ndims = b.ndims;
  for (int d = 0; d < b.ndims; ++d) {
    md.dims[d] = b.dims[d];
    md.padded_dims[d] = b.padded_dims[d];
    md.padded_offsets[d] = 0;
    md.format_desc.blocking.strides[d] = b.strides[d];
  }
  md.data_type = dnnl_f32;
  md.offset0 = 0;
  md.format_kind = dnnl_blocked;
  md.format_desc.blocking.inner_nblks = b.inner_nblks;
  for (int k = 0; k < b.inner_nblks; ++k) {
    md.format_desc.blocking.inner_blks[k] = b.inner_blks[k];
    md.format_desc.blocking.inner_idxs[k] = b.inner_idxs[k];
  }
  return dnnl::memory::desc(md);
}

}  // namespace

MkldnnBlobDesc decode_mkldnn_blob(const uint8_t* metadata, int64_t size, const std::vector<int64_t>& sizes) {
  const bool torch26 = size == MkldnnBlobDesc::kMetadataSizeTorch26;
  if (metadata == nullptr || (size != MkldnnBlobDesc::kMetadataSize && !torch26)) {
    refuse(sizes, "opaque metadata of " + std::to_string(metadata == nullptr ? 0 : size) +
                      " bytes is not supported (expected oneDNN 3.x's 768-byte memory descriptor and ideep's "
                      "4-byte groups: 772, or torch 2.6's 668)");
  }
  MkldnnBlobDesc b;
  b.ndims = read_at<int32_t>(metadata, kNdims);
  b.data_type = read_at<int32_t>(metadata, kDataType);
  b.offset0 = read_at<int64_t>(metadata, kOffset0);
  b.format_kind = read_at<int32_t>(metadata, kFormatKind);
  b.inner_nblks = read_at<int32_t>(metadata, kInnerNblks);
  b.extra_flags = read_at<uint64_t>(metadata, kExtraFlags);
  b.groups = read_at<int32_t>(metadata, torch26 ? kGroupsTorch26 : kGroups);
  for (int d = 0; d < MkldnnBlobDesc::kMaxDims; ++d) {
    b.dims[d] = read_at<int64_t>(metadata, kDims + 8 * d);
    b.padded_dims[d] = read_at<int64_t>(metadata, kPaddedDims + 8 * d);
    b.padded_offsets[d] = read_at<int64_t>(metadata, kPaddedOffsets + 8 * d);
    b.strides[d] = read_at<int64_t>(metadata, kStrides + 8 * d);
    b.inner_blks[d] = read_at<int64_t>(metadata, kInnerBlks + 8 * d);
    b.inner_idxs[d] = read_at<int64_t>(metadata, kInnerIdxs + 8 * d);
  }
  return b;
}

Tensor tensor_from_mkldnn_blob(const void* data, const std::vector<int64_t>& sizes, int64_t storage_offset,
                               int32_t dtype, int32_t device_type, const uint8_t* metadata, int64_t metadata_size,
                               bool may_move) {
  if (device_type != kCPU) refuse(sizes, "only CPU constants are supported in the mkldnn layout");
  if (dtype != kFloat32) {
    refuse(sizes, std::string("dtype ") + dtype_name(dtype) + " is not supported in the mkldnn layout (only float32)");
  }
  if (storage_offset != 0) {
    refuse(sizes, "a storage offset (" + std::to_string(storage_offset) + ") is not supported in the mkldnn layout");
  }
  if (data == nullptr) refuse(sizes, "the constant has no data");
  const MkldnnBlobDesc b = decode_mkldnn_blob(metadata, metadata_size, sizes);
  validate(b, sizes);
  const std::vector<int64_t> plain_dims(b.dims, b.dims + b.ndims);
  namespace onednn = kernels::onednn;
  // The reorder from the blob into plain order, built (and so validated)
  // here, executed when the plain bytes are first needed.
  struct Unblock {
    dnnl::memory::desc src, dst;
    dnnl::reorder::primitive_desc pd;
    dnnl::reorder prim;
  };
  auto u = std::make_shared<Unblock>();
  try {
    u->src = blocked_desc(b);
    u->dst = onednn::f32_desc(plain_dims, contiguous_strides(plain_dims));
    if (u->src.get_size() < u->dst.get_size()) {
      refuse(sizes, "the blocked layout spans " + std::to_string(u->src.get_size()) + " bytes, fewer than its " +
                        std::to_string(u->dst.get_size()) + " elements' bytes");
    }
    const dnnl::engine& eng = onednn::cpu_engine();
    u->pd = dnnl::reorder::primitive_desc(eng, u->src, eng, u->dst, onednn::user_scratchpad());
    u->prim = dnnl::reorder(u->pd);
  } catch (const dnnl::error& err) {
    refuse(sizes, std::string("oneDNN cannot read its layout: ") + err.what());
  }
  // A misaligned blob of a model's constant slides down to its 64-byte
  // boundary in place when it can (huge_pages.hpp, which is told of aligned
  // ones too: the next constant may slide after them), else moves into
  // aligned memory the storage keeps (through `fill`, which holds it),
  // before anything reads it.
  std::shared_ptr<const void> moved;
  if (may_move && moving_allowed()) {
    data = slide_constant(const_cast<void*>(data), u->src.get_size(), true);
    if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
      moved = aligned_copy(data, u->src.get_size());
      data = moved.get();
    }
  }
  // The plain copy is made when first needed, from the model's blob, which
  // lives as long as the model's constants do (libtorch's own mkldnn tensor
  // refers to it the same way). Kernels that derive their own copy (packed
  // GEMM weights, a convolution's reordered weights) read it through a
  // temporary instead, so the plain copy is never kept for them.
  auto fill = [sizes, u, data, moved](void* plain) {
    try {
      const dnnl::engine& eng = onednn::cpu_engine();
      dnnl::memory from(u->src, eng, const_cast<void*>(data)), to(u->dst, eng, plain);
      dnnl::stream& s = onednn::thread_stream();
      u->prim.execute(s, {{DNNL_ARG_FROM, from},
                          {DNNL_ARG_TO, to},
                          {DNNL_ARG_SCRATCHPAD, onednn::scratchpad_for(u->pd.scratchpad_desc())}});
      s.wait();
    } catch (const dnnl::error& err) {
      refuse(sizes, std::string("oneDNN failed to unpack it: ") + err.what());
    }
  };
  const size_t nbytes = u->dst.get_size();
  auto layout = std::make_shared<BlockedLayout>();
  layout->desc = u->src;
  layout->sizes = sizes;
  Tensor t;
  t.storage = Storage::deferred(nbytes, std::move(fill), data, std::move(layout));
  t.sizes = sizes;
  t.strides = contiguous_strides(sizes);
  t.dtype = kFloat32;
  t.layout = kMkldnn;
  return t;
}

size_t mkldnn_blob_bytes(const Tensor& t) {
  if (t.layout != kMkldnn || t.storage == nullptr || t.storage->source_layout() == nullptr) return 0;
  return t.storage->source_layout()->desc.get_size();
}

const void* blob_in_layout(const Tensor& t, const dnnl::memory::desc& want) {
  if (t.layout != kMkldnn || t.storage == nullptr || t.storage_offset != 0) return nullptr;
  const BlockedLayout* have = t.storage->source_layout();
  if (have == nullptr || have->desc != want) return nullptr;
  // The whole constant as made (a view of part of it would need the blob's
  // offsets, which nothing asks for).
  if (t.sizes != have->sizes || t.strides != contiguous_strides(t.sizes)) return nullptr;
  return t.storage->source();
}

const float* blob_as_panels(const Tensor& t, int64_t multiple_of, int64_t* width, int64_t* block_stride) {
  if (t.layout != kMkldnn || t.storage == nullptr || t.storage_offset != 0 || t.dim() != 2) return nullptr;
  const BlockedLayout* have = t.storage->source_layout();
  if (have == nullptr || t.sizes != have->sizes || t.strides != contiguous_strides(t.sizes)) return nullptr;
  const dnnl_memory_desc_t& md = have->desc.data;
  if (md.ndims != 2 || md.data_type != dnnl_f32 || md.format_kind != dnnl_blocked || md.offset0 != 0) return nullptr;
  const dnnl_blocking_desc_t& b = md.format_desc.blocking;
  // The innermost block is of output features (dim 0): W of them per row;
  // an input-feature block (dim 1) outside it keeps the rows in k order.
  if (b.inner_nblks < 1 || b.inner_nblks > 2 || b.inner_idxs[b.inner_nblks - 1] != 0) return nullptr;
  const int64_t w = b.inner_blks[b.inner_nblks - 1];
  const int64_t kb = b.inner_nblks == 2 ? b.inner_blks[0] : 1;
  if (b.inner_nblks == 2 && b.inner_idxs[0] != 1) return nullptr;
  if (w % multiple_of != 0 || md.padded_offsets[0] != 0 || md.padded_offsets[1] != 0) return nullptr;
  // Consecutive k rows W floats apart (a k block's rows, then the next
  // block's), and a block of features after all of its rows.
  if (b.strides[1] != kb * w || b.strides[0] < md.padded_dims[1] * w) return nullptr;
  const void* blob = t.storage->source();
  if (reinterpret_cast<uintptr_t>(blob) % alignof(float) != 0) return nullptr;
  *width = w;
  *block_stride = b.strides[0];
  return static_cast<const float*>(blob);
}

}  // namespace aotrun::shim
