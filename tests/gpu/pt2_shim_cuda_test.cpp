// Real CUDA AOTInductor models (tests/gpu/pt2/export_cuda_fixtures.py,
// exported on the GPU machine by tests/gpu/pt2/run.sh) on aotrun's shim and
// its CUDA layer, with no libtorch: the model library's libtorch*.so needs are
// met by aotrun's stand-ins (LD_LIBRARY_PATH, set by run.sh). Each fixture
// runs through AOTInductor's container C interface in its threaded and
// single-threaded runs and captured into a CUDA graph whose allocations are
// graph memory nodes from the shim's pool, replayed between foreign
// allocations and a pool trim; outputs are compared with eager PyTorch's.
//
//   AOTRUN_CUDA_PT2_DIR  the fixtures: NAME/ (the extracted model library and
//                        its .cubin files), NAME.s<k>.in<i>.npy, NAME.s<k>.out<j>.npy
// Skips without a CUDA device or without that directory.
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "aotrun_shim/cuda.h"
#include "aotrun_shim/shim.h"
#include "pt2_cuda_cases.hpp"

namespace {

using aotrun_gpu::cuda_pt2_dir;
using aotrun_gpu::load_cases;
using aotrun_gpu::Pt2Case;

// AOTInductor's container interface (aoti_runtime/interface.h), as the
// model library exports it.
using Handle = void*;
using CreateWithDevice = int (*)(Handle*, size_t, const char*, const char*);
using Delete = int (*)(Handle);
using RunFn = int (*)(Handle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);

bool has_device(std::string* why) {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    *why = std::string("no CUDA device: ") + (rc != cudaSuccess ? cudaGetErrorString(rc) : "none found");
    return false;
  }
  return true;
}

std::string find_so(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  std::string found;
  if (d == nullptr) return found;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0) found = dir + "/" + n;
  }
  closedir(d);
  return found;
}

int32_t dtype_of(const Npy& a) {
  if (a.descr == "<f4") return 6;
  if (a.descr == "<i8") return 4;
  throw std::runtime_error("unexpected npy dtype " + a.descr);
}

std::vector<int64_t> row_major(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = acc;
    acc *= s[d];
  }
  return st;
}

// A model library loaded on the shim, with its container.
struct Model {
  void* lib = nullptr;
  Handle h = nullptr;
  Delete del = nullptr;
  RunFn run = nullptr, run_st = nullptr;
  ~Model() {
    if (h != nullptr) del(h);
    // The library stays mapped: CUDA modules it loaded live as long as the context.
  }
};

