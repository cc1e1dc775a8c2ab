// GEMMs whose weight operand is packed once: oneDNN's sgemm copies ("packs")
// both operands into its kernel's blocked order on every call, which for the
// small-M GEMMs of a transformer (M = the tokens of one request) costs as
// much as the arithmetic. A weight that cannot change -- a read-only storage:
// a frozen (mkldnn-layout) constant, or memory declared constant such as a
// model's parameters (tensor.hpp) -- is packed once and kept with its
// storage, and each call runs only the compute step on it.
//
// Two packings, chosen per process:
// - panel_gemm.hpp's, the shim's own register-blocked loops, where the CPU
//   has AVX-512 or AVX2 with FMA (faster than oneDNN 2.6's packed sgemm at
//   every shape measured, docs/PERFORMANCE.md sections 21 and 26; the
//   bias fused).
//   packed_linear only: beta 0 or 1.
// - oneDNN's own pack and compute entry points (sgemm_pack_get_size,
//   sgemm_pack, sgemm_compute, dnnl::impl::cpu), exported by libdnnl but
//   declared in no installed header: looked up by name in the libdnnl the
//   shim links, packed per OpenMP team size. packed_gemm_derived (a
//   convolution as a GEMM) always, packed_linear where panels do not run.
// derived_panels gives a derived weight (a convolution's) as panels, for a
// caller that runs panel_gemm on it itself.
// AOTRUN_SHIM_PACKED_GEMM=0 turns both off (the callers then run the
// ordinary GEMM); =onednn leaves only oneDNN's (for comparison).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "tensor.hpp"

namespace aotrun::shim::kernels {

// out [M, N] (row stride ldc, unit column stride) = beta * out + x [M, K] @ wᵀ
// (+ bias, broadcast over rows, when bias is not null: then beta must be
// 0) for float32 x with unit column stride, w [N, K] a view of a read-only
// storage with one unit stride (a column-major w is transposed once, and
// that copy packed) and bias float32 [N]. Returns false, having done
// nothing, when the weight is not eligible (writable storage, no unit
// stride), the bias or beta is not one this takes, packing is unavailable
// or disabled, or oneDNN says packing does not pay for this shape; throws
// ShimError when oneDNN fails, std::bad_alloc when memory runs out.
// addend, when not null, is float32 [M, N] with unit column stride, not
// overlapping out: it is added to every finished output (out = (x @ wᵀ +
// bias) + addend, the sum rounded on its own as a separate pass's would
// be), in the GEMM's store where panels run and in a pass after it
// otherwise; false when it is not of that form.
bool packed_linear(const Tensor& out, const Tensor& x, const Tensor& w, float beta, const char* op,
                   const Tensor* bias = nullptr, const Tensor* addend = nullptr);

// The same for a weight the caller derives from a read-only storage `owner`
// (a convolution's weight as [O, kh * kw * C]): `fill` writes W [N, K]
// row-major once, the first time `key` is asked for on owner (with the
// calling thread's OpenMP team size), and only its packed copy is kept
// with owner. K is x's column count. `key` must not begin with -1, -2, -4
// or -8 (transpose_weight's and packed_linear's).
bool packed_gemm_derived(const Tensor& out, const Tensor& x, Storage& owner, const std::vector<int64_t>& key, int64_t n,
                         const std::function<void(float*)>& fill, float beta, const char* op);

// Whether oneDNN's pack API was found and is enabled (for tests and
// messages): packed_gemm_derived runs only then.
bool packed_gemm_available();

struct PanelWeight;

// Whether derived_panels gives panels for a product of inner size k:
// panel_gemm.hpp's panels run on this CPU and are enabled, and k <=
// kDerivedPanelMaxK (a 128-channel 3x3 convolution's). The caller runs
// such a GEMM a row group at a time, each group's 64 rows of x (288 KiB at
// this k) and a panel (72 KiB) staying in a 512 KiB L2 while every panel
// runs over them; at 256 channels (k = 2,304) they no longer do, and
// oneDNN's pack, which blocks k itself, keeps those (docs/PERFORMANCE.md
// section 32).
constexpr int64_t kDerivedPanelMaxK = 1152;
bool derived_on_panels(int64_t k);

// A weight derived as for packed_gemm_derived (`fill` writes W [N, K]
// row-major, `key` as there), as panels: made the first time `key` is
// asked for on owner (the layout does not depend on the team size) and
// kept with it. Null where derived_on_panels(k) is false or owner is not
// read-only. Throws std::bad_alloc when memory runs out.
std::shared_ptr<const PanelWeight> derived_panels(Storage& owner, const std::vector<int64_t>& key, int64_t n, int64_t k,
                                                  const std::function<void(float*)>& fill);

}  // namespace aotrun::shim::kernels
