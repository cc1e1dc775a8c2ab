// bench_shim_kernels: kernels of aotrun's own AOTInductor shim called
// through its C API, at the sizes models run them. For now the int8
// weight-only linear (aoti_torch_cpu__weight_int8pack_mm: a quantized LLM's
// linears) at a decoder's step (1 row), a short prompt (16) and a long one
// (128), over 4096 x 4096 and 11008 x 4096 weights. OMP_NUM_THREADS sets
// the kernels' team. docs/PERFORMANCE.md section 19 has figures.
#include <aotrun_shim/shim.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "support/bench_main.hpp"

namespace aotrun_bench {
namespace {

// A contiguous CPU tensor of `dtype` filled with deterministic values: int8
// over [-128, 127], float32 over [0, scale).
AtenTensorHandle filled(const std::vector<int64_t>& sizes, int32_t dtype, float scale) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  AtenTensorHandle h = nullptr;
  if (aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype,
                               aoti_torch_device_type_cpu(), 0, &h) != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(std::string("aoti_torch_empty_strided: ") + aotrun_shim_last_error());
  }
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
      if (aoti_torch_cpu__weight_int8pack_mm(x, w, s, &out) != AOTI_TORCH_SUCCESS) {
        fail(state, std::string("aoti_torch_cpu__weight_int8pack_mm: ") + aotrun_shim_last_error());
        return;
      }
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

}  // namespace

void setup() { benchmark::AddCustomContext("kernels", "aotrun's shim (libaotrun_shim)"); }

}  // namespace aotrun_bench
