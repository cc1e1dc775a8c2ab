// GEMMs whose weight operand is packed once: oneDNN's sgemm copies ("packs")
// both operands into its kernel's blocked order on every call, which for the
// small-M GEMMs of a transformer (M = the tokens of one request) costs as
// much as the arithmetic. A weight that cannot change -- a read-only storage:
// a frozen (mkldnn-layout) constant, or memory declared constant such as a
// model's parameters (tensor.hpp) -- is packed once per OpenMP team size and
// kept with its storage, and each call runs only the compute step on it.
//
// The pack and compute entry points are oneDNN's own (sgemm_pack_get_size,
// sgemm_pack, sgemm_compute, dnnl::impl::cpu), exported by libdnnl but
// declared in no installed header: they are looked up by name in the libdnnl
// the shim links, and where they are absent (another oneDNN build) or
// AOTRUN_SHIM_PACKED_GEMM=0 is set, packed_linear declines and the caller
// runs the ordinary GEMM.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tensor.hpp"

namespace aotrun::shim::kernels {

// out [M, N] (row stride ldc, unit column stride) = beta * out + x [M, K] @ wᵀ
// for float32 x with unit column stride, and w [N, K] a view of a read-only
// storage with one unit stride (a column-major w is transposed once, and
// that copy packed). Returns false, having done nothing, when the
// weight is not eligible (writable storage, no unit stride), the pack API is
// unavailable or disabled, or oneDNN says packing does not pay for this
// shape; throws ShimError when oneDNN fails.
bool packed_linear(const Tensor& out, const Tensor& x, const Tensor& w, float beta, const char* op);

// The same for a weight the caller derives from a read-only storage `owner`
// (a convolution's weight as [O, kh * kw * C]): `fill` writes W [N, K]
// row-major once, the first time `key` is asked for on owner (with the
// calling thread's OpenMP team size), and only its packed copy is kept
// with owner. K is x's column count. `key` must not begin with -1, -2 or
// -4 (transpose_weight's and packed_linear's).
bool packed_gemm_derived(const Tensor& out, const Tensor& x, Storage& owner, const std::vector<int64_t>& key, int64_t n,
                         const std::function<void(float*)>& fill, float beta, const char* op);

// Whether the pack API was found and is enabled (for tests and messages).
bool packed_gemm_available();

}  // namespace aotrun::shim::kernels