// Device buffers for one case's inputs, and handles over them.
struct DeviceInputs {
  std::vector<void*> buf;
  std::vector<const Npy*> host;
  explicit DeviceInputs(const Pt2Case& c) {
    for (const Npy& a : c.in) {
      void* p = nullptr;
      EXPECT_EQ(cudaMalloc(&p, a.data.size() + 1), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(p, a.data.data(), a.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
      buf.push_back(p);
      host.push_back(&a);
    }
  }
  ~DeviceInputs() {
    for (void* p : buf) cudaFree(p);
  }
  std::vector<AtenTensorHandle> handles() const {
    std::vector<AtenTensorHandle> hs;
    for (size_t i = 0; i < buf.size(); ++i) {
      const Npy& a = *host[i];
      const std::vector<int64_t> st = row_major(a.shape);
      AtenTensorHandle h = nullptr;
      EXPECT_EQ(aoti_torch_create_tensor_from_blob(buf[i], static_cast<int64_t>(a.shape.size()), a.shape.data(),
                                                   st.data(), 0, dtype_of(a), 1, 0, &h),
                AOTI_TORCH_SUCCESS)
          << aotrun_shim_last_error();
      hs.push_back(h);
    }
    return hs;
  }
};

// Copies output handle `h` into host memory (through the shim's copy_, which
// follows the output's strides) and compares it with eager's `want`.
void expect_close(AtenTensorHandle h, const Npy& want, const std::string& what) {
  int64_t* sizes = nullptr;
  int64_t dim = 0;
  ASSERT_EQ(aoti_torch_get_dim(h, &dim), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_get_sizes(h, &sizes), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(std::vector<int64_t>(sizes, sizes + dim), want.shape) << what;
  std::vector<float> got(static_cast<size_t>(want.numel()));
  const std::vector<int64_t> st = row_major(want.shape);
  AtenTensorHandle host = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(got.data(), dim, want.shape.data(), st.data(), 0, 6, 0, -1, &host),
            AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_copy_(host, h, 0), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  aoti_torch_delete_tensor_object(host);
  const float* ref = reinterpret_cast<const float*>(want.data.data());
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]), tol = 2e-3 + 2e-3 * std::fabs(ref[i]);
    if (!(err <= tol)) ++bad;
    if (err > worst || std::isnan(got[i])) worst = std::isnan(got[i]) ? INFINITY : err;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements differ from eager, worst " << worst;
}

class CudaPt2 : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!has_device(&why)) GTEST_SKIP() << why;
    dir_ = cuda_pt2_dir();
    cases_ = load_cases(GetParam());
    if (cases_.empty()) {
      GTEST_SKIP() << "no CUDA .pt2 fixtures (AOTRUN_CUDA_PT2_DIR; tests/gpu/pt2/run.sh exports them on a GPU machine)";
    }
    const std::string mdir = dir_ + "/" + GetParam();
    const std::string so = find_so(mdir);
    ASSERT_FALSE(so.empty()) << "no model library in " << mdir;
    m_.lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(m_.lib, nullptr) << dlerror();
    auto create = reinterpret_cast<CreateWithDevice>(dlsym(m_.lib, "AOTInductorModelContainerCreateWithDevice"));
    m_.del = reinterpret_cast<Delete>(dlsym(m_.lib, "AOTInductorModelContainerDelete"));
    m_.run = reinterpret_cast<RunFn>(dlsym(m_.lib, "AOTInductorModelContainerRun"));
    m_.run_st = reinterpret_cast<RunFn>(dlsym(m_.lib, "AOTInductorModelContainerRunSingleThreaded"));
    ASSERT_TRUE(create && m_.del && m_.run && m_.run_st);
    ASSERT_EQ(create(&m_.h, 1, "cuda", mdir.c_str()), 0) << aotrun_shim_last_error();
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // One eager run of case k; outputs compared.
  void run_eager(RunFn fn, size_t k, const std::string& mode) {
    const Pt2Case& c = cases_[k];
    DeviceInputs in(c);
    std::vector<AtenTensorHandle> hs = in.handles(), out(c.out.size(), nullptr);
    ASSERT_EQ(fn(m_.h, hs.data(), hs.size(), out.data(), out.size(), stream_, nullptr), 0) << aotrun_shim_last_error();
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    for (size_t j = 0; j < out.size(); ++j) {
      expect_close(out[j], c.out[j],
                   GetParam() + " " + mode + " case " + std::to_string(k) + " output " + std::to_string(j));
      aoti_torch_delete_tensor_object(out[j]);
    }
  }

  std::string dir_;
  std::vector<Pt2Case> cases_;
  Model m_;
  cudaStream_t stream_ = nullptr;
};

TEST_P(CudaPt2, ThreadedRunMatchesEager) {
  for (size_t k = 0; k < cases_.size(); ++k) run_eager(m_.run, k, "threaded");
}

TEST_P(CudaPt2, SingleThreadedRunMatchesEager) {
  for (size_t k = 0; k < cases_.size(); ++k) run_eager(m_.run_st, k, "single_threaded");
}

