// aoti_torch_cuda__scaled_dot_product_efficient_attention: PyTorch's
// memory-efficient attention fallback, inference only, on the layer's
// attention kernel (attention_kernel.cu).
#include <cmath>
#include <string>

#include "aotrun_shim/cuda.h"
#include "cuda_state.hpp"
#include "launchers.hpp"
#include "tensor_args.hpp"

namespace aotrun::shim::cuda {
namespace {

constexpr const char* kOp = "_scaled_dot_product_efficient_attention";

View4 view4(const DevTensor& t) {
  View4 v{t.data, {}, {}};
  for (int d = 0; d < 4; ++d) {
    v.size[d] = t.sizes[d];
    v.stride[d] = t.strides[d];
  }
  return v;
}

Elem elem_of(int32_t dtype, const char* arg) {
  switch (dtype) {
    case kFloat32: return Elem::kFloat32;
    case kBFloat16: return Elem::kBFloat16;
    case kFloat16: return Elem::kFloat16;
    default:
      throw CudaError(std::string(kOp) + ": argument '" + arg + "' has dtype " + dtype_label(dtype) +
                      " (float32, bfloat16 or float16 expected)");
  }
}

[[noreturn]] void bad(const char* arg, const std::string& why) {
  throw CudaError(std::string(kOp) + ": argument '" + arg + "' " + why);
}

}  // namespace
}  // namespace aotrun::shim::cuda

using namespace aotrun::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr || ret1 == nullptr || ret2 == nullptr || ret3 == nullptr)
      throw CudaError("a result pointer is null");
    const DevTensor q = read_cuda(query, "query", 4), k = read_cuda(key, "key", 4), v = read_cuda(value, "value", 4);
    if (dropout_p != 0.0) bad("dropout_p", "must be 0: aotrun runs models for inference");
    const int64_t B = q.sizes[0], H = q.sizes[1], L = q.sizes[2], E = q.sizes[3];
    const int64_t S = k.sizes[2], Ev = v.sizes[3];
    if (k.sizes[0] != B || v.sizes[0] != B) bad("key", "and value must have the query's batch size");
    if (k.sizes[1] != H || v.sizes[1] != H) bad("key", "and value must have the query's number of heads");
    if (k.sizes[3] != E) bad("key", "must have the query's head size");
    if (v.sizes[2] != S) bad("value", "must have as many rows as key");
    const Elem elem = elem_of(q.dtype, "query");
    if (k.dtype != q.dtype || v.dtype != q.dtype) bad("key", "and value must have the query's dtype");
    View4 bias{nullptr, {}, {}};
    DevTensor bt;
    if (attn_bias != nullptr && *attn_bias != nullptr) {
      bt = read_cuda(*attn_bias, "attn_bias");
      if (bt.dtype != q.dtype) bad("attn_bias", "must have the query's dtype");
      if (bt.dim() > 4) bad("attn_bias", "has more than 4 dims");
      // Broadcast to [B, H, L, S]: missing leading dims and size-1 dims get stride 0.
      const int64_t want[4] = {B, H, L, S};
      bias.data = bt.data;
      for (int d = 0; d < 4; ++d) {
        const int64_t src = d - (4 - bt.dim());
        bias.size[d] = want[d];
        if (src < 0 || bt.sizes[src] == 1) {
          bias.stride[d] = 0;
        } else if (bt.sizes[src] == want[d]) {
          bias.stride[d] = bt.strides[src];
        } else {
          bad("attn_bias", "does not broadcast to [batch, heads, queries, keys]");
        }
      }
    }
    const int dev = q.device_index < 0 ? resolve_device(-1) : q.device_index;
    DeviceScope scope(dev);
    // As PyTorch's: the output laid out [B, L, H, Ev], viewed [B, H, L, Ev]
    // (generated code reinterprets it with those strides).
    DevTensor out = new_cuda({B, H, L, Ev}, {L * H * Ev, Ev, H * Ev, 1}, q.dtype, q.device_index);
    OwnedHandle own_out(out.h);
    const int64_t rows = compute_log_sumexp ? (L + 31) / 32 * 32 : 0;
    DevTensor lse = new_cuda({B, H, rows}, contiguous({B, H, rows}), kFloat32, q.device_index);
    OwnedHandle own_lse(lse.h);
    const float sc = scale != nullptr ? static_cast<float>(*scale) : 1.0f / std::sqrt(static_cast<float>(E));
    check(launch_attention(elem, view4(q), view4(k), view4(v), bias, elem, out.data, out.strides.data(),
                           compute_log_sumexp ? static_cast<float*>(lse.data) : nullptr, lse.strides.data(), sc,
                           is_causal != 0, current_stream(dev)),
          "attention kernel launch");
    // Philox seed and offset: unused without dropout (0-d int64 on the CPU).
    AtenTensorHandle seed = nullptr, offset = nullptr;
    const int64_t none = 0;
    if (aoti_torch_empty_strided(0, &none, &none, kInt64, 0, -1, &seed) != AOTI_TORCH_SUCCESS ||
        aoti_torch_empty_strided(0, &none, &none, kInt64, 0, -1, &offset) != AOTI_TORCH_SUCCESS) {
      if (seed != nullptr) (void)aoti_torch_delete_tensor_object(seed);
      throw CudaError(std::string("allocating the seed and offset: ") + aotrun_shim_last_error());
    }
    *ret0 = own_out.release();
    *ret1 = own_lse.release();
    *ret2 = seed;
    *ret3 = offset;
  });
}
