// The shim's internal kernel interface: C++ functions over Tensor objects
// that throw ShimError (naming the op and the argument) for anything they do
// not handle. The exported aoti_torch_cpu_* entry points (one file per op)
// unpack handles, call these and convert errors at the C boundary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace aotrun::shim::kernels {

// c = beta * c + alpha * (a @ b) for 2-d strided views of one floating dtype
// (float32, float64; bfloat16 and float16 computed in float32 and rounded
// once). c must not overlap a or b. beta == 0 ignores c's old contents.
void gemm(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta, const char* op);

// Row-major float32 GEMM on oneDNN's sgemm (BLAS conventions: ta/tb
// transpose a/b, ld* the row strides): c = alpha * a @ b + beta * c.
void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc);

// The same in float64, on OpenBLAS's cblas_dgemm, loaded when first used
// (dgemm_openblas.cpp; AOTRUN_SHIM_OPENBLAS names another library). Throws
// ShimError naming the library when it cannot be loaded.
void dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// sgemm or dgemm by element type, for kernels templated on it.
inline void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                      const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// out = beta * self + alpha * (mat1 @ mat2), self broadcast to out's shape.
// `out` of other sizes is resized first (resize_output), as libtorch does.
void addmm(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2, double beta, double alpha);
void mm(Tensor& out, const Tensor& self, const Tensor& mat2);
void bmm(Tensor& out, const Tensor& self, const Tensor& mat2);

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation;  // one per spatial dim (expanded)
  int64_t groups = 1;
};
// Forward convolution (not transposed) of an N, C, spatial... input; returns
// a new tensor, channels-last when the input or the weight is, or when
// `channels_last` asks for it (2-d and 3-d: what libtorch's mkldnn ops return
// for an mkldnn-layout weight).
struct ConvEpilogue;
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p, const char* op,
                   bool channels_last = false);
// The same, then `epi` (below) on the result: fused into oneDNN's primitive
// as post-ops where it has them, else applied after it. Returns the result:
// *epi.accumulate when given.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p, const char* op,
                   bool channels_last, const ConvEpilogue& epi);

// Transposed convolution (convolution_transpose.cpp): weight
// [C_in, C_out / groups, k...], one output_padding per spatial dim (each
// smaller than the stride or the dilation there); `channels_last` as for
// convolution.
Tensor convolution_transpose(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                             const std::vector<int64_t>& output_padding, const char* op, bool channels_last = false);

// The float32 convolution on oneDNN, into `out` (allocated by the caller in
// the output's layout). False when oneDNN has no implementation for this
// geometry and layout (the caller falls back to im2col).
// With `post`, the primitive also adds its result into what `out` holds
// (when post->accumulate is set: `out` is that tensor) and then applies
// post->unary; false, having done nothing, when oneDNN has no post-op for
// that unary or no implementation with them.
bool convolution_onednn(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                        const Tensor& out, const ConvEpilogue* post = nullptr);

// Scaled dot-product attention (no dropout). query [B, Hq, L, E], key
// [B, Hk, S, E], value [B, Hk, S, E], Hq a multiple of Hk; a floating mask
// broadcast to [B, Hq, L, S] is added to the scores. Returns output
// [B, Hq, L, E] (dims laid out in the query's order) and logsumexp
// [B, Hq, L] (laid out as [B, L, Hq]).
void sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, double scale, Tensor* out,
          Tensor* logsumexp, const char* op);

// The float32 attention over the tensors' own memory, for query, key, value
// and output whose last dim is unit-stride and a float32 mask (already
// broadcast to [B, Hq, L, S] by strides). False for other layouts.
bool sdpa_f32(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, double scale,
              const Tensor& out, const Tensor& logsumexp);
// The largest of row[0..n), NaNs skipped; -inf when there is none.
float row_max(const float* row, int64_t n);
// row[j] = exp(row[j] - max) for j < n; returns their sum.
float exp_sum(float* row, int64_t n, float max);

