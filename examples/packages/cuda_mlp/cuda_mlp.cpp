// Example package: the three-layer MLP of examples/packages/mlp on a CUDA
// device, computed with cuBLAS plus one kernel of its own (bias + ReLU).
//   x [batch, 256] -> fc1 (256->1024) -> ReLU -> fc2 (1024->1024) -> ReLU
//   -> fc3 (1024->64) -> y [batch, 64]
// Same weights file and layout (fcN.weight [out, in], fcN.bias [out]).
//
// Streams: the run's aotrun_pkg_stream IS the cudaStream_t. Every forward
// enqueues three cublasSgemm and three bias_act kernels on it, with the
// hidden activations from the host's stream-ordered allocator, so the whole
// forward can be captured into a CUDA graph (no sync, no event, no host
// allocation visible to CUDA).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include <aotrun/sdk.hpp>

#include "bias_act.hpp"

namespace sdk = aotrun::sdk;

namespace {

constexpr int64_t kIn = 256;
constexpr int64_t kHidden = 1024;
constexpr int64_t kOut = 64;
// cuBLAS workspace per instance. Set explicitly on every run: cublasSetStream
// resets it, and a captured GEMM must not allocate a workspace of its own.
constexpr size_t kCublasWorkspace = size_t{4} << 20;

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();
  sdk::fail(e == cudaErrorMemoryAllocation ? AOTRUN_PKG_ERR_OUT_OF_MEMORY : AOTRUN_PKG_ERR_RUNTIME,
            std::string(what) + " failed: " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  sdk::fail(s == CUBLAS_STATUS_ALLOC_FAILED ? AOTRUN_PKG_ERR_OUT_OF_MEMORY : AOTRUN_PKG_ERR_RUNTIME,
            std::string(what) + " failed: " + cublasGetStatusString(s) + " (" + cublasGetStatusName(s) + ")");
}

// Makes the container's device current for a scope (the host may call from
// any thread; cuBLAS handles and kernels belong to one device).
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    int current = -1;
    check_cuda(cudaGetDevice(&current), "cudaGetDevice");
    if (current != device) {
      check_cuda(cudaSetDevice(device), "cudaSetDevice");
      previous_ = current;
    }
  }
  ~DeviceScope() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

struct Layer {
  const float* weight;  // device, [out, in]
  const float* bias;    // device, [out]
  int64_t in;
  int64_t out;
};

const char* const kNames[6] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"};

// The six constants copied to the device in one allocation. One per
// container (Model::Shared), uploaded by the first instance created.
class DeviceWeights {
 public:
  DeviceWeights() = default;
  DeviceWeights(const DeviceWeights&) = delete;
  DeviceWeights& operator=(const DeviceWeights&) = delete;
  ~DeviceWeights() {
    if (block_ == nullptr) return;
    int current = -1;
    const bool switched =
        cudaGetDevice(&current) == cudaSuccess && current != device_ && cudaSetDevice(device_) == cudaSuccess;
    (void)cudaFree(block_);
    if (switched) (void)cudaSetDevice(current);
    (void)cudaGetLastError();
  }

  // Idempotent; the caller holds Shared::mutex. The constants were validated
  // (dtype, shape, compact) by validate_constants. They may be on the CPU
  // (the host's mmap of weights.safetensors) or already on the device:
  // cudaMemcpyDefault copies either.
  void upload(const sdk::Constants& c, int device) {
    if (block_ != nullptr) return;
    size_t offsets[6];
    size_t total = 0;
    for (int i = 0; i < 6; ++i) {
      offsets[i] = total;
      total += (bytes_of(c.get(kNames[i])) + 255) / 256 * 256;
    }
    DeviceScope scope(device);
    void* block = nullptr;
    check_cuda(cudaMalloc(&block, total), "cudaMalloc (device weights)");
    for (int i = 0; i < 6; ++i) {
      const DLTensor& t = c.get(kNames[i]);
      char* dst = static_cast<char*>(block) + offsets[i];
      const cudaError_t e = cudaMemcpy(dst, sdk::data_ptr<const char>(t), bytes_of(t), cudaMemcpyDefault);
      if (e != cudaSuccess) {
        (void)cudaFree(block);
        check_cuda(e, (std::string("cudaMemcpy of constant '") + kNames[i] + "' to the device").c_str());
      }
      ptrs_[i] = reinterpret_cast<const float*>(dst);
    }
    block_ = block;
    device_ = device;
    bytes_ = total;
  }

  const float* get(int i) const { return ptrs_[i]; }
  size_t bytes() const { return bytes_; }

 private:
  static size_t bytes_of(const DLTensor& t) { return static_cast<size_t>(sdk::numel(t)) * sizeof(float); }

  void* block_ = nullptr;
  int device_ = 0;
  size_t bytes_ = 0;
  const float* ptrs_[6] = {};
};

