// aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu: attention per
// (batch, query head) as two GEMMs around a row softmax, in float32 (float64
// for float64 tensors). Float32 tensors with a unit-stride last dim are read
// and written in place (sdpa_f32.cpp); others are copied per head here.
// Floating masks are added to the scores and broadcast to [B, Hq, L, S];
// causal masking is top-left aligned (key j > query i is masked); key/value
// heads are shared by Hq / Hk query heads (grouped-query attention).
// Dropout, boolean masks and a value head size other than the query's are
// refused, as by PyTorch's CPU kernel.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

// A [rows, cols] view of t[b, h] (t is 4-d).
Tensor slice2d(const Tensor& t, int64_t b, int64_t h) {
  Tensor v = t;
  v.sizes = {t.sizes[2], t.sizes[3]};
  v.strides = {t.strides[2], t.strides[3]};
  v.storage_offset = t.storage_offset + b * t.strides[0] + h * t.strides[1];
  return v;
}

// mask expanded to 4 dims [B, Hq, L, S] by strides (0 on broadcast dims).
Tensor broadcast_mask(const Tensor& m, const std::vector<int64_t>& shape, const char* op) {
  if (m.dim() > 4) fail_arg(op, "attn_mask", "has more than 4 dims");
  Tensor v = m;
  v.sizes = shape;
  v.strides.assign(4, 0);
  for (int64_t i = 0; i < m.dim(); ++i) {
    const int64_t d = 4 - m.dim() + i;
    if (m.sizes[i] == shape[d]) {
      v.strides[d] = m.strides[i];
    } else if (m.sizes[i] != 1) {
      fail_arg(op, "attn_mask", "does not broadcast to [B, Hq, L, S] at dim " + std::to_string(i));
    }
  }
  return v;
}

// Half-precision inputs: the unnormalised softmax weights are rounded to the
// input type before the second GEMM (PyTorch's CPU kernel multiplies them in
// that type, accumulating in float32), the row sums are not.
template <typename T>
void run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, double scale,
         const Tensor& out, const Tensor& lse, int32_t ct) {
  const int32_t dt = q.dtype;
  const bool round_weights = dt == kBFloat16 || dt == kFloat16;
  const int64_t B = q.sizes[0], Hq = q.sizes[1], L = q.sizes[2], E = q.sizes[3];
  const int64_t Hk = k.sizes[1], S = k.sizes[2], Ev = v.sizes[3];
  const int64_t group = Hq / Hk;
  Tensor qs = empty_contiguous({L, E}, ct), ks = empty_contiguous({S, E}, ct), vs = empty_contiguous({S, Ev}, ct);
  Tensor scores = empty_contiguous({L, S}, ct), o = empty_contiguous({L, Ev}, ct);
  Tensor mrow = empty_contiguous({S}, ct);
  Tensor lrow = empty_contiguous({L}, ct);
  T* sp = static_cast<T*>(scores.data());
  T* lp = static_cast<T*>(lrow.data());
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < Hq; ++h) {
      copy_elements(qs, slice2d(q, b, h));
      if (h % group == 0) {
        copy_elements(ks, slice2d(k, b, h / group));
        copy_elements(vs, slice2d(v, b, h / group));
      }
      // scores = scale * q k^T
      blas_gemm(false, true, L, S, E, static_cast<T>(scale), static_cast<const T*>(qs.data()), E,
                static_cast<const T*>(ks.data()), E, T(0), sp, S);
      for (int64_t i = 0; i < L; ++i) {
        T* row = sp + i * S;
        if (mask != nullptr) {
          Tensor mr = *mask;  // row i of the broadcast mask for (b, h)
          mr.sizes = {S};
          mr.strides = {mask->strides[3]};
          mr.storage_offset = mask->storage_offset + b * mask->strides[0] + h * mask->strides[1] + i * mask->strides[2];
          copy_elements(mrow, mr);
          const T* mp = static_cast<const T*>(mrow.data());
          for (int64_t j = 0; j < S; ++j) row[j] += mp[j];
        }
        if (causal) {
          for (int64_t j = i + 1; j < S; ++j) row[j] = neg_inf;
        }
        T mx = neg_inf;
        for (int64_t j = 0; j < S; ++j) mx = row[j] > mx ? row[j] : mx;
        T sum = 0;
        if (mx == neg_inf) {  // nothing to attend to: zero output and logsumexp 0, as PyTorch's CPU kernel gives
          for (int64_t j = 0; j < S; ++j) row[j] = 0;
          lp[i] = 0;
          continue;
        }
        for (int64_t j = 0; j < S; ++j) {
          row[j] = std::exp(row[j] - mx);
          sum += row[j];
        }
        if (round_weights) {
          for (int64_t j = 0; j < S; ++j) {
            row[j] = static_cast<T>(dt == kBFloat16 ? bf16_to_float(float_to_bf16(static_cast<float>(row[j])))
                                                    : half_to_float(float_to_half(static_cast<float>(row[j]))));
          }
        }
        for (int64_t j = 0; j < S; ++j) row[j] /= sum;
        lp[i] = mx + std::log(sum);
      }
      blas_gemm(false, false, L, Ev, S, T(1), sp, S, static_cast<const T*>(vs.data()), Ev, T(0),
                static_cast<T*>(o.data()),
                Ev);  // o = p v
      copy_elements(slice2d(out, b, h), o);
      Tensor lv = lse;  // lse[b, h, :]
      lv.sizes = {L};
      lv.strides = {lse.strides[2]};
      lv.storage_offset = lse.storage_offset + b * lse.strides[0] + h * lse.strides[1];
      copy_elements(lv, lrow);
    }
  }
}

}  // namespace

void sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool causal, double scale, Tensor* out,
          Tensor* logsumexp, const char* op) {
  expect_dim(q, 4, op, "query");
  expect_dim(k, 4, op, "key");
  expect_dim(v, 4, op, "value");
  const int64_t B = q.sizes[0], Hq = q.sizes[1], L = q.sizes[2], E = q.sizes[3];
  const int64_t Hk = k.sizes[1], S = k.sizes[2], Ev = v.sizes[3];
  if (k.sizes[0] != B || v.sizes[0] != B) fail_arg(op, "key", "batch size differs from query's");
  if (k.sizes[3] != E) fail_arg(op, "key", "head size differs from query's");
  if (v.sizes[1] != Hk || v.sizes[2] != S) fail_arg(op, "value", "heads or length differ from key's");
  if (Hk < 1 || Hq % Hk != 0) fail_arg(op, "key", "heads must divide the query heads");
  if (Ev != E) fail_arg(op, "value", "head size differs from query's, which PyTorch's CPU kernel refuses too");
  if (k.dtype != q.dtype || v.dtype != q.dtype) fail_arg(op, "key", "dtypes of query, key and value differ");
  const int32_t dt = q.dtype;
  if (dt != kFloat32 && dt != kBFloat16 && dt != kFloat16 && dt != kFloat64) {
    fail_arg(op, "query", std::string("has dtype ") + dtype_name(dt) + ", which is not supported");
  }
  Tensor m;
  if (mask != nullptr) {
    expect_cpu_defined(*mask, op, "attn_mask");
    if (!is_floating(mask->dtype)) {  // PyTorch converts bool masks before this op and refuses them here
      fail_arg(op, "attn_mask", std::string("has dtype ") + dtype_name(mask->dtype) + ", expected a floating mask");
    }
    if (dt == kFloat32 && mask->dtype != kFloat32) {  // read as float32 by the float32 path
      Tensor f = empty_contiguous(mask->sizes, kFloat32);
      copy_elements(f, *mask);
      m = broadcast_mask(f, {B, Hq, L, S}, op);
    } else {
      m = broadcast_mask(*mask, {B, Hq, L, S}, op);
    }
  }
  const int32_t ct = dt == kFloat64 ? kFloat64 : kFloat32;
  // The output's dims are laid out in the order of the query's (a query
  // stored [B, L, H, E] gives an output stored so), the logsumexp as
  // [B, L, Hq] viewed transposed: as PyTorch's kernel returns them.
  std::vector<int64_t> order = {0, 1, 2, 3};
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return q.strides[a] > q.strides[b]; });
  *out = empty_tensor({B, Hq, L, Ev}, strides_in_order({B, Hq, L, Ev}, order), dt);
  *logsumexp = empty_tensor({B, Hq, L}, strides_in_order({B, Hq, L}, {0, 2, 1}), ct);
  if (B == 0 || Hq == 0 || L == 0) return;
  if (S == 0) fail_arg(op, "key", "has no positions");
  if (dt == kFloat32 && sdpa_f32(q, k, v, mask ? &m : nullptr, causal, scale, *out, *logsumexp)) return;
  if (ct == kFloat64) {
    run<double>(q, k, v, mask ? &m : nullptr, causal, scale, *out, *logsumexp, ct);
  } else {
    run<float>(q, k, v, mask ? &m : nullptr, causal, scale, *out, *logsumexp, ct);
  }
}

}  // namespace aotrun::shim::kernels

extern "C" AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  using namespace aotrun::shim;
  return guard(__func__, [&] {
    const char* op = "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu";
    if (dropout_p != 0.0) kernels::fail_arg(op, "dropout_p", "is non-zero: dropout is not supported");
    const Tensor& q = as_tensor(query, "query");
    const Tensor* mask = nullptr;
    if (attn_mask != nullptr && *attn_mask != nullptr) {
      mask = &as_tensor(*attn_mask, "attn_mask");
      if (!mask->defined()) mask = nullptr;
    }
    if (q.dim() != 4) kernels::fail_arg(op, "query", "must be 4-d [B, H, L, E]");
    const double s = scale != nullptr ? *scale : 1.0 / std::sqrt(static_cast<double>(q.sizes[3]));
    Tensor out, lse;
    kernels::sdpa(q, as_tensor(key, "key"), as_tensor(value, "value"), mask, is_causal != 0, s, &out, &lse, op);
    out_arg(ret0, "ret0");
    out_arg(ret1, "ret1");
    *ret0 = new_handle(std::move(out));
    *ret1 = new_handle(std::move(lse));
  });
}