// Cumulative sum along dim into a new contiguous tensor of `dtype`.
Tensor cumsum(const Tensor& self, int64_t dim, int32_t dtype, const char* op);
// Cumulative product, the same way (cumprod.cpp).
Tensor cumprod(const Tensor& self, int64_t dim, int32_t dtype, const char* op);
// Running max (min) along dim and its int64 index, both contiguous
// (cumulative_extrema.cpp): ties take the last index, NaN sticks.
void cum_extremum(const Tensor& self, int64_t dim, bool max, Tensor* values, Tensor* indices, const char* op);
// log(cumsum(exp(self))) along dim, contiguous, floating dtypes (logcumsumexp.cpp).
Tensor logcumsumexp(const Tensor& self, int64_t dim, const char* op);

// Sorts along dim (sort.cpp): values laid out like self (densely when self
// is not dense) and int64 indices; NaN above every number.
void sort(const Tensor& self, bool stable, int64_t dim, bool descending, Tensor* values, Tensor* indices,
          const char* op);
// The k largest (or smallest) along dim, contiguous results.
void topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted, Tensor* values, Tensor* indices,
          const char* op);

// Insertion points of self's elements in `seq` (search.cpp): `seq` 1-d or
// one row per leading index of self; side (may be null) "left"/"right";
// sorter (may be null) an int64 permutation of each row. `seq_arg` names
// the sequence in errors ("sorted_sequence", "boundaries").
Tensor searchsorted(const Tensor& seq, const Tensor& self, bool out_int32, bool right, const char* side,
                    const Tensor* sorter, const char* op, const char* seq_arg);
// One scalar against a 1-d `seq` (a 0-d result), compared in libtorch's
// promoted dtype: seq's when floating, else float32.
Tensor searchsorted_scalar(const Tensor& seq, double value, bool out_int32, bool right, const char* side,
                           const Tensor* sorter, const char* op);

// Data-dependent sizes (select.cpp).
Tensor nonzero(const Tensor& self, const char* op);
// [size, ndim]: nonzero's first `size` rows, then rows of fill_value.
Tensor nonzero_static(const Tensor& self, int64_t size, int64_t fill_value, const char* op);
Tensor masked_select(const Tensor& self, const Tensor& mask, const char* op);
Tensor repeat_interleave(const Tensor& repeats, const int64_t* output_size, const char* op);

// self[indices] as libtorch's aten::index.Tensor (index_tensor.cpp, since
// aotrun-shim 1.7): one entry per dim from the first (a k-d mask: k dims),
// null taking the dim whole; the result laid out as libtorch lays it out.
Tensor index_tensor(const Tensor& self, const std::vector<const Tensor*>& indices, const char* op);
// A contiguous copy of self broadcast with the bool mask whose masked
// positions take source's elements in row-major order (masked_scatter.cpp,
// since aotrun-shim 1.7).
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source, const char* op);

// torch.cat of tensors along dim, as libtorch's (cat.cpp, since aotrun-shim 1.4).
Tensor cat(const std::vector<const Tensor*>& tensors, int64_t dim, const char* op);

// scatter / scatter_reduce into `out` (resized to self's shape, then
// self's values unless it is self), scatter.cpp. src null: `value`.
enum class ScatterReduce { kNone, kSum, kProd, kMean, kAmax, kAmin };
void scatter(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, double value,
             ScatterReduce mode, bool include_self, const char* op);
// "sum", "prod", "mean", "amax", "amin"; fails naming `op` otherwise.
ScatterReduce scatter_reduce_mode(const char* reduce, const char* op);

// int8 weight-only linear (int8pack_mm.cpp): self [M, K] float32, bfloat16
// or float16, mat2 [N, K] int8, scales [N] of self's dtype; returns
// [M, N] = self @ (mat2 * scales[:, None])ᵀ in self's dtype.
Tensor weight_int8pack_mm(const Tensor& self, const Tensor& mat2, const Tensor& scales, const char* op);

// int4 weight-only linear (int4pack_mm.cpp), libtorch's
// _weight_int4pack_mm_for_cpu: x [M, K] float32, bfloat16 or float16, w
// [N, K / 2] uint8 packed as libtorch packs it for `int4pack_capability()`,
// qScaleAndZeros [K / group, N, 2] of x's dtype; returns [M, N] in x's dtype.
// The capability is the one libtorch would pick here (ATEN_CPU_CAPABILITY,
// else the CPU): it decides the weight's nibble layout and the rounding.
enum class Int4PackCapability { kDefault, kAvx2, kAvx512 };
Int4PackCapability int4pack_capability();
// The group size held by a one-element int64 tensor (AOTInductor's constant).
int64_t int4pack_group_size(const Tensor& q_group_size, const char* op);
Tensor weight_int4pack_mm(const Tensor& x, const Tensor& w, int64_t group, const Tensor& q_scale_and_zeros,
                          const char* op);