// y[batch, out] = act(x[batch, in] W^T + b), all row-major. cuBLAS is
// column-major: the row-major [batch, out] result is the column-major
// [out, batch] matrix W x^T, i.e. op(A) = W (A = W^T stored, transposed)
// and B = x^T (x row-major is x^T column-major).
void linear(cublasHandle_t handle, cudaStream_t stream, const Layer& l, const float* x, float* y, int64_t batch,
            bool relu) {
  const float one = 1.0f;
  const float zero = 0.0f;
  check_cublas(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(l.out), static_cast<int>(batch),
                           static_cast<int>(l.in), &one, l.weight, static_cast<int>(l.in), x, static_cast<int>(l.in),
                           &zero, y, static_cast<int>(l.out)),
               "cublasSgemm");
  check_cuda(cuda_mlp::launch_bias_act(y, l.bias, batch, l.out, relu, stream), "bias_act kernel launch");
}

}  // namespace

class CudaMlp {
 public:
  struct Shared {
    std::mutex mutex;
    DeviceWeights weights;
  };

  static bool supports_device(DLDevice d) { return d.device_type == kDLCUDA; }

  static sdk::Signature signature() {
    return {{{"x", sdk::dtype::float32(), {sdk::kDynamic, kIn}}},
            {{"y", sdk::dtype::float32(), {sdk::kDynamic, kOut}}}};
  }

  static void validate_constants(const sdk::Constants& c) {
    const DLDataType f32 = sdk::dtype::float32();
    c.require("fc1.weight", f32, {kHidden, kIn});
    c.require("fc1.bias", f32, {kHidden});
    c.require("fc2.weight", f32, {kHidden, kHidden});
    c.require("fc2.bias", f32, {kHidden});
    c.require("fc3.weight", f32, {kOut, kHidden});
    c.require("fc3.bias", f32, {kOut});
  }

  static void output_shapes(const sdk::InputShapes& in, const sdk::OutputShapes& out) { out[0][0] = in[0][0]; }

  explicit CudaMlp(const sdk::InstanceContext& ctx) : device_(ctx.device().device_id) {
    Shared& shared = ctx.shared<Shared>();
    {
      std::lock_guard<std::mutex> lock(shared.mutex);
      shared.weights.upload(ctx.constants(), device_);
    }
    const DeviceWeights& w = shared.weights;
    fc1_ = {w.get(0), w.get(1), kIn, kHidden};
    fc2_ = {w.get(2), w.get(3), kHidden, kHidden};
    fc3_ = {w.get(4), w.get(5), kHidden, kOut};
    DeviceScope scope(device_);
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    const cudaError_t e = cudaMalloc(&workspace_, kCublasWorkspace);
    if (e != cudaSuccess) {
      (void)cublasDestroy(handle_);
      check_cuda(e, "cudaMalloc (cuBLAS workspace)");
    }
    ctx.host().log_lazy(AOTRUN_PKG_LOG_DEBUG, [&] {
      return "cuda_mlp instance " + std::to_string(ctx.index()) + " on cuda:" + std::to_string(device_) +
             " (device weights: " + std::to_string(w.bytes()) + " bytes, shared by the container)";
    });
  }

  ~CudaMlp() {
    int current = -1;
    const bool switched =
        cudaGetDevice(&current) == cudaSuccess && current != device_ && cudaSetDevice(device_) == cudaSuccess;
    (void)cublasDestroy(handle_);
    (void)cudaFree(workspace_);
    if (switched) (void)cudaSetDevice(current);
    (void)cudaGetLastError();
  }

  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  void forward(sdk::RunContext& run, const DLTensor* inputs, DLTensor* outputs) {
    const int64_t batch = inputs[0].shape[0];
    if (batch == 0) return;
    if (run.stream() == nullptr) {
      // The host's NULL means its own default stream, which the package
      // cannot name; CUDA's NULL is the legacy stream. Refuse the ambiguity.
      sdk::fail_invalid("cuda_mlp needs an explicit CUDA stream in the run arguments (got NULL)");
    }
    const auto stream = static_cast<cudaStream_t>(run.stream());
    DeviceScope scope(device_);
    check_cublas(cublasSetStream(handle_, stream), "cublasSetStream");
    check_cublas(cublasSetWorkspace(handle_, workspace_, kCublasWorkspace), "cublasSetWorkspace");
    const float* x = sdk::data_ptr<const float>(inputs[0]);
    float* y = sdk::data_ptr<float>(outputs[0]);
    // Hidden activations: stream-ordered, allocated and freed on the run's
    // stream (captured as allocation / free nodes of the graph).
    sdk::Scratch scratch = run.scratch(2 * static_cast<size_t>(batch * kHidden) * sizeof(float));
    float* h1 = scratch.as<float>();
    float* h2 = h1 + batch * kHidden;
    linear(handle_, stream, fc1_, x, h1, batch, true);
    linear(handle_, stream, fc2_, h1, h2, batch, true);
    linear(handle_, stream, fc3_, h2, y, batch, false);
    scratch.release();  // free enqueued after the three layers
  }

 private:
  int device_;
  Layer fc1_{}, fc2_{}, fc3_{};
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

AOTRUN_PKG_EXPORT(CudaMlp);
