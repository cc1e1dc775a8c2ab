// The CUDA backend (cpp/device/cuda) below the runner: device checks, the
// host services table, capture and graphs, and the cuda_mlp package driven
// directly through its package ABI on a Context's streams.
//
// The CudaBackendNoDevice / CudaBackendLinkage tests run everywhere (they are
// the point on machines without a GPU: no crash, no hang, a clear reason);
// the others skip with "no CUDA device: <reason>" there.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "device/cuda/cuda_context.hpp"
#include "gpu_device.hpp"
#include "mlp_reference.h"

using aotrun::Code;
using aotrun::cuda::Context;
using namespace aotrun_gpu;

namespace {

struct Counter {
  std::atomic<int> runs{0};
  std::atomic<int> destroyed{0};
  int32_t rc = AOTRUN_PKG_OK;
  int sleep_ms = 0;
};

int32_t count_fn(void* p) {
  auto* c = static_cast<Counter*>(p);
  if (c->sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(c->sleep_ms));
  c->runs.fetch_add(1);
  return c->rc;
}
void count_destroy(void* p) { static_cast<Counter*>(p)->destroyed.fetch_add(1); }

const char* fake_last_error() { return "host fn said no"; }

int32_t launch(const aotrun_pkg_host* h, void* stream, Counter* c) {
  return h->launch(h->host_ctx, stream, &count_fn, c, &count_destroy);
}

}  // namespace

// --- everywhere -----------------------------------------------------------------

TEST(CudaBackendNoDevice, ContextCreateFailsWithTheDriversReason) {
  std::string present_why;
  if (cuda_device_present(&present_why)) GTEST_SKIP() << "a CUDA device is present; this covers machines without one";
  ASSERT_TRUE(aotrun::cuda::compiled_in());
  std::string why;
  EXPECT_FALSE(aotrun::cuda::usable(0, &why));
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
  try {
    (void)Context::create(0, "cuda_mlp", &fake_last_error);
    ADD_FAILURE() << "Context::create succeeded without a device";
  } catch (const aotrun::Error& e) {
    EXPECT_EQ(e.code(), Code::Device);
    EXPECT_EQ(std::string(e.what()), why);
  }
}