// Capture per case: the model's intermediates and outputs are allocation
// nodes of the graph (the shim's pool, on the capturing stream); the outputs
// are copied into static buffers and released inside the capture (free
// nodes). Replays with new input bytes, between which other allocations of
// the same pool write garbage and the pool is trimmed, still match eager.
TEST_P(CudaPt2, GraphReplaysMatchEagerAmidOtherAllocations) {
  for (size_t k = 0; k < cases_.size(); ++k) {
    const Pt2Case& c = cases_[k];
    run_eager(m_.run_st, k, "warm-up");  // cuBLAS handle and module loads happen outside the capture
    DeviceInputs in(c);
    std::vector<void*> outs;
    std::vector<AtenTensorHandle> out_views;
    for (const Npy& o : c.out) {
      void* p = nullptr;
      ASSERT_EQ(cudaMalloc(&p, o.data.size()), cudaSuccess);
      ASSERT_EQ(cudaMemset(p, 0, o.data.size()), cudaSuccess);
      const std::vector<int64_t> st = row_major(o.shape);
      AtenTensorHandle v = nullptr;
      ASSERT_EQ(aoti_torch_create_tensor_from_blob(p, static_cast<int64_t>(o.shape.size()), o.shape.data(), st.data(),
                                                   0, 6, 1, 0, &v),
                AOTI_TORCH_SUCCESS);
      outs.push_back(p);
      out_views.push_back(v);
    }
    CUDAStreamGuardHandle guard = nullptr;
    ASSERT_EQ(aoti_torch_create_cuda_stream_guard(stream_, 0, &guard), AOTI_TORCH_SUCCESS);
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    std::vector<AtenTensorHandle> hs = in.handles(), out(c.out.size(), nullptr);
    const int rc = m_.run_st(m_.h, hs.data(), hs.size(), out.data(), out.size(), stream_, nullptr);
    bool copied = rc == 0;
    for (size_t j = 0; copied && j < out.size(); ++j) {
      copied = aoti_torch_copy_(out_views[j], out[j], 0) == AOTI_TORCH_SUCCESS;
      aoti_torch_delete_tensor_object(out[j]);  // a free node: the graph owns its memory
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
    aoti_torch_delete_cuda_stream_guard(guard);
    ASSERT_EQ(rc, 0) << "run under capture: " << aotrun_shim_last_error();
    ASSERT_TRUE(copied) << aotrun_shim_last_error();
    ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
    size_t nodes = 0;
    ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
    std::vector<cudaGraphNode_t> list(nodes);
    ASSERT_EQ(cudaGraphGetNodes(graph, list.data(), &nodes), cudaSuccess);
    int allocs = 0, frees = 0, kernels = 0;
    for (cudaGraphNode_t n : list) {
      cudaGraphNodeType t;
      cudaGraphNodeGetType(n, &t);
      allocs += t == cudaGraphNodeTypeMemAlloc;
      frees += t == cudaGraphNodeTypeMemFree;
      kernels += t == cudaGraphNodeTypeKernel;
    }
    std::printf("[ graph    ] %s case %zu: %zu nodes, %d kernels, %d allocations, %d frees\n", GetParam().c_str(), k,
                nodes, kernels, allocs, frees);
    EXPECT_GT(allocs, 0) << "the model's buffers were not allocated by the graph";
    EXPECT_EQ(allocs, frees) << "every allocation of the capture is freed inside it";
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
    for (int replay = 0; replay < 3; ++replay) {
      // Foreign allocations of the same pool, filled with garbage, and a trim.
      CUDAStreamGuardHandle g2 = nullptr;
      ASSERT_EQ(aoti_torch_create_cuda_stream_guard(stream_, 0, &g2), AOTI_TORCH_SUCCESS);
      std::vector<AtenTensorHandle> junk;
      for (int i = 0; i < 8; ++i) {
        const int64_t n = 1 << (12 + i), one = 1;
        AtenTensorHandle t = nullptr;
        ASSERT_EQ(aoti_torch_empty_strided(1, &n, &one, 6, 1, 0, &t), AOTI_TORCH_SUCCESS);
        void* p = nullptr;
        aoti_torch_get_data_ptr(t, &p);
        cudaMemsetAsync(p, 0x7f, static_cast<size_t>(n) * 4, stream_);
        junk.push_back(t);
      }
      for (AtenTensorHandle t : junk) aoti_torch_delete_tensor_object(t);
      aoti_torch_delete_cuda_stream_guard(g2);
      ASSERT_EQ(aotrun_shim_cuda_trim_pool(0), AOTI_TORCH_SUCCESS);
      for (size_t j = 0; j < outs.size(); ++j) cudaMemsetAsync(outs[j], 0xff, c.out[j].data.size(), stream_);
      ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      for (size_t j = 0; j < outs.size(); ++j) {
        expect_close(out_views[j], c.out[j],
                     GetParam() + " graph replay " + std::to_string(replay) + " case " + std::to_string(k));
      }
    }
    // Timing (not asserted): eager single-threaded run vs replay, this case.
    const char* env_iters = std::getenv("AOTRUN_PT2_TIMING_ITERS");
    const int iters = env_iters != nullptr ? std::atoi(env_iters) : 200;
    auto time_it = [&](auto&& body) {
      body();
      cudaStreamSynchronize(stream_);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) body();
      cudaStreamSynchronize(stream_);
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    };
    const double eager_us = time_it([&] {
      std::vector<AtenTensorHandle> h2 = in.handles(), o2(c.out.size(), nullptr);
      m_.run_st(m_.h, h2.data(), h2.size(), o2.data(), o2.size(), stream_, nullptr);
      for (AtenTensorHandle o : o2) aoti_torch_delete_tensor_object(o);
    });
    const double graph_us = time_it([&] { cudaGraphLaunch(exec, stream_); });
    uint64_t reserved = 0, used = 0;
    aotrun_shim_cuda_pool_bytes(0, &reserved, &used);
    std::printf(
        "[ timing   ] %s case %zu: single_threaded %.1f us, graph replay %.1f us (%.2fx); pool %llu bytes "
        "reserved, %llu used\n",
        GetParam().c_str(), k, eager_us, graph_us, eager_us / graph_us, (unsigned long long)reserved,
        (unsigned long long)used);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    for (AtenTensorHandle v : out_views) aoti_torch_delete_tensor_object(v);
    for (void* p : outs) cudaFree(p);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaPt2, ::testing::Values("mlp", "block", "block_math", "llama"));

// A pool of one's own (aotrun_shim_cuda_pool_*): while in use on a thread,
// that thread's CUDA tensors come from it and the shared pool is untouched;
// other threads still use the shared pool; destroying it with a tensor
// still alive leaves that tensor usable until released.
TEST(CudaShimPools, ThreadsOwnPoolServesItsTensors) {
  std::string why;
  if (!has_device(&why)) GTEST_SKIP() << why;
  ASSERT_EQ(aotrun_shim_cuda_trim_pool(0), AOTI_TORCH_SUCCESS);
  auto tensor = [](int64_t n) {
    const int64_t one = 1;
    AtenTensorHandle t = nullptr;
    EXPECT_EQ(aoti_torch_empty_strided(1, &n, &one, 6, 1, 0, &t), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
    return t;
  };
  uint64_t shared_reserved = 0, shared_used = 0, own_reserved = 0, own_used = 0;
  ASSERT_EQ(aotrun_shim_cuda_pool_bytes(0, &shared_reserved, &shared_used), AOTI_TORCH_SUCCESS);
  const uint64_t shared_before = shared_reserved;
  aotrun_shim_cuda_pool* pool = nullptr;
  ASSERT_EQ(aotrun_shim_cuda_pool_create(0, &pool), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  aotrun_shim_cuda_pool* previous = reinterpret_cast<aotrun_shim_cuda_pool*>(1);
  ASSERT_EQ(aotrun_shim_cuda_pool_use(pool, &previous), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(previous, nullptr);
  AtenTensorHandle kept = tensor(1 << 20);  // 4 MiB
  ASSERT_EQ(aotrun_shim_cuda_pool_get_bytes(pool, &own_reserved, &own_used), AOTI_TORCH_SUCCESS);
  EXPECT_GE(own_used, 4u << 20);
  // Another thread: the shared pool.
  std::thread([&] { aoti_torch_delete_tensor_object(tensor(1 << 18)); }).join();
  ASSERT_EQ(aotrun_shim_cuda_pool_use(nullptr, &previous), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(previous, pool);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(aotrun_shim_cuda_pool_bytes(0, &shared_reserved, &shared_used), AOTI_TORCH_SUCCESS);
  EXPECT_GT(shared_reserved, shared_before) << "the other thread's tensor";
  EXPECT_EQ(shared_used, 0u);
  // Destroyed with `kept` alive: still written and read, then released.
  ASSERT_EQ(aotrun_shim_cuda_pool_destroy(pool), AOTI_TORCH_SUCCESS) << aotrun_shim_last_error();
  void* p = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(kept, &p), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(cudaMemset(p, 0, 4u << 20), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(aoti_torch_delete_tensor_object(kept), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(aotrun_shim_cuda_pool_destroy(nullptr), AOTI_TORCH_SUCCESS);
}

// The conv net calls PyTorch's convolution fallback (cuDNN), which the CUDA
// layer does not provide: its library must fail to load naming the function
// (aotrun refuses it at open, before any dlopen, from the same fact).
TEST(CudaPt2Refusals, ConvolutionFallbackIsNotProvided) {
  std::string why;
  if (!has_device(&why)) GTEST_SKIP() << why;
  const std::string dir = cuda_pt2_dir() + "/convnet";
  if (cuda_pt2_dir().empty() || find_so(dir).empty()) GTEST_SKIP() << "no convnet fixture";
  void* lib = dlopen(find_so(dir).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) dlclose(lib);
  ASSERT_EQ(lib, nullptr);
  EXPECT_NE(std::string(dlerror()).find("aoti_torch_cuda_convolution"), std::string::npos);
}

}  // namespace
