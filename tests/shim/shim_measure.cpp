// Measures one provider in a fresh process (docs/SHIM.md, "Measured"):
//   shim_measure shim|<libtorch dir> <model.pt2> <input.npy>... [--runs N]
// Prints: the time to load the provider's libraries (dlopen by path,
// RTLD_LOCAL), to dlopen the model library, to create its container; the
// median, min and p90 time of N runs (the container's Run,
// inputs made with create_tensor_from_blob each time); VmRSS/VmHWM before and
// after. Not a test: a tool for the numbers in the docs.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model_so.hpp"
#include "npy.hpp"
#include "shim_api.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string status_field(const char* name) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(name, 0) == 0) {
      const auto p = line.find_first_of("0123456789");
      return p == std::string::npos ? line : line.substr(p);
    }
  }
  return "?";
}

struct ContainerOpaque;
using ContainerHandle = ContainerOpaque*;
using CreateWithDeviceFn = int32_t (*)(ContainerHandle*, size_t, const char*, const char*);
using DeleteFn = int32_t (*)(ContainerHandle);
using GetNumFn = int32_t (*)(ContainerHandle, size_t*);
using RunFn = int32_t (*)(ContainerHandle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s shim|<libtorch dir> <model.pt2> <input.npy>... [--runs N]\n", argv[0]);
    return 2;
  }
  const std::string provider = argv[1];
  int runs = 1000;
  std::vector<std::string> inputs;
  for (int i = 3; i < argc; ++i) {
    if (std::string(argv[i]) == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      inputs.push_back(argv[i]);
    }
  }
  std::printf("provider: %s\nrss_start_kib: %s\n", provider.c_str(), status_field("VmRSS").c_str());
  const std::string dir = provider == "shim" ? std::string(AOTRUN_SHIM_STANDIN_DIR) : provider;
  auto t0 = Clock::now();
  void* api_handle = nullptr;
  for (const char* name : {"libc10.so", "libtorch_cpu.so", "libtorch.so"}) {
    void* h = ::dlopen((dir + "/" + name).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::fprintf(stderr, "dlopen %s/%s: %s\n", dir.c_str(), name, ::dlerror());
      return 1;
    }
    if (std::string(name) == "libtorch_cpu.so") api_handle = h;
  }
  std::printf("load_provider_ms: %.2f\n", ms_since(t0));
  ShimApi a;
  const std::string missing = a.resolve(api_handle);
  if (!missing.empty()) {
    std::fprintf(stderr, "missing %s\n", missing.c_str());
    return 1;
  }
  char tmpl[] = "/tmp/aotrun-shim-measure-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const std::string so = extract_model_so(argv[2], tmpl);
  t0 = Clock::now();
  void* model = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::filesystem::remove_all(tmpl);
  if (model == nullptr) {
    std::fprintf(stderr, "dlopen model: %s\n", ::dlerror());
    return 1;
  }
  std::printf("load_model_ms: %.2f\n", ms_since(t0));
  auto create = reinterpret_cast<CreateWithDeviceFn>(::dlsym(model, "AOTInductorModelContainerCreateWithDevice"));
  auto del = reinterpret_cast<DeleteFn>(::dlsym(model, "AOTInductorModelContainerDelete"));
  auto nout_fn = reinterpret_cast<GetNumFn>(::dlsym(model, "AOTInductorModelContainerGetNumOutputs"));
  auto run = reinterpret_cast<RunFn>(::dlsym(model, "AOTInductorModelContainerRun"));
  ContainerHandle c = nullptr;
  t0 = Clock::now();
  if (create(&c, 1, "cpu", nullptr) != 0) return 1;
  std::printf("create_ms: %.2f\n", ms_since(t0));
  size_t nout = 0;
  nout_fn(c, &nout);
  std::vector<Npy> in;
  for (const auto& p : inputs) in.push_back(read_npy(p));
  std::vector<double> times;
  std::vector<AtenTensorHandle> hs(in.size()), outs(nout);
  for (int r = 0; r < runs + 10; ++r) {
    const auto t = Clock::now();
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t nd = static_cast<int64_t>(in[i].shape.size());
      std::vector<int64_t> st(nd);
      int64_t acc = 1;
      for (int64_t d = nd - 1; d >= 0; --d) st[d] = acc, acc *= in[i].shape[d];
      const int32_t dt = in[i].descr == "<i8" ? a.aoti_torch_dtype_int64() : a.aoti_torch_dtype_float32();
      a.aoti_torch_create_tensor_from_blob(in[i].data.data(), nd, in[i].shape.data(), st.data(), 0, dt,
                                           a.aoti_torch_device_type_cpu(), 0, &hs[i]);
    }
    if (run(c, hs.data(), hs.size(), outs.data(), nout, nullptr, nullptr) != 0) return 1;
    for (auto o : outs) a.aoti_torch_delete_tensor_object(o);
    if (r >= 10) times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  std::sort(times.begin(), times.end());
  std::printf("runs: %d\nrun_us_median: %.2f\nrun_us_min: %.2f\nrun_us_p90: %.2f\n", runs, times[times.size() / 2],
              times.front(), times[times.size() * 9 / 10]);
  std::printf("rss_end_kib: %s\nhwm_kib: %s\n", status_field("VmRSS").c_str(), status_field("VmHWM").c_str());
  del(c);
  return 0;
}