TEST(CudaBackendLinkage, DeviceIdsOutOfRangeAreRefusedWithAReason) {
  std::string why;
  EXPECT_FALSE(aotrun::cuda::usable(-1, &why));
  EXPECT_NE(why.find("negative"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(aotrun::cuda::usable(4096, &why));
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(why.find("does not exist") != std::string::npos || why.find("no CUDA device") != std::string::npos)
      << why;
}

// A shared library that links aotrun_cuda like libaotrun does: it must load
// (no libcuda.so / libcudart.so needed) and answer on any machine.
TEST(CudaBackendLinkage, SharedLibraryLoadsAndAnswersWithoutLinkingTheDriver) {
  void* h = dlopen(AOTRUN_CUDA_LINK_CHECK_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  using Fn = int (*)(int, char*, size_t);
  auto fn = reinterpret_cast<Fn>(dlsym(h, "aotrun_cuda_link_check_usable"));
  ASSERT_NE(fn, nullptr) << dlerror();
  char why[512] = {0};
  const int ok = fn(0, why, sizeof(why));
  std::string present_why;
  EXPECT_EQ(ok != 0, cuda_device_present(&present_why)) << why;
  if (ok == 0) {
    EXPECT_NE(std::string(why).find("no CUDA device"), std::string::npos) << why;
  }
  dlclose(h);
}

// --- with a device ----------------------------------------------------------------

class CudaBackend : public testing::Test {
 protected:
  void SetUp() override {
    AOTRUN_REQUIRE_CUDA_DEVICE();
    ctx_ = Context::create(0, "backend_test", &fake_last_error);
    host_ = ctx_->host();
  }
  std::unique_ptr<Context> ctx_;
  const aotrun_pkg_host* host_ = nullptr;
};

TEST_F(CudaBackend, LaunchRunsOnceAndReleasesItsContextOnce) {
  Counter c;
  ASSERT_EQ(launch(host_, nullptr, &c), AOTRUN_PKG_OK);
  const aotrun::Status st = ctx_->synchronize(nullptr);
  EXPECT_TRUE(st.ok()) << st.message;
  EXPECT_EQ(c.runs.load(), 1);
  EXPECT_EQ(c.destroyed.load(), 1);
}

TEST_F(CudaBackend, FailedHostWorkIsReportedOnceBySynchronize) {
  Counter c;
  c.rc = AOTRUN_PKG_ERR_RUNTIME;
  ASSERT_EQ(launch(host_, nullptr, &c), AOTRUN_PKG_OK);
  const aotrun::Status st = ctx_->synchronize(nullptr);
  EXPECT_EQ(st.code, Code::Package);
  EXPECT_NE(st.message.find("host fn said no"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("backend_test"), std::string::npos) << st.message;
  EXPECT_EQ(c.destroyed.load(), 1);
  EXPECT_TRUE(ctx_->synchronize(nullptr).ok());
}

TEST_F(CudaBackend, RefusedLaunchReleasesTheContextBeforeReturning) {
  Counter c;
  EXPECT_EQ(host_->launch(host_->host_ctx, nullptr, nullptr, &c, &count_destroy), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(c.destroyed.load(), 1);
  EXPECT_FALSE(aotrun::cuda::last_failure().empty());
}

TEST_F(CudaBackend, EventQueryIsNotReadyWhileWorkIsPending) {
  aotrun_pkg_event ev = nullptr;
  ASSERT_EQ(host_->event_create(host_->host_ctx, &ev), AOTRUN_PKG_OK);
  EXPECT_EQ(host_->event_query(host_->host_ctx, ev), AOTRUN_PKG_OK);  // never recorded
  Counter c;
  c.sleep_ms = 200;
  ASSERT_EQ(launch(host_, nullptr, &c), AOTRUN_PKG_OK);
  ASSERT_EQ(host_->event_record(host_->host_ctx, ev, nullptr), AOTRUN_PKG_OK);
  EXPECT_EQ(host_->event_query(host_->host_ctx, ev), AOTRUN_PKG_NOT_READY);
  EXPECT_EQ(host_->event_synchronize(host_->host_ctx, ev), AOTRUN_PKG_OK);
  EXPECT_EQ(host_->event_query(host_->host_ctx, ev), AOTRUN_PKG_OK);
  EXPECT_EQ(c.runs.load(), 1);
  EXPECT_EQ(host_->event_destroy(host_->host_ctx, ev), AOTRUN_PKG_OK);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // NOT_READY left no error behind
}

TEST_F(CudaBackend, StreamOrderedMemoryIsAlignedAndCopies) {
  void* p = nullptr;
  ASSERT_EQ(host_->alloc(host_->host_ctx, 1000, nullptr, &p), AOTRUN_PKG_OK);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7);
  ASSERT_TRUE(ctx_->copy(p, in.data(), in.size(), nullptr).ok());
  ASSERT_TRUE(ctx_->copy(out.data(), p, out.size(), nullptr).ok());
  ASSERT_TRUE(ctx_->synchronize(nullptr).ok());
  EXPECT_EQ(in, out);
  EXPECT_GT(ctx_->pool_bytes(), 0u);
  EXPECT_EQ(host_->free(host_->host_ctx, p, nullptr), AOTRUN_PKG_OK);
  void* s = nullptr;
  ASSERT_TRUE(ctx_->alloc(4096, &s).ok());
  const uint64_t with_static = ctx_->pool_bytes();
  ctx_->free(s);
  EXPECT_EQ(ctx_->pool_bytes() + 4096, with_static);
}

TEST_F(CudaBackend, SynchronizeUnderCaptureIs900AndInvalidatesTheCapture) {
  void* s = ctx_->new_stream();
  aotrun_pkg_event ev = nullptr;
  ASSERT_EQ(host_->event_create(host_->host_ctx, &ev), AOTRUN_PKG_OK);
  ASSERT_EQ(host_->event_record(host_->host_ctx, ev, nullptr), AOTRUN_PKG_OK);
  ASSERT_TRUE(ctx_->begin_capture(s).ok());
  EXPECT_TRUE(ctx_->is_capturing(s));
  EXPECT_FALSE(ctx_->is_capturing(nullptr));
  int32_t capturing = -1;
  ASSERT_EQ(host_->stream_is_capturing(host_->host_ctx, s, &capturing), AOTRUN_PKG_OK);
  EXPECT_EQ(capturing, 1);
  EXPECT_EQ(host_->event_query(host_->host_ctx, ev), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED)
      << aotrun::cuda::last_failure();
  EXPECT_EQ(host_->stream_synchronize(host_->host_ctx, s), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  EXPECT_NE(aotrun::cuda::last_failure().find("cudaErrorStreamCapture"), std::string::npos)
      << aotrun::cuda::last_failure();
  void* exec = nullptr;
  const aotrun::Status st = ctx_->end_capture(s, &exec);
  EXPECT_EQ(st.code, Code::CaptureInvalidated) << st.message;
  EXPECT_EQ(exec, nullptr);
  EXPECT_FALSE(ctx_->is_capturing(s));
  host_->event_destroy(host_->host_ctx, ev);
  ctx_->destroy_stream(s);
}

// The table tests/core/captured_event_test.cpp holds the CPU emulation to:
// an event recorded in a capture fails a query in every mode and on every
// thread, invalidating the capture, and is invalid after it until recorded
// again outside a capture.
TEST_F(CudaBackend, EventRecordedInACaptureBehavesAsTheCpuEmulationAssumes) {
  const cudaStreamCaptureMode modes[] = {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                         cudaStreamCaptureModeRelaxed};
  for (cudaStreamCaptureMode mode : modes) {
    for (bool other_thread : {false, true}) {
      SCOPED_TRACE(testing::Message() << "mode " << mode << (other_thread ? ", other thread" : ", same thread"));
      auto s = static_cast<cudaStream_t>(ctx_->new_stream());
      aotrun_pkg_event ev = nullptr;
      ASSERT_EQ(host_->event_create(host_->host_ctx, &ev), AOTRUN_PKG_OK);
      ASSERT_EQ(cudaStreamBeginCapture(s, mode), cudaSuccess);
      ASSERT_EQ(host_->event_record(host_->host_ctx, ev, s), AOTRUN_PKG_OK);
      int32_t rc = -1;
      if (other_thread) {
        std::thread t([&] { rc = host_->event_query(host_->host_ctx, ev); });
        t.join();
      } else {
        rc = host_->event_query(host_->host_ctx, ev);
      }
      EXPECT_EQ(rc, AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED) << aotrun::cuda::last_failure();
      cudaGraph_t g = nullptr;
      EXPECT_EQ(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
      (void)cudaGetLastError();
      if (g != nullptr) (void)cudaGraphDestroy(g);
      EXPECT_EQ(host_->event_query(host_->host_ctx, ev), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(host_->event_synchronize(host_->host_ctx, ev), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
      ASSERT_EQ(host_->event_record(host_->host_ctx, ev, nullptr), AOTRUN_PKG_OK);
      EXPECT_EQ(host_->event_synchronize(host_->host_ctx, ev), AOTRUN_PKG_OK);
      EXPECT_EQ(host_->event_query(host_->host_ctx, ev), AOTRUN_PKG_OK);
      host_->event_destroy(host_->host_ctx, ev);
      ctx_->destroy_stream(s);
    }
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaBackend, CapturedHostWorkRunsOnEveryReplayAndIsReleasedWithTheGraph) {
  void* s = ctx_->new_stream();
  Counter c;
  ASSERT_TRUE(ctx_->begin_capture(s).ok());
  EXPECT_EQ(ctx_->begin_capture(s).code, Code::InvalidArgument);
  ASSERT_EQ(launch(host_, s, &c), AOTRUN_PKG_OK);
  void* exec = nullptr;
  ASSERT_TRUE(ctx_->end_capture(s, &exec).ok());
  EXPECT_EQ(c.runs.load(), 0);  // recorded, not executed
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ctx_->launch_graph(exec, s).ok());
  ASSERT_TRUE(ctx_->synchronize(s).ok());
  EXPECT_EQ(c.runs.load(), 3);
  EXPECT_EQ(c.destroyed.load(), 0);
  ctx_->destroy_graph(exec);
  EXPECT_EQ(c.destroyed.load(), 1);
  EXPECT_EQ(ctx_->end_capture(s, &exec).code, Code::InvalidArgument);
  ctx_->destroy_stream(s);
}

TEST_F(CudaBackend, ThreadLocalCaptureEndsOnlyOnItsOwnThread) {
  void* s = ctx_->new_stream();
  ASSERT_TRUE(ctx_->begin_capture(s).ok());
  aotrun::Status other;
  std::thread([&] {
    void* exec = nullptr;
    other = ctx_->end_capture(s, &exec);
    // Thread-local mode: another thread's synchronize is not prohibited.
    EXPECT_TRUE(ctx_->synchronize(nullptr).ok());
  }).join();
  EXPECT_EQ(other.code, Code::InvalidArgument) << other.message;
  EXPECT_TRUE(ctx_->is_capturing(s));
  void* exec = nullptr;
  const aotrun::Status st = ctx_->end_capture(s, &exec);
  ASSERT_TRUE(st.ok()) << st.message;
  ctx_->destroy_graph(exec);
  ctx_->destroy_stream(s);
}

TEST_F(CudaBackend, FreeingOutsideMemoryInsideACaptureIsRefused) {
  void* s = ctx_->new_stream();
  void* outside = nullptr;
  ASSERT_EQ(host_->alloc(host_->host_ctx, 512, s, &outside), AOTRUN_PKG_OK);
  ASSERT_TRUE(ctx_->synchronize(s).ok());
  ASSERT_TRUE(ctx_->begin_capture(s).ok());
  EXPECT_EQ(host_->free(host_->host_ctx, outside, s), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  void* inside = nullptr;
  ASSERT_EQ(host_->alloc(host_->host_ctx, 512, s, &inside), AOTRUN_PKG_OK);
  EXPECT_EQ(host_->free(host_->host_ctx, inside, s), AOTRUN_PKG_OK);
  void* exec = nullptr;
  const aotrun::Status st = ctx_->end_capture(s, &exec);
  ASSERT_TRUE(st.ok()) << st.message;
  ASSERT_TRUE(ctx_->launch_graph(exec, s).ok());
  ASSERT_TRUE(ctx_->launch_graph(exec, s).ok());
  EXPECT_TRUE(ctx_->synchronize(s).ok());
  ctx_->destroy_graph(exec);
  EXPECT_EQ(host_->free(host_->host_ctx, outside, s), AOTRUN_PKG_OK);
  EXPECT_TRUE(ctx_->synchronize(s).ok());
  ctx_->destroy_stream(s);
}

// --- the cuda_mlp package on a Context, through its package ABI -------------------

namespace {

struct PackageLib {
  void* handle = nullptr;
  aotrun_pkg_get_last_error_fn last_error = nullptr;
  aotrun_pkg_container_create_fn create = nullptr;
  aotrun_pkg_container_destroy_fn destroy = nullptr;
  aotrun_pkg_container_run_fn run = nullptr;
  aotrun_pkg_container_run_single_threaded_fn run_single = nullptr;
  PackageLib() {
    handle = dlopen((pkg_path("cuda_mlp") + "/libcuda_mlp.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      ADD_FAILURE() << dlerror();
      return;
    }
    last_error = reinterpret_cast<aotrun_pkg_get_last_error_fn>(dlsym(handle, AOTRUN_PKG_SYM_GET_LAST_ERROR));
    create = reinterpret_cast<aotrun_pkg_container_create_fn>(dlsym(handle, AOTRUN_PKG_SYM_CONTAINER_CREATE));
    destroy = reinterpret_cast<aotrun_pkg_container_destroy_fn>(dlsym(handle, AOTRUN_PKG_SYM_CONTAINER_DESTROY));
    run = reinterpret_cast<aotrun_pkg_container_run_fn>(dlsym(handle, AOTRUN_PKG_SYM_RUN));
    run_single = reinterpret_cast<aotrun_pkg_container_run_single_threaded_fn>(
        dlsym(handle, AOTRUN_PKG_SYM_RUN_SINGLE_THREADED));
  }
  ~PackageLib() {
    if (handle != nullptr) dlclose(handle);
  }
};

class CudaMlpOnContext : public testing::Test {
 protected:
  void SetUp() override {
    AOTRUN_REQUIRE_CUDA_DEVICE();
    lib_ = std::make_unique<PackageLib>();
    ASSERT_NE(lib_->create, nullptr);
    weights_ = std::make_unique<aotrun::test::Safetensors>(
        aotrun::test::Safetensors::load(pkg_path("cuda_mlp") + "/weights.safetensors"));
    ctx_ = Context::create(0, "cuda_mlp", lib_->last_error);
    aotrun_pkg_create_args args{};
    args.struct_size = sizeof(args);
    args.num_models = 1;
    args.device = DLDevice{kDLCUDA, 0};
    args.host = ctx_->host();
    args.constants = weights_->constants().data();
    args.num_constants = weights_->constants().size();
    ASSERT_EQ(lib_->create(&container_, &args), AOTRUN_PKG_OK) << lib_->last_error();
  }
  void TearDown() override {
    if (ctx_) (void)ctx_->synchronize(nullptr);
    if (container_ != nullptr) lib_->destroy(container_);
    ctx_.reset();
  }
  aotrun_pkg_run_args args(DeviceTensor& x, DeviceTensor& y, void* stream) {
    aotrun_pkg_run_args a{};
    a.struct_size = sizeof(a);
    a.inputs = x.dl();
    a.num_inputs = 1;
    a.outputs = y.dl();
    a.num_outputs = 1;
    a.stream = stream;
    return a;
  }

  std::unique_ptr<PackageLib> lib_;
  std::unique_ptr<aotrun::test::Safetensors> weights_;
  std::unique_ptr<Context> ctx_;
  aotrun_pkg_container* container_ = nullptr;
};

}  // namespace

// What the package ABI's single-threaded entry point exists for, on real CUDA: the
// threaded run's second call under capture must query its instance's event.
// The first call recorded that event inside the capture, so CUDA answers
// cudaErrorCapturedEvent (907), not 900; both are CAPTURE_UNSUPPORTED.
TEST_F(CudaMlpOnContext, ThreadedRunUnderCaptureFailsAsCaptureUnsupportedOnTheSecondCall) {
  DeviceTensor x({2, 256}), y({2, 64});
  x.upload(aotrun::test::mlp_reference_input(2, 3));
  void* s = ctx_->new_stream();
  ASSERT_TRUE(ctx_->begin_capture(s).ok());
  aotrun_pkg_run_args a = args(x, y, s);
  EXPECT_EQ(lib_->run(container_, &a), AOTRUN_PKG_OK) << lib_->last_error();
  EXPECT_EQ(lib_->run(container_, &a), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED) << lib_->last_error();
  EXPECT_NE(std::string(lib_->last_error()).find("capture"), std::string::npos) << lib_->last_error();
  void* exec = nullptr;
  EXPECT_EQ(ctx_->end_capture(s, &exec).code, Code::CaptureInvalidated);
  // The instance's event is invalid after the capture; the package reclaims
  // the instance and eager runs go on.
  EXPECT_EQ(lib_->run(container_, &a), AOTRUN_PKG_OK) << lib_->last_error();
  EXPECT_EQ(lib_->run(container_, &a), AOTRUN_PKG_OK) << lib_->last_error();
  EXPECT_TRUE(ctx_->synchronize(s).ok());
  ctx_->destroy_stream(s);
}

TEST_F(CudaMlpOnContext, SingleThreadedCaptureReplaysBitEqualToEager) {
  const aotrun::test::MlpReference ref(*weights_);
  constexpr int64_t kBatch = 5;
  const std::vector<float> x1 = aotrun::test::mlp_reference_input(kBatch, 1);
  const std::vector<float> x2 = aotrun::test::mlp_reference_input(kBatch, 2);
  DeviceTensor x({kBatch, 256}), y({kBatch, 64});
  void* s = ctx_->new_stream();

  // Eager, for both inputs.
  aotrun_pkg_run_args a = args(x, y, s);
  x.upload(x1);
  ASSERT_EQ(lib_->run_single(container_, &a), AOTRUN_PKG_OK) << lib_->last_error();
  ASSERT_TRUE(ctx_->synchronize(s).ok());
  const std::vector<float> eager1 = y.download();
  x.upload(x2);
  ASSERT_EQ(lib_->run_single(container_, &a), AOTRUN_PKG_OK) << lib_->last_error();
  ASSERT_TRUE(ctx_->synchronize(s).ok());
  const std::vector<float> eager2 = y.download();
  EXPECT_LE(worst_error(eager1, ref.forward(x1, kBatch)), 1e-3);

  // Captured once, replayed with new data in the same buffers.
  ASSERT_TRUE(ctx_->begin_capture(s).ok());
  ASSERT_EQ(lib_->run_single(container_, &a), AOTRUN_PKG_OK) << lib_->last_error();
  void* exec = nullptr;
  const aotrun::Status st = ctx_->end_capture(s, &exec);
  ASSERT_TRUE(st.ok()) << st.message;
  for (const auto* pair : {&x1, &x2, &x1}) {
    x.upload(*pair);
    y.poison();
    ASSERT_TRUE(ctx_->launch_graph(exec, s).ok());
    ASSERT_TRUE(ctx_->synchronize(s).ok());
    const std::vector<float> got = y.download();
    const std::vector<float>& want = pair == &x1 ? eager1 : eager2;
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  }
  ctx_->destroy_graph(exec);
  ctx_->destroy_stream(s);
}