// out = beta * self + alpha * (batch1 @ batch2) per batch (baddbmm.cpp);
// `out` resized as libtorch does.
void baddbmm(Tensor& out, const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta, double alpha);

// p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M]
// (cdist.cpp); compute_mode may be null (0).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p, const int64_t* compute_mode, const char* op);

// The k-th smallest along dim (kthvalue.cpp, k from 1): values and int64
// indices, contiguous, dim squeezed unless keepdim.
void kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim, Tensor* values, Tensor* indices,
              const char* op);

// The statistics fallbacks (since aotrun-shim 1.8), each refusal naming `op`
// and the argument. histc (histc.cpp): the [bins] histogram of self over
// [min, max] (min == max: the data's range) in self's floating dtype.
Tensor histc(const Tensor& self, int64_t bins, double min, double max, const char* op);
// The median of all of self's elements, 0-d (median.cpp).
Tensor median(const Tensor& self, const char* op);
// The most frequent value along dim and an index of it (mode.cpp):
// contiguous, dim squeezed unless keepdim.
void mode(const Tensor& self, int64_t dim, bool keepdim, Tensor* values, Tensor* indices, const char* op);

// Pooling (since aotrun-shim 1.7): `dims` pooled dims (2 or 3) of self
// [C, spatial...] or [N, C, spatial...]. IntList is a C shim list argument
// (`len` values at `data`). Results are laid out as libtorch's CPU kernels
// lay them out (channels-last where libtorch keeps it); max pooling's
// indices are int64 offsets into the input's pooled plane. Each refusal
// names `op` and the argument.
struct IntList {
  const int64_t* data;
  int64_t len;
};
// avg_pool2d / avg_pool3d (pooling.cpp): stride of length 0 is the kernel;
// divisor_override may be null.
Tensor avg_pool(const Tensor& self, int dims, IntList kernel_size, IntList stride, IntList padding, bool ceil_mode,
                bool count_include_pad, const int64_t* divisor_override, const char* op);
// max_pool2d_with_indices / max_pool3d_with_indices (pooling.cpp).
void max_pool_with_indices(const Tensor& self, int dims, IntList kernel_size, IntList stride, IntList padding,
                           IntList dilation, bool ceil_mode, Tensor* values, Tensor* indices, const char* op);
// _adaptive_avg_pool2d / 3d and adaptive_max_pool2d / 3d (adaptive_pooling.cpp).
Tensor adaptive_avg_pool(const Tensor& self, int dims, IntList output_size, const char* op);
void adaptive_max_pool(const Tensor& self, int dims, IntList output_size, Tensor* values, Tensor* indices,
                       const char* op);

// aten::_trilinear (trilinear.cpp, since aotrun-shim 1.8): the sum over
// sumdim of the three inputs unsqueezed at their expand dims, computed per
// slice along unroll_dim as libtorch's pairwise products; contiguous result
// in i1's dtype.
Tensor trilinear(const Tensor& i1, const Tensor& i2, const Tensor& i3, IntList expand1, IntList expand2,
                 IntList expand3, IntList sumdim, int64_t unroll_dim, const char* op);
// p-norm distances between the rows of a contiguous 2-d self (pdist.cpp,
// since aotrun-shim 1.8): [N(N-1)/2], pairs (i < j) in row-major order.
Tensor pdist_forward(const Tensor& self, double p, const char* op);
// F.grid_sample of a 5-d input (grid_sampler_3d.cpp, since aotrun-shim 1.8):
// interpolation 0 (trilinear) or 1 (nearest), padding 0 (zeros), 1
// (border) or 2 (reflection); contiguous [N, C, D', H', W'].
Tensor grid_sampler_3d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners, const char* op);

// embedding_bag's four results into *out[0..3] (embedding_bag.cpp): output,
// offset2bag, bag_size, max_indices. mode 0 sum, 1 mean, 2 max;
// per_sample_weights may be null; padding_idx < 0: none.
void embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode,
                   const Tensor* per_sample_weights, bool include_last_offset, int64_t padding_idx, Tensor* out[4],
                   const char* op);

