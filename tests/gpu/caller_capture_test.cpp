// The original report, on CUDA: a caller captures its own cudaStream_t and
// runs a loaded package inside the capture (aotrun_runner_run_on_cuda_stream).
// Threaded runner, num_models = 1, second call: CAPTURE_UNSUPPORTED and an
// invalidated capture; single_threaded: the caller's graph replays bit-equal
// to eager runs. Skips without a CUDA device.
#include <vector>

#include "gpu_util.hpp"
#include "mlp_reference.h"

using namespace aotrun_gpu;

namespace {

struct CudaStream {
  cudaStream_t s = nullptr;
  CudaStream() { (void)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~CudaStream() {
    if (s != nullptr) (void)cudaStreamDestroy(s);
  }
};

}  // namespace

TEST(CudaCallerCapture, ThreadedSecondCallFailsLikeTheReport) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_THREADED).num_models(1));
  CudaStream stream;
  DeviceTensor x({4, 256}), y({4, 64});
  x.upload(aotrun::test::mlp_reference_input(4, 3));
  aotrun_status* s = aotrun_runner_run_on_cuda_stream(r.get(), stream.s, x.dl(), 1, y.dl(), 1);  // eager
  ASSERT_EQ(s, nullptr) << describe(s);
  AOTRUN_GPU_CHECK_CUDA(cudaStreamSynchronize(stream.s));
  AOTRUN_GPU_CHECK_CUDA(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeGlobal));
  s = aotrun_runner_run_on_cuda_stream(r.get(), stream.s, x.dl(), 1, y.dl(), 1);
  EXPECT_EQ(aotrun_status_code(s), AOTRUN_ERR_CAPTURE_UNSUPPORTED) << describe(s);
  aotrun_status_free(s);
  cudaGraph_t g = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream.s, &g), cudaErrorStreamCaptureInvalidated);
  (void)cudaGetLastError();
  if (g != nullptr) (void)cudaGraphDestroy(g);
}

TEST(CudaCallerCapture, SingleThreadedCaptureReplaysLikeEager) {
  AOTRUN_REQUIRE_CUDA_DEVICE();
  Package pkg(pkg_path("cuda_mlp"));
  Runner st(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  Runner ref(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  CudaStream stream;
  DeviceTensor x({4, 256}), y({4, 64}), expect({4, 64});
  x.upload(aotrun::test::mlp_reference_input(4, 5));
  aotrun_status* s = aotrun_runner_run_on_cuda_stream(st.get(), stream.s, x.dl(), 1, y.dl(), 1);  // warm-up
  ASSERT_EQ(s, nullptr) << describe(s);
  AOTRUN_GPU_CHECK_CUDA(cudaStreamSynchronize(stream.s));
  AOTRUN_GPU_CHECK_CUDA(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeGlobal));
  s = aotrun_runner_run_on_cuda_stream(st.get(), stream.s, x.dl(), 1, y.dl(), 1);
  ASSERT_EQ(s, nullptr) << describe(s);
  cudaGraph_t g = nullptr;
  AOTRUN_GPU_CHECK_CUDA(cudaStreamEndCapture(stream.s, &g));
  cudaGraphExec_t exec = nullptr;
  AOTRUN_GPU_CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
  for (uint64_t seed = 6; seed < 9; ++seed) {
    x.upload(aotrun::test::mlp_reference_input(4, seed));  // same buffer, new contents
    y.poison();
    AOTRUN_GPU_CHECK_CUDA(cudaGraphLaunch(exec, stream.s));
    AOTRUN_GPU_CHECK_CUDA(cudaStreamSynchronize(stream.s));
    s = aotrun_runner_run(ref.get(), x.dl(), 1, expect.dl(), 1);
    ASSERT_EQ(s, nullptr) << describe(s);
    EXPECT_EQ(y.download(), expect.download()) << "seed " << seed;
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(g);
}
