// DLTensor <-> AtenTensorHandle through libtorch's C shim only. Inputs are
// wrapped without a copy (the handle borrows the caller's memory); outputs,
// which AOTInductor allocates, are copied into the caller's tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "package/pt2/provider/torch_runtime.hpp"

namespace aotrun::pt2 {

// A new handle viewing `t` (CPU, byte_offset already folded into data) with
// `strides` (t.ndim of them: the layout the model was compiled for), or
// row-major when NULL. Returns false with *why on an unsupported dtype or a
// shim failure.
bool wrap_input(const TorchShim& shim, const DLTensor& t, AtenTensorHandle* out, std::string* why,
                const int64_t* strides = nullptr);

// Writes row-major `src` of `sizes` into `dst` laid out with `strides` (a
// dense permutation of the dims, as layout_from_checks accepts: the same
// bytes in another order).
void to_strided(char* dst, const char* src, const int64_t* sizes, const int64_t* strides, int rank, size_t item);

// What an output handle holds.
struct OutputMeta {
  DLDataType dtype{};
  std::vector<int64_t> shape;
};
bool describe_output(const TorchShim& shim, AtenTensorHandle h, OutputMeta* out, std::string* why);

// Copies output `h` into `dst` (its dtype and shape must match; any strides
// on the torch side). Allocates nothing unless it fails, except for a CUDA
// `dst`: a view handle over it, for the shim's device copy.
// With `leading_block`, an output larger than `dst` in some dims gives its
// leading block of dst's shape (the dims that follow a batch the bridge
// padded: rows, or a CLIP logits matrix's columns).
bool copy_output(const TorchShim& shim, AtenTensorHandle h, const DLTensor& dst, std::string* why,
                 bool leading_block = false);

// Deletes every non-NULL handle once (one given twice, as a model returning
// a tensor as two outputs gives it, is deleted once) and clears them.
void delete_handles(const TorchShim& shim, AtenTensorHandle* handles, size_t n);

// A new CUDA tensor (device 0, from the pool the calling thread has in use)
// of `h`'s shape, strides and dtype, holding a copy of its elements; the
// copy from host memory has finished when this returns. false with *why set
// when the shim cannot allocate or copy (nothing is left allocated then).
bool copy_to_cuda(const TorchShim& shim, AtenTensorHandle h, AtenTensorHandle* out, std::string* why);

}  // namespace aotrun::pt2
