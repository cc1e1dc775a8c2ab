// Constants in the mkldnn layout (c10::Layout::Mkldnn): what a frozen
// export (torch._inductor.config.freezing) stores for the weights it packed
// for oneDNN. The model's load_constants hands each one to
// aoti_torch_create_tensor_from_blob_v2 with layout 3, the bytes in oneDNN's
// blocked layout, and 772 bytes of opaque metadata: oneDNN 3.x's
// memory_desc_t as its get_blob() copies it (768 bytes) followed by ideep's
// int32 groups. docs/FROZEN_EXPORTS.md has the field offsets and how they
// were established.
//
// The shim reads the fields it needs itself (the oneDNN 2.6 it links has no
// blob API, and its memory_desc_t differs from 3.x's), refuses anything but
// a float32 blocked layout that agrees with the constant's sizes, rebuilds
// the layout as a 2.6 memory::desc and returns a plain contiguous float32
// tensor, read-only and with layout kMkldnn, whose bytes a reorder from the
// blob makes when first needed (Storage::deferred: kernels that derive their
// own copy read them through a temporary, and a primitive that wants the
// blob's own layout reads the blob: blob_in_layout). The blob is not copied
// and must live as long as the tensor, as libtorch's mkldnn tensor
// requires; its address is what aoti_torch_get_data_ptr reports. The
// tensor's dims are in oneDNN's logical order with a grouped weight's
// groups folded into dim 0 (the blob's own layout keeps them apart): for
// convolution weights PyTorch's [O, I/g, k...]; for transposed-convolution
// weights [O, I/g, k...] too (PyTorch's own order is [I, O/g, k...]); for
// linear weights [O, I].
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace aotrun::shim {

// The fields of the metadata the shim reads (oneDNN 3.x memory_desc_t at
// the offsets of an x86-64 build, then ideep's groups).
struct MkldnnBlobDesc {
  // The two forms torch writes (docs/FROZEN_EXPORTS.md): 772 bytes from
  // torch 2.7 on (a 768-byte memory_desc_t and the groups), 668 bytes from
  // torch 2.6 (its oneDNN's 664-byte memory_desc_t: the same fields at the
  // same offsets, a 24-byte extra descriptor where later ones have 128).
  static constexpr int64_t kMetadataSize = 772;
  static constexpr int64_t kMetadataSizeTorch26 = 668;
  static constexpr int kMaxDims = 12;
  int32_t ndims = 0;
  int64_t dims[kMaxDims] = {};
  int32_t data_type = 0;  // 3: f32
  int64_t padded_dims[kMaxDims] = {};
  int64_t padded_offsets[kMaxDims] = {};
  int64_t offset0 = 0;
  int32_t format_kind = 0;  // 2: blocked
  int64_t strides[kMaxDims] = {};
  int32_t inner_nblks = 0;
  int64_t inner_blks[kMaxDims] = {};
  int64_t inner_idxs[kMaxDims] = {};
  uint64_t extra_flags = 0;
  int32_t groups = 1;
};

// Decodes the metadata; throws ShimError (naming the constant's shape) when
// its size is neither form's.
MkldnnBlobDesc decode_mkldnn_blob(const uint8_t* metadata, int64_t size, const std::vector<int64_t>& sizes);

// The constant as a plain tensor: validates the metadata against `sizes` and
// `dtype` (float32 only), builds the reorder from the blocked bytes at
// `data`, and returns a new contiguous float32 CPU tensor of `sizes` (layout
// kMkldnn, a deferred read-only storage over `data`). Throws ShimError naming
// the constant's shape and what is not supported.
//
// With `may_move` (the bytes are a model's constant, copied into its blob
// by load_constants, which nothing reads again but through this tensor) and
// `data` not 64-byte aligned, the blocked bytes first slide down to their
// 64-byte boundary in place where huge_pages.hpp's slide_constant can, or
// else are copied into 64-byte-aligned memory of the shim's
// (packed_memory.hpp), which the storage owns and reports as its source:
// AOTInductor's blob comes from malloc, 16-byte aligned, so every weight a
// kernel reads in place would otherwise straddle cache lines in every load,
// and run at the mercy of where the heap put it (frozen GPT-2 1.07 ms
// aligned, 1.08-1.25 ms as the heap fell: docs/PERFORMANCE.md section 35).
// After a copy the caller releases the original's pages (huge_pages.hpp).
// Turned off by AOTRUN_SHIM_ALIGN_CONSTANTS=0 in the environment (read
// once).
Tensor tensor_from_mkldnn_blob(const void* data, const std::vector<int64_t>& sizes, int64_t storage_offset,
                               int32_t dtype, int32_t device_type, const uint8_t* metadata, int64_t metadata_size,
                               bool may_move = false);

// The bytes an mkldnn-layout tensor's blob spans (its blocked layout's
// size, padding included); 0 for any other tensor.
size_t mkldnn_blob_bytes(const Tensor& t);

// How a blob holds its constant (the storage's source_layout()): the
// oneDNN 2.6 layout rebuilt from its metadata (a grouped weight's with the
// groups as a dim of their own), and the constant's sizes as the model
// made it.
struct BlockedLayout {
  dnnl::memory::desc desc;
  std::vector<int64_t> sizes;
};

// The model's blob of `t` when `t` is a whole mkldnn-layout constant held in
// exactly the layout `want`; null otherwise. A primitive that wants the
// layout the export packed for (a frozen convolution's weight, usually:
// torch's oneDNN chose it for the same geometry) then reads the blob in
// place, and neither a plain copy nor a reordered one is made. The blob
// lives as long as the model's constants, as the tensor does.
const void* blob_in_layout(const Tensor& t, const dnnl::memory::desc& want);

// Where a whole mkldnn-layout [N, K] float32 constant's blob already holds
// its weight as rows of output features: blocks of `*width` (a multiple of
// `multiple_of`) features over every input feature, element (j, p) at
// blob + (j / *width) * *block_stride + p * *width + j % *width. oneDNN's
// "AB16b64a", the layout a frozen export's linear weight has on AVX-512
// and AVX2 CPUs (torch 2.15's oneDNN chooses it for both), is one. Returns the blob, or null when `t` is not such a
// constant. A GEMM whose weight panels have that form then reads the blob in place instead of a packed copy of its own
// (panel_gemm.hpp's panels_over).
const float* blob_as_panels(const Tensor& t, int64_t multiple_of, int64_t* width, int64_t* block_stride);

}  // namespace aotrun::shim
