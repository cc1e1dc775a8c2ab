// mm, addmm and bmm on cuBLAS (the CUDA toolkit's), on the thread's current
// stream. Each thread has its own handle per device with one workspace for
// its eager GEMMs. The workspace is written by every GEMM: an event recorded
// after each one marks where it is free again, and a GEMM on another stream
// first waits for it, else both would use it at once (a probe on the legacy
// stream still running when a run on the runner's stream started gave
// numbers off by 1e-3 under compute-sanitizer). The old stream itself is
// never touched again: it may have been destroyed since. GEMMs recorded
// into a CUDA graph run without a workspace: a replay, launched later on
// any stream, must not share memory with the thread's eager GEMMs, and
// cuBLAS's own workspace would be allocated inside the capture.
#include <cublas_v2.h>

#include <climits>
#include <string>

#include "aotrun_shim/cuda.h"
#include "cuda_state.hpp"
#include "tensor_args.hpp"

namespace aotrun::shim::cuda {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's advice for Hopper
constexpr int kMaxDevices = 64;

void check_blas(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(std::string(what) + " failed: " + cublasGetStatusString(rc));
  }
}

struct Blas {
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;
  cudaEvent_t free_again = nullptr;  // recorded after the last eager GEMM, on `last`
  cudaStream_t last = nullptr;       // the stream of that GEMM
  bool used = false;                 // free_again has been recorded
};

struct ThreadBlas {
  Blas dev[kMaxDevices];
  ~ThreadBlas() {
    for (int d = 0; d < kMaxDevices; ++d) {
      if (dev[d].handle == nullptr) continue;
      (void)cudaSetDevice(d);
      (void)cublasDestroy(dev[d].handle);
      (void)cudaFree(dev[d].workspace);
      (void)cudaEventDestroy(dev[d].free_again);
    }
  }
};
thread_local ThreadBlas t_blas;

// The workspace, usable on `stream` once this returns (see the top);
// nullptr under a capture.
void* workspace_for(Blas& b, cudaStream_t stream, bool capturing) {
  if (capturing) return nullptr;
  if (b.used && b.last != stream) {
    check(cudaStreamWaitEvent(stream, b.free_again, 0), "cudaStreamWaitEvent (cuBLAS workspace)");
  }
  return b.workspace;
}

// The thread's handle for `device`, bound to the current stream with the
// workspace (cublasSetStream resets the workspace, so it is set again).
// Call gemm_queued after the GEMM.
Blas& blas_for(int device, cudaStream_t stream, bool capturing) {
  Blas& b = t_blas.dev[device];
  if (b.handle == nullptr) {
    if (capturing) {
      throw CudaError(
          "this thread has no cuBLAS handle yet and one cannot be created during a stream capture: "
          "run the model once on this thread before capturing it");
    }
    check_blas(cublasCreate(&b.handle), "cublasCreate");
    check(cudaMalloc(&b.workspace, kWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
    check(cudaEventCreateWithFlags(&b.free_again, cudaEventDisableTiming), "cudaEventCreate (cuBLAS workspace)");
  }
  void* ws = workspace_for(b, stream, capturing);
  check_blas(cublasSetStream(b.handle, stream), "cublasSetStream");
  check_blas(cublasSetWorkspace(b.handle, ws, ws != nullptr ? kWorkspaceBytes : 0), "cublasSetWorkspace");
  return b;
}

// After an eager GEMM on `stream`: where the workspace is free again.
void gemm_queued(Blas& b, cudaStream_t stream, bool capturing) {
  if (capturing) return;
  check(cudaEventRecord(b.free_again, stream), "cudaEventRecord (cuBLAS workspace)");
  b.last = stream;
  b.used = true;
}

cudaDataType_t data_type(int32_t dtype, const char* op, const char* arg) {
  switch (dtype) {
    case kFloat32: return CUDA_R_32F;
    case kBFloat16: return CUDA_R_16BF;
    case kFloat16: return CUDA_R_16F;
    default:
      throw CudaError(std::string(op) + ": argument '" + arg + "' has dtype " + dtype_label(dtype) +
                      " (aotrun's CUDA GEMM takes float32, bfloat16 and float16)");
  }
}

// A matrix view usable by cuBLAS as column-major rows x cols: op and ld.
struct Operand {
  cublasOperation_t op;
  int64_t ld;
};

bool col_major(int64_t rows, int64_t cols, int64_t rs, int64_t cs, Operand* o) {
  const int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= r1)) {
    *o = {CUBLAS_OP_N, cols <= 1 ? r1 : cs};
    return true;
  }
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= c1)) {
    *o = {CUBLAS_OP_T, rows <= 1 ? c1 : rs};
    return true;
  }
  return false;
}

