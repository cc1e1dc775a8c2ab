// bench_shim_kernels: kernels of aotrun's own AOTInductor shim called
// through its C API, at the sizes models run them: the int8 weight-only
// linear (aoti_torch_cpu__weight_int8pack_mm: a quantized LLM's linears) at
// a decoder's step (1 row), a short prompt (16) and a long one (128), over
// 4096 x 4096 and 11008 x 4096 weights; the frozen float32 linear
// (aoti_torch_cpu__linear_pointwise), the frozen convolution
// (aoti_torch_cpu_mkldnn__convolution_pointwise) and attention
// (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu) at the real
// tier's GPT-2, Llama and ViT shapes, and every linear of one GPT-2 or
// Llama call in order over its own weight (so that weights come from L3,
// as in the model). OMP_NUM_THREADS sets the kernels' team.
// docs/PERFORMANCE.md sections 19, 20, 30 and 31 have figures.
#include <aotrun_shim/shim.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "support/bench_main.hpp"

namespace aotrun_bench {
namespace {

// Throws when a shim call failed, naming it (guarded() reports it).
void check(AOTITorchError rc, const char* call) {
  if (rc != AOTI_TORCH_SUCCESS) throw std::runtime_error(std::string(call) + ": " + aotrun_shim_last_error());
}

// A contiguous CPU tensor of `dtype` filled with deterministic values: int8
// over [-128, 127], float32 over [0, scale).
// Channels-last strides for a 4-d [N, C, H, W] tensor.
std::vector<int64_t> channels_last(const std::vector<int64_t>& s) { return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]}; }

AtenTensorHandle filled(const std::vector<int64_t>& sizes, int32_t dtype, float scale,
                        std::vector<int64_t> strides = {}) {
  if (strides.empty()) {
    strides.assign(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  }
  AtenTensorHandle h = nullptr;
  check(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype,
                                 aoti_torch_device_type_cpu(), 0, &h),
        "aoti_torch_empty_strided");
  void* p = nullptr;
  aoti_torch_get_data_ptr(h, &p);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  uint32_t x = 12345;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    if (dtype == aoti_torch_dtype_int8()) {
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<int>(x >> 24) - 128);
    } else {
      static_cast<float*>(p)[i] = static_cast<float>(x >> 8) / 16777216.0f * scale;
    }
  }
  return h;
}

struct Tensors {
  std::vector<AtenTensorHandle> held;
  ~Tensors() {
    for (AtenTensorHandle h : held) aoti_torch_delete_tensor_object(h);
  }
  AtenTensorHandle keep(AtenTensorHandle h) {
    held.push_back(h);
    return h;
  }
};

// Args: rows of x (M), weight rows (N), K.
void BM_WeightInt8PackMm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  guarded(state, [&] {
    Tensors t;
    const int32_t f32 = aoti_torch_dtype_float32();
    AtenTensorHandle x = t.keep(filled({m, k}, f32, 1.0f));
    AtenTensorHandle w = t.keep(filled({n, k}, aoti_torch_dtype_int8(), 0.0f));
    AtenTensorHandle s = t.keep(filled({n}, f32, 0.02f));
    for (auto _ : state) {
      AtenTensorHandle out = nullptr;
      check(aoti_torch_cpu__weight_int8pack_mm(x, w, s, &out), "aoti_torch_cpu__weight_int8pack_mm");
      aoti_torch_delete_tensor_object(out);
    }
    state.counters["GFLOPS"] =
        benchmark::Counter(2.0 * static_cast<double>(m * n * k) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  });
}
BENCHMARK(BM_WeightInt8PackMm)
    ->ArgNames({"m", "n", "k"})
    ->Args({1, 4096, 4096})
    ->Args({16, 4096, 4096})
    ->Args({128, 4096, 4096})
    ->Args({1, 11008, 4096})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Args: rows of x (M), output features (N), input features (K). A frozen
