// A stand-in for a model library that uses what real architectures import
// beyond the corpus: an OpenMP parallel region (GOMP_parallel, omp_*), a
// Sleef function and shim calls from inside it. Built like an AOTInductor
// model: NEEDs libtorch_cpu.so (the stand-in's soname) and nothing that
// defines GOMP_*/Sleef_*/aoti_torch_*: they must come through the stand-ins.
#include <omp.h>

#include <cstdint>
#include <exception>

extern "C" {
struct AtenTensorOpaque;
typedef AtenTensorOpaque* AtenTensorHandle;
int32_t aoti_torch_empty_strided(int64_t, const int64_t*, const int64_t*, int32_t, int32_t, int32_t, AtenTensorHandle*);
int32_t aoti_torch_get_data_ptr(AtenTensorHandle, void**);
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle);
int32_t aoti_torch_dtype_float32(void);
int32_t aoti_torch_device_type_cpu(void);
float Sleef_expf_u10(float);
void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line, const char* msg);

// Fills n floats with exp(i / n) in a parallel loop; returns their sum and
// the number of threads that ran, or -1 on a shim error.
__attribute__((visibility("default"))) double fake_model_run(int64_t n, int threads, int* threads_seen) {
  AtenTensorHandle t = nullptr;
  const int64_t size = n, stride = 1;
  if (aoti_torch_empty_strided(1, &size, &stride, aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(), 0, &t) !=
      0) {
    return -1;
  }
  void* p = nullptr;
  aoti_torch_get_data_ptr(t, &p);
  float* f = static_cast<float*>(p);
  int seen = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    seen = omp_get_num_threads();
#pragma omp for
    for (int64_t i = 0; i < n; ++i) f[i] = Sleef_expf_u10(static_cast<float>(i) / static_cast<float>(n));
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += f[i];
  aoti_torch_delete_tensor_object(t);
  *threads_seen = seen;
  return sum;
}

// A failed check (what Inductor's bounds checks call), caught the way a
// model's entry point catches it. Outside a parallel region the exception
// reaches the catch: returns 1. Inside one it cannot leave the region and
// the process terminates (as on libtorch).
__attribute__((visibility("default"))) int fake_model_check(int inside_parallel) {
  try {
    if (inside_parallel) {
#pragma omp parallel num_threads(2)
      aoti_torch_check(omp_get_thread_num() != 1, "fake_kernel", "fake.cpp", 7, "index out of bounds: 0 <= tmp0 < 5L");
    } else {
      aoti_torch_check(false, "fake_kernel", "fake.cpp", 7, "index out of bounds: 0 <= tmp0 < 5L");
    }
  } catch (const std::exception&) {
    return 1;
  }
  return 0;
}
}