int as_int(int64_t v, const char* op) {
  if (v < 0 || v > INT_MAX) throw CudaError(std::string(op) + ": a dimension or stride exceeds cuBLAS's int range");
  return static_cast<int>(v);
}

// A dense copy of `t` (owned by `keep`) when its last two dims are not a
// cuBLAS operand; `t` itself otherwise.
DevTensor operand_view(const DevTensor& t, OwnedHandle* keep) {
  const int64_t n = t.dim();
  Operand o;
  if (col_major(t.sizes[n - 2], t.sizes[n - 1], t.strides[n - 2], t.strides[n - 1], &o)) return t;
  DevTensor c = new_cuda(t.sizes, contiguous(t.sizes), t.dtype, t.device_index);
  OwnedHandle owned(c.h);
  copy_into(c, t);
  keep->reset(owned.release());
  return c;
}

// C[b] = alpha * A[b] @ B[b] + beta * C[b] for `batch` matrices (batch
// stride: dim 0 when 3-d). C's old contents count only when beta != 0.
void gemm(const DevTensor& c_in, const DevTensor& a_in, const DevTensor& b_in, double alpha, double beta,
          const char* op) {
  const int64_t nd = c_in.dim();
  const int64_t M = c_in.sizes[nd - 2], N = c_in.sizes[nd - 1], K = a_in.sizes[nd - 1];
  const int64_t batch = nd == 3 ? c_in.sizes[0] : 1;
  if (M == 0 || N == 0 || batch == 0) return;
  if (K == 0) throw CudaError(std::string(op) + ": an inner dimension of 0 is not supported");
  const cudaDataType_t type = data_type(c_in.dtype, op, "out");
  if (data_type(a_in.dtype, op, "self") != type || data_type(b_in.dtype, op, "mat2") != type) {
    throw CudaError(std::string(op) + ": the operands' dtypes differ (out " + dtype_label(c_in.dtype) + ", self " +
                    dtype_label(a_in.dtype) + ", mat2 " + dtype_label(b_in.dtype) + ")");
  }
  const int dev = c_in.device_index < 0 ? resolve_device(-1) : c_in.device_index;
  DeviceScope scope(dev);
  const cudaStream_t stream = current_stream(dev);
  OwnedHandle keep_a, keep_b, keep_c;
  const DevTensor a = operand_view(a_in, &keep_a), b = operand_view(b_in, &keep_b);
  // C must be a plain column-major operand, as itself or transposed.
  DevTensor c = c_in;
  Operand oc;
  bool transposed = false;
  if (!col_major(M, N, c.strides[nd - 2], c.strides[nd - 1], &oc) || oc.op != CUBLAS_OP_N) {
    if (col_major(N, M, c.strides[nd - 1], c.strides[nd - 2], &oc) && oc.op == CUBLAS_OP_N) {
      transposed = true;
    } else {
      c = new_cuda(c_in.sizes, contiguous(c_in.sizes), c_in.dtype, c_in.device_index);
      keep_c.reset(c.h);
      if (beta != 0.0) copy_into(c, c_in);
      transposed = true;
      oc = {CUBLAS_OP_N, N};
    }
  }
  Operand oa{}, ob{};  // set by col_major when it returns true
  const void *pa, *pb;
  int64_t m, n, sa, sb;
  if (!transposed) {  // C (M x N) = A (M x K) . B (K x N)
    (void)col_major(M, K, a.strides[nd - 2], a.strides[nd - 1], &oa);
    (void)col_major(K, N, b.strides[nd - 2], b.strides[nd - 1], &ob);
    pa = a.data, pb = b.data, m = M, n = N;
    sa = nd == 3 ? a.strides[0] : 0, sb = nd == 3 ? b.strides[0] : 0;
  } else {  // C^T (N x M) = B^T (N x K) . A^T (K x M)
    (void)col_major(N, K, b.strides[nd - 1], b.strides[nd - 2], &oa);
    (void)col_major(K, M, a.strides[nd - 1], a.strides[nd - 2], &ob);
    pa = b.data, pb = a.data, m = N, n = M;
    sa = nd == 3 ? b.strides[0] : 0, sb = nd == 3 ? a.strides[0] : 0;
  }
  const int64_t sc = nd == 3 ? c.strides[0] : 0;
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const bool capturing = capture_id(stream) != 0;
  Blas& blas = blas_for(dev, stream, capturing);
  cublasHandle_t h = blas.handle;
  if (batch == 1) {
    check_blas(cublasGemmEx(h, oa.op, ob.op, as_int(m, op), as_int(n, op), as_int(K, op), &alpha_f, pa, type,
                            as_int(oa.ld, op), pb, type, as_int(ob.ld, op), &beta_f, c.data, type, as_int(oc.ld, op),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
  } else {
    check_blas(
        cublasGemmStridedBatchedEx(h, oa.op, ob.op, as_int(m, op), as_int(n, op), as_int(K, op), &alpha_f, pa, type,
                                   as_int(oa.ld, op), sa, pb, type, as_int(ob.ld, op), sb, &beta_f, c.data, type,
                                   as_int(oc.ld, op), sc, as_int(batch, op), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  }
  gemm_queued(blas, stream, capturing);
  if (c.h != c_in.h) copy_into(c_in, c);
}

void expect_shape(const DevTensor& out, const std::vector<int64_t>& want, const char* op) {
  if (out.sizes != want) {
    std::string got, exp;
    for (int64_t s : out.sizes) got += (got.empty() ? "" : ", ") + std::to_string(s);
    for (int64_t s : want) exp += (exp.empty() ? "" : ", ") + std::to_string(s);
    throw CudaError(std::string(op) + ": argument 'out' has shape [" + got + "], the product is [" + exp + "]");
  }
}

}  // namespace
}  // namespace aotrun::shim::cuda

using namespace aotrun::shim::cuda;

extern "C" {

AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] {
    const DevTensor o = read_cuda(out, "out", 2), a = read_cuda(self, "self", 2), b = read_cuda(mat2, "mat2", 2);
    if (a.sizes[1] != b.sizes[0]) throw CudaError("self and mat2 shapes cannot be multiplied");
    expect_shape(o, {a.sizes[0], b.sizes[1]}, "mm");
    gemm(o, a, b, 1.0, 0.0, "mm");
  });
}

AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                         AtenTensorHandle mat2, double beta, double alpha) {
  return guarded(__func__, [&] {
    const DevTensor o = read_cuda(out, "out", 2), s = read_cuda(self, "self"), a = read_cuda(mat1, "mat1", 2),
                    b = read_cuda(mat2, "mat2", 2);
    if (a.sizes[1] != b.sizes[0]) throw CudaError("mat1 and mat2 shapes cannot be multiplied");
    expect_shape(o, {a.sizes[0], b.sizes[1]}, "addmm");
    if (beta != 0.0) copy_into(o, s);  // self broadcast into out, scaled by beta in the GEMM
    gemm(o, a, b, alpha, beta, "addmm");
  });
}

AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  return guarded(__func__, [&] {
    const DevTensor o = read_cuda(out, "out", 3), a = read_cuda(self, "self", 3), b = read_cuda(mat2, "mat2", 3);
    if (a.sizes[0] != b.sizes[0] || a.sizes[2] != b.sizes[1]) {
      throw CudaError("self and mat2 shapes cannot be multiplied batch by batch");
    }
    expect_shape(o, {a.sizes[0], a.sizes[1], b.sizes[2]}, "bmm");
    gemm(o, a, b, 1.0, 0.0, "bmm");
  });
}

}  // extern "C"