// linear (aoti_torch_cpu__linear_pointwise, no post-op) with a weight and
// bias declared constant, as a frozen export's are: the weight is packed
// on the first call and only the compute step runs after. The shapes are
// the real tier's GPT-2 (16 tokens, width 256: qkv, projection, MLP up,
// MLP down, LM head), Llama (33 tokens: query/output, key/value, gate
// or up, down, LM head) and ViT-Tiny (2 x 197 tokens: qkv, MLP down).
void BM_FrozenLinear(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  guarded(state, [&] {
    Tensors t;
    const int32_t f32 = aoti_torch_dtype_float32();
    AtenTensorHandle x = t.keep(filled({m, k}, f32, 1.0f));
    AtenTensorHandle w = t.keep(filled({n, k}, f32, 0.05f));
    AtenTensorHandle b = t.keep(filled({n}, f32, 0.1f));
    aotrun_shim_declare_constant(w);
    aotrun_shim_declare_constant(b);
    for (auto _ : state) {
      AtenTensorHandle out = nullptr;
      check(aoti_torch_cpu__linear_pointwise(x, w, &b, "none", nullptr, 0, nullptr, &out),
            "aoti_torch_cpu__linear_pointwise");
      aoti_torch_delete_tensor_object(out);
    }
    state.counters["GFLOPS"] =
        benchmark::Counter(2.0 * static_cast<double>(m * n * k) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  });
}
BENCHMARK(BM_FrozenLinear)
    ->ArgNames({"m", "n", "k"})
    ->Args({16, 768, 256})
    ->Args({16, 256, 256})
    ->Args({16, 1024, 256})
    ->Args({16, 256, 1024})
    ->Args({16, 5000, 256})
    ->Args({33, 256, 256})
    ->Args({33, 128, 256})
    ->Args({33, 704, 256})
    ->Args({33, 256, 704})
    ->Args({33, 5000, 256})
    ->Args({394, 576, 192})
    ->Args({394, 192, 768})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Arg: 0 for the real tier's GPT-2 (16 rows: 3 layers of qkv, projection,
// MLP up and down, then the 5,000-word LM head), 1 for its Llama (33 rows:
// 2 layers of query, key, value, output, gate, up and down, then the LM
// head). Every linear of one call in order, each over its own constant
// weight, as the model runs them: 16 MB and 11 MB of weights in all, so
// that each comes from L3 as in the model, where BM_FrozenLinear's one
// weight stays in L2 (docs/PERFORMANCE.md section 31).
void BM_FrozenLinearSequence(benchmark::State& state) {
  struct Shape {
    int64_t n, k;
  };
  std::vector<Shape> shapes;
  const bool llama = state.range(0) == 1;
  const int64_t m = llama ? 33 : 16;
  for (int layer = 0; layer < (llama ? 2 : 3); ++layer) {
    if (llama) {
      shapes.insert(shapes.end(), {{256, 256}, {128, 256}, {128, 256}, {256, 256}, {704, 256}, {704, 256}, {256, 704}});
    } else {
      shapes.insert(shapes.end(), {{768, 256}, {256, 256}, {1024, 256}, {256, 1024}});
    }
  }
  shapes.push_back({5000, 256});
  guarded(state, [&] {
    Tensors t;
    const int32_t f32 = aoti_torch_dtype_float32();
    AtenTensorHandle x = t.keep(filled({m, 1024}, f32, 1.0f));
    std::vector<AtenTensorHandle> xs, ws, bs;
    double flops = 0;
    for (const Shape& sh : shapes) {
      AtenTensorHandle view = nullptr;  // x's first k columns, rows 1,024 apart
      const int64_t sizes[] = {m, sh.k}, strides[] = {1024, 1};
      check(aoti_torch__reinterpret_tensor(x, 2, sizes, strides, 0, &view), "aoti_torch__reinterpret_tensor");
      xs.push_back(t.keep(view));
      ws.push_back(t.keep(filled({sh.n, sh.k}, f32, 0.05f)));
      bs.push_back(t.keep(filled({sh.n}, f32, 0.1f)));
      aotrun_shim_declare_constant(ws.back());
      aotrun_shim_declare_constant(bs.back());
      flops += 2.0 * static_cast<double>(m * sh.n * sh.k);
    }
    for (auto _ : state) {
      for (size_t i = 0; i < shapes.size(); ++i) {
        AtenTensorHandle out = nullptr;
        check(aoti_torch_cpu__linear_pointwise(xs[i], ws[i], &bs[i], "none", nullptr, 0, nullptr, &out),
              "aoti_torch_cpu__linear_pointwise");
        aoti_torch_delete_tensor_object(out);
      }
    }
    state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  });
}
BENCHMARK(BM_FrozenLinearSequence)->ArgName("llama")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Args: batch, input channels, output channels, image side, kernel side,
// stride. A frozen 2-d convolution (aoti_torch_cpu_mkldnn__convolution_pointwise,
// ReLU fused) on channels-last input and weight, the weight and bias
// declared constant as a frozen export's are. The shapes are the real
// tier's ResNet-18 at batch 2: its 3x3 convolutions per stage, the
// downsampling ones, and the 7x7 stem.
void BM_FrozenConvolution(benchmark::State& state) {
  const int64_t n = state.range(0), c = state.range(1), o = state.range(2), hw = state.range(3), k = state.range(4),
                s = state.range(5);
  guarded(state, [&] {
    Tensors t;
    const int32_t f32 = aoti_torch_dtype_float32();
    const std::vector<int64_t> xs = {n, c, hw, hw}, ws = {o, c, k, k};
    AtenTensorHandle x = t.keep(filled(xs, f32, 1.0f, channels_last(xs)));
    AtenTensorHandle w = t.keep(filled(ws, f32, 0.05f, channels_last(ws)));
    AtenTensorHandle b = t.keep(filled({o}, f32, 0.1f));
    aotrun_shim_declare_constant(w);
    aotrun_shim_declare_constant(b);
    const int64_t pad[2] = {k / 2, k / 2}, stride[2] = {s, s}, dil[2] = {1, 1};
    for (auto _ : state) {
      AtenTensorHandle out = nullptr;
      check(aoti_torch_cpu_mkldnn__convolution_pointwise(x, w, &b, pad, 2, stride, 2, dil, 2, 1, "relu", nullptr, 0,
                                                         nullptr, &out),
            "aoti_torch_cpu_mkldnn__convolution_pointwise");
      aoti_torch_delete_tensor_object(out);
    }
    const int64_t oh = (hw + 2 * (k / 2) - k) / s + 1;
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(n * oh * oh * o * c * k * k) / 1e9,
                                                  benchmark::Counter::kIsIterationInvariantRate);
  });
}
BENCHMARK(BM_FrozenConvolution)
    ->ArgNames({"n", "c", "o", "hw", "k", "s"})
    ->Args({2, 3, 64, 224, 7, 2})
    ->Args({2, 64, 64, 56, 3, 1})
    ->Args({2, 64, 128, 56, 3, 2})
    ->Args({2, 128, 128, 28, 3, 1})
    ->Args({2, 128, 256, 28, 3, 2})
    ->Args({2, 256, 256, 14, 3, 1})
    ->Args({2, 256, 512, 14, 3, 2})
    ->Args({2, 512, 512, 7, 3, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Args: batch, heads, query length (L), key length (S), head size (E),
// and 1 for an additive float mask [1, 1, L, S] (GPT-2's) or 0 for causal
// masking (Llama's). Query, key and value are views of one [B, L, 3 H E]
// projection, as the tier's exports pass them. Shapes: GPT-2 (16 tokens),
// Llama (33), ViT (197 patches).
void BM_Attention(benchmark::State& state) {
  const int64_t b = state.range(0), h = state.range(1), l = state.range(2), s = state.range(3), e = state.range(4);
  const bool masked = state.range(5) != 0;
  guarded(state, [&] {
    Tensors t;
    const int32_t f32 = aoti_torch_dtype_float32();
    AtenTensorHandle qkv = t.keep(filled({b, l, 3 * h * e}, f32, 1.0f));
    AtenTensorHandle mask = t.keep(filled({1, 1, l, s}, f32, 1.0f));
    const int64_t sizes[] = {b, h, l, e};
    const int64_t strides[] = {l * 3 * h * e, e, 3 * h * e, 1};
    AtenTensorHandle view[3];
    for (int i = 0; i < 3; ++i) {
      check(aoti_torch__reinterpret_tensor(qkv, 4, sizes, strides, i * h * e, &view[i]),
            "aoti_torch__reinterpret_tensor");
      t.keep(view[i]);
    }
    double scale = 1.0 / 8.0;
    for (auto _ : state) {
      AtenTensorHandle out = nullptr, lse = nullptr;
      check(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(view[0], view[1], view[2], 0.0, masked ? 0 : 1,
                                                                       masked ? &mask : nullptr, &scale, &out, &lse),
            "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu");
      aoti_torch_delete_tensor_object(out);
      aoti_torch_delete_tensor_object(lse);
    }
  });
}
BENCHMARK(BM_Attention)
    ->ArgNames({"b", "h", "l", "s", "e", "mask"})
    ->Args({1, 4, 16, 16, 64, 1})
    ->Args({1, 4, 33, 33, 64, 0})
    ->Args({2, 3, 197, 197, 64, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

void setup() { benchmark::AddCustomContext("kernels", "aotrun's shim (libaotrun_shim)"); }

}  // namespace aotrun_bench