// One layer and direction of an LSTM (lstm.cpp): output, hy, cy and an
// empty workspace into *out[0..3]. b_ih / b_hh null: no biases.
void lstm_layer(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor* b_ih, const Tensor* b_hh,
                const Tensor& hx, const Tensor& cx, bool reverse, int64_t mode, int64_t batch_sizes_len,
                int64_t hidden_size, bool batch_first, Tensor* out[4], const char* op);

// The fused ops of frozen exports (mkldnn_ops.cpp, pointwise_fusion.cpp).
// A unary post-op ("attr"): none, relu, sigmoid, tanh, hardswish,
// hardsigmoid, swish/silu, gelu (algorithm none or tanh), leaky_relu
// (a: slope), hardtanh (a: min, b: max).
struct Unary {
  enum Kind {
    kNone,
    kRelu,
    kSigmoid,
    kTanh,
    kHardswish,
    kHardsigmoid,
    kSwish,
    kGeluErf,
    kGeluTanh,
    kLeakyRelu,
    kHardtanh
  };
  Kind kind = kNone;
  float a = 0.0f, b = 0.0f;
};
// Parses attr (naming `arg` of `op` when unknown); scalars is a Scalar?[]
// list, read only by leaky_relu and hardtanh; algorithm may be null.
Unary parse_unary(const char* op, const char* arg, const char* attr, const double** scalars, int64_t scalars_len,
                  const char* algorithm);
float apply_unary(const Unary& u, float x);
// t = u(t) elementwise, float32, any strides.
void apply_unary(const Tensor& t, const Unary& u);
enum class BinaryOp { kAdd, kSub, kMul, kDiv };
BinaryOp parse_binary(const char* op, const char* arg, const char* attr);
// dst = u(y <bop> other) elementwise, float32, each in its own strides (dst
// may be y or other); other must have dst's shape.
void apply_binary(const Tensor& dst, const Tensor& y, const Tensor& other, BinaryOp bop, const Unary& u,
                  const char* op);

// A frozen 2-d convolution (read-only weight, groups 1, input channels-last
// with many channels, output `out` dense channels-last) as im2col + a GEMM
// on the weight packed once, then `post` (post.accumulate, when set, is
// `out`). False, having done nothing, for any other convolution
// (convolution_gemm.cpp says which and why).
bool convolution_packed_gemm(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p,
                             const Tensor& out, const ConvEpilogue& post, const char* op);

// What follows a fused convolution (the frozen ops, mkldnn_ops.cpp):
// accumulate = unary(conv + accumulate) in place when `accumulate` is given
// (a float32 tensor of the output's sizes), else out = unary(conv).
struct ConvEpilogue {
  Unary unary;
  const Tensor* accumulate = nullptr;
};

// Shared argument checks: throw "<op>: argument '<name>' ..." errors.
[[noreturn]] void fail_arg(const char* op, const char* arg, const std::string& why);
void expect_dim(const Tensor& t, int64_t dim, const char* op, const char* arg);
void expect_cpu_defined(const Tensor& t, const char* op, const char* arg);

// c10's is_channels_last_strides_2d (a 4-d tensor) and _3d (5-d): the
// strides of NHWC / NDHWC, with PyTorch's tie rules for size-1 dims (a
// size-0 dim or a zero channel stride is never channels-last, N and C may
// not share a stride). False for other ranks.
bool is_channels_last(const Tensor& t);
bool is_channels_last_3d(const Tensor& t);

// self[..., start:end:step, ...] along `dim` as a view of self's storage,
// bounds clamped as at::slice clamps them (start/end NULL: None); refuses a
// 0-d self, a dim out of range and a step below 1 (libtorch's messages,
// naming `op`). complex_pointwise.cpp (aoti_torch_cpu_slice_Tensor).
Tensor slice_tensor(const Tensor& self, int64_t dim, const int64_t* start, const int64_t* end, int64_t step,
                    const char* op);

// c10::promoteTypes over complex64/128, the floating types, int8-int64,
// uint8 and bool; uint16/32/64 with a floating type give that type, with any
// other dtype (bool and complex included) they are refused naming `op`'s
// argument 'tensors', as c10 refuses them.
int32_t promote_types(int32_t a, int32_t b, const char* op);

}  // namespace aotrun::shim::kernels
