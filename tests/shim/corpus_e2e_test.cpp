// End to end: every corpus model library (compat/aoti/fixtures/torch-*/,
// every release and input set) runs on aotrun's shim with no libtorch: the
// stand-ins named like libtorch's libraries are loaded by path (RTLD_LOCAL),
// the model library is dlopen'ed and its container driven through its own C
// interface, and the outputs are compared with the eager references beside
// the fixtures. The shim is not linked into this program: the model finds it
// only through the stand-ins.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model_so.hpp"
#include "npy.hpp"
#include "shim_api.hpp"

namespace fs = std::filesystem;

namespace {

// The model library's C interface (AOTInductor's container entry points).
struct ContainerOpaque;
using ContainerHandle = ContainerOpaque*;
using CreateWithDeviceFn = int32_t (*)(ContainerHandle*, size_t, const char*, const char*);
using DeleteFn = int32_t (*)(ContainerHandle);
using GetNumFn = int32_t (*)(ContainerHandle, size_t*);
using RunFn = int32_t (*)(ContainerHandle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);

struct Provider {
  void* shim = nullptr;  // libaotrun_shim.so.1, as loaded through the stand-ins
  ShimApi api;
  const char* (*last_error)() = nullptr;
  std::string error;
};

// Loads the stand-ins once per process, by path, RTLD_LOCAL.
Provider& provider() {
  static Provider* p = [] {
    auto* pr = new Provider;
    for (const char* name : {"libc10.so", "libtorch_cpu.so", "libtorch.so"}) {
      const std::string path = std::string(AOTRUN_SHIM_STANDIN_DIR) + "/" + name;
      if (::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
        pr->error = "cannot load " + path + ": " + ::dlerror();
        return pr;
      }
    }
    pr->shim = ::dlopen("libaotrun_shim.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (pr->shim == nullptr) {
      pr->error = "libaotrun_shim.so.1 was not loaded by the stand-ins";
      return pr;
    }
    const std::string missing = pr->api.resolve(pr->shim);
    if (!missing.empty()) pr->error = "the shim lacks " + missing;
    pr->last_error = reinterpret_cast<const char* (*)()>(::dlsym(pr->shim, "aotrun_shim_last_error"));
    return pr;
  }();
  return *p;
}

struct Case {
  std::string release, model, set;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.release << "/" << c.model << "/" << c.set; }

std::vector<Case> corpus_cases() {
  std::vector<Case> out;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(AOTRUN_PT2_FIXTURES)) {
    if (e.is_directory() && e.path().filename().string().rfind("torch-", 0) == 0) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    std::ifstream f(d / "manifest.json");
    if (!f) continue;
    const auto m = nlohmann::json::parse(f);
    for (const auto& [model, info] : m["models"].items()) {
      for (const auto& [set, _] : info["sets"].items()) {
        out.push_back({d.filename().string().substr(6), model, set});
      }
    }
  }
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& i) {
  std::string s = "torch_" + i.param.release + "_" + i.param.model + "_" + i.param.set;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

int32_t dtype_of(const ShimApi& a, const std::string& descr) {
  if (descr == "<f4") return a.aoti_torch_dtype_float32();
  if (descr == "<i8") return a.aoti_torch_dtype_int64();
  if (descr == "|b1") return a.aoti_torch_dtype_bool();
  throw std::runtime_error("unsupported npy dtype " + descr);
}

// Compares a shim output (any strides) with a row-major reference; returns "" or why not.
std::string compare(const ShimApi& a, AtenTensorHandle out, const Npy& ref, double rtol, double atol) {
  int64_t dim = 0, *sizes = nullptr, *strides = nullptr;
  int32_t dtype = 0;
  void* data = nullptr;
  a.aoti_torch_get_dim(out, &dim);
  a.aoti_torch_get_sizes(out, &sizes);
  a.aoti_torch_get_strides(out, &strides);
  a.aoti_torch_get_dtype(out, &dtype);
  a.aoti_torch_get_data_ptr(out, &data);
  if (static_cast<size_t>(dim) != ref.shape.size()) return "rank differs";
  for (int64_t d = 0; d < dim; ++d) {
    if (sizes[d] != ref.shape[d]) return "shape differs at dim " + std::to_string(d);
  }
  if (dtype != dtype_of(a, ref.descr)) return "dtype differs";
  const int64_t n = ref.numel();
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t d = dim - 1; d >= 0; --d) {
      off += (rem % sizes[d]) * strides[d];
      rem /= sizes[d];
    }
    if (ref.descr == "<f4") {
      float got, want;
      std::memcpy(&got, static_cast<char*>(data) + off * 4, 4);
      std::memcpy(&want, ref.data.data() + i * 4, 4);
      const double diff = std::fabs(static_cast<double>(got) - want);
      if (!(diff <= atol + rtol * std::fabs(want))) {
        return "element " + std::to_string(i) + ": " + std::to_string(got) + " vs " + std::to_string(want);
      }
      worst = std::max(worst, diff);
    } else {
      const size_t item = ref.descr == "<i8" ? 8 : 1;
      if (std::memcmp(static_cast<char*>(data) + off * static_cast<int64_t>(item), ref.data.data() + i * item, item) !=
          0) {
        return "element " + std::to_string(i) + " differs";
      }
    }
  }
  return "";
}

// Loads the model library of `c` (it stays loaded), runs the input set and
// compares the outputs with the eager references.
void run_case(const Case& c) {
  Provider& p = provider();
  ASSERT_EQ(p.error, "");
  const fs::path dir = fs::path(AOTRUN_PT2_FIXTURES) / ("torch-" + c.release);
  const auto manifest = nlohmann::json::parse(std::ifstream(dir / "manifest.json"));
  const auto& info = manifest["models"][c.model];
  const auto& set = info["sets"][c.set];
  const bool channels_last = info.value("memory_format", "") == "channels_last";

  char tmpl[] = "/tmp/aotrun-shim-e2e-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path tmp = tmpl;
  const std::string so = extract_model_so(dir / info["archive"].get<std::string>(), tmp);
  void* model = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  fs::remove_all(tmp);  // the mapping stays valid
  ASSERT_NE(model, nullptr) << ::dlerror();

  // The model's shim references resolve to aotrun's shim, and no libtorch is around.
  for (const char* fn : {"aoti_torch_empty_strided", "aoti_torch_delete_tensor_object", "aoti_torch_cpu_addmm_out"}) {
    EXPECT_EQ(::dlsym(model, fn), ::dlsym(p.shim, fn)) << fn;
  }
  Dl_info where{};
  ASSERT_NE(::dladdr(::dlsym(model, "aoti_torch_empty_strided"), &where), 0);
  EXPECT_NE(std::string(where.dli_fname).find("libaotrun_shim.so"), std::string::npos) << where.dli_fname;

  auto create = reinterpret_cast<CreateWithDeviceFn>(::dlsym(model, "AOTInductorModelContainerCreateWithDevice"));
  auto del = reinterpret_cast<DeleteFn>(::dlsym(model, "AOTInductorModelContainerDelete"));
  auto num_outputs = reinterpret_cast<GetNumFn>(::dlsym(model, "AOTInductorModelContainerGetNumOutputs"));
  auto run = reinterpret_cast<RunFn>(::dlsym(model, "AOTInductorModelContainerRun"));
  ASSERT_TRUE(create && del && num_outputs && run);

  ContainerHandle container = nullptr;
  ASSERT_EQ(create(&container, 1, "cpu", nullptr), 0) << p.last_error();
  size_t nout = 0;
  ASSERT_EQ(num_outputs(container, &nout), 0);
  ASSERT_EQ(nout, set["outputs"].size());

  const ShimApi& a = p.api;
  std::vector<Npy> inputs;
  std::vector<AtenTensorHandle> in_handles;
  for (const auto& in : set["inputs"]) inputs.push_back(read_npy((dir / in["file"].get<std::string>()).string()));
  for (auto& in : inputs) {
    const int64_t nd = static_cast<int64_t>(in.shape.size());
    std::vector<int64_t> strides(nd);
    int64_t acc = 1;
    for (int64_t d = nd - 1; d >= 0; --d) strides[d] = acc, acc *= in.shape[d];
    const int32_t dt = dtype_of(a, in.descr);
    AtenTensorHandle h = nullptr;
    if (channels_last && nd == 4) {
      // The model was compiled for a channels-last input: hand it one.
      const int64_t N = in.shape[0], C = in.shape[1], H = in.shape[2], W = in.shape[3];
      std::vector<char> nhwc(in.data.size());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t ch = 0; ch < C; ++ch)
          for (int64_t y = 0; y < H; ++y)
            for (int64_t x = 0; x < W; ++x)
              std::memcpy(&nhwc[(((n * H + y) * W + x) * C + ch) * 4], &in.data[(((n * C + ch) * H + y) * W + x) * 4],
                          4);
      in.data.swap(nhwc);
      strides = {H * W * C, 1, W * C, C};
    }
    ASSERT_EQ(a.aoti_torch_create_tensor_from_blob(in.data.data(), nd, in.shape.data(), strides.data(), 0, dt,
                                                   a.aoti_torch_device_type_cpu(), 0, &h),
              0);
    in_handles.push_back(h);
  }
  std::vector<AtenTensorHandle> outs(nout, nullptr);
  // The container takes over the input handles.
  ASSERT_EQ(run(container, in_handles.data(), in_handles.size(), outs.data(), nout, nullptr, nullptr), 0)
      << p.last_error();
  const double rtol = manifest["tolerance"]["float32"]["rtol"], atol = manifest["tolerance"]["float32"]["atol"];
  for (size_t i = 0; i < nout; ++i) {
    const Npy ref = read_npy((dir / set["outputs"][i]["file"].get<std::string>()).string());
    EXPECT_EQ(compare(a, outs[i], ref, rtol, atol), "") << "output " << i;
    EXPECT_EQ(a.aoti_torch_delete_tensor_object(outs[i]), 0);
  }
  EXPECT_EQ(del(container), 0);
}

class Corpus : public testing::TestWithParam<Case> {};

TEST_P(Corpus, RunsOnTheShimWithoutLibtorch) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Fixtures, Corpus, testing::ValuesIn(corpus_cases()), case_name);

// Several releases' model libraries loaded side by side in one process (ctest
// runs each case above in its own): each still gives its own results.
TEST(CorpusLoading, ReleasesSideBySideInOneProcess) {
  int n = 0;
  for (const Case& c : corpus_cases()) {
    if (c.set != "default" || (c.model != "mlp" && c.model != "attn" && c.model != "convnet")) continue;
    SCOPED_TRACE(c.release + "/" + c.model);
    run_case(c);
    ++n;
  }
  EXPECT_GE(n, 30);
}

// A request the model's own checks refuse (token ids outside the embedding
// table): aoti_torch_check throws from the model's kernel, the model's Run
// returns an error, the shim's last error names the check, and the process
// goes on (the corpus models run no OpenMP region; inside one, the check
// would terminate the process as on libtorch: docs/SHIM.md, issue #29).
TEST(CorpusBadInput, OutOfRangeTokenIdsFailTheRunAndTheProcessSurvives) {
  Provider& p = provider();
  ASSERT_EQ(p.error, "");
  int n = 0;
  for (const Case& c : corpus_cases()) {
    if (c.model != "embed" || c.set != "default") continue;
    SCOPED_TRACE(c.release);
    const fs::path dir = fs::path(AOTRUN_PT2_FIXTURES) / ("torch-" + c.release);
    char tmpl[] = "/tmp/aotrun-shim-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string so = extract_model_so(dir / "embed.pt2", tmpl);
    void* model = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    fs::remove_all(tmpl);
    ASSERT_NE(model, nullptr) << ::dlerror();
    auto create = reinterpret_cast<CreateWithDeviceFn>(::dlsym(model, "AOTInductorModelContainerCreateWithDevice"));
    auto del = reinterpret_cast<DeleteFn>(::dlsym(model, "AOTInductorModelContainerDelete"));
    auto run = reinterpret_cast<RunFn>(::dlsym(model, "AOTInductorModelContainerRun"));
    ContainerHandle container = nullptr;
    ASSERT_EQ(create(&container, 1, "cpu", nullptr), 0);
    for (int64_t bad : {int64_t{1000}, int64_t{-1000}}) {  // (-1 wraps to 99 in some releases' kernels)
      std::vector<int64_t> ids(4 * 12, 3);
      ids[17] = bad;
      const int64_t sizes[] = {4, 12}, strides[] = {12, 1};
      AtenTensorHandle in = nullptr, out = nullptr;
      ASSERT_EQ(
          p.api.aoti_torch_create_tensor_from_blob(ids.data(), 2, sizes, strides, 0, p.api.aoti_torch_dtype_int64(),
                                                   p.api.aoti_torch_device_type_cpu(), 0, &in),
          0);
      EXPECT_NE(run(container, &in, 1, &out, 1, nullptr, nullptr), 0);
      EXPECT_NE(std::string(p.last_error()).find("index out of bounds"), std::string::npos) << p.last_error();
    }
    // The same container still serves a good request.
    std::vector<int64_t> ids(4 * 12, 7);
    const int64_t sizes[] = {4, 12}, strides[] = {12, 1};
    AtenTensorHandle in = nullptr, out = nullptr;
    ASSERT_EQ(p.api.aoti_torch_create_tensor_from_blob(ids.data(), 2, sizes, strides, 0, p.api.aoti_torch_dtype_int64(),
                                                       p.api.aoti_torch_device_type_cpu(), 0, &in),
              0);
    ASSERT_EQ(run(container, &in, 1, &out, 1, nullptr, nullptr), 0);
    EXPECT_EQ(p.api.aoti_torch_delete_tensor_object(out), 0);
    EXPECT_EQ(del(container), 0);
    ++n;
  }
  EXPECT_EQ(n, 10);
}

// OpenMP and Sleef imports (GOMP_parallel, GOMP_barrier, GOMP_single_start,
// omp_get_num_threads, omp_get_thread_num, Sleef_*), as real architectures
// have and the corpus does not, resolve through the stand-ins: a model-like
// library NEEDing only libtorch_cpu.so runs a parallel region that calls
// Sleef, with shim calls around it.
TEST(CorpusLoading, OpenMPAndSleefResolveThroughTheStandIns) {
  ASSERT_EQ(provider().error, "");
  void* model = ::dlopen(AOTRUN_SHIM_FAKE_MODEL, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(model, nullptr) << ::dlerror();
  auto run = reinterpret_cast<double (*)(int64_t, int, int*)>(::dlsym(model, "fake_model_run"));
  ASSERT_NE(run, nullptr);
  for (int threads : {1, 2, 3}) {
    int seen = 0;
    const int64_t n = 1000;
    const double sum = run(n, threads, &seen);
    double want = 0;
    for (int64_t i = 0; i < n; ++i) want += std::exp(static_cast<double>(i) / n);
    EXPECT_NEAR(sum, want, 1e-3) << threads << " threads";
    EXPECT_EQ(seen, threads);
  }
  Dl_info where{};
  ASSERT_NE(::dladdr(::dlsym(model, "GOMP_parallel"), &where), 0);
  EXPECT_NE(std::string(where.dli_fname).find("libgomp"), std::string::npos) << where.dli_fname;
  ASSERT_NE(::dladdr(::dlsym(model, "Sleef_expf_u10"), &where), 0);
  EXPECT_NE(std::string(where.dli_fname).find("libsleef"), std::string::npos) << where.dli_fname;
}

// aoti_torch_check's decision (docs/SHIM.md): it throws, as libtorch does.
// On the calling thread the model catches it; inside an OpenMP parallel
// region nothing can leave, and the shim ends the process itself, naming the
// check (issue #29: the loader refuses such values before the run).
TEST(CorpusLoading, FailedCheckThrowsToTheCallerAndTerminatesInsideAParallelRegion) {
  ASSERT_EQ(provider().error, "");
  void* model = ::dlopen(AOTRUN_SHIM_FAKE_MODEL, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(model, nullptr) << ::dlerror();
  auto check = reinterpret_cast<int (*)(int)>(::dlsym(model, "fake_model_check"));
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check(0), 1);
  EXPECT_NE(std::string(provider().last_error()).find("index out of bounds: 0 <= tmp0 < 5L"), std::string::npos);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(check(1), "fatal: a model check failed inside its parallel code: index out of bounds: 0 <= tmp0 < 5L");
}

// No libtorch file is loaded in this process: every object named like a
// libtorch library is one of aotrun's stand-ins.
TEST(CorpusLoading, NoLibtorchInTheProcess) {
  ASSERT_EQ(provider().error, "");
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.find("libtorch") != std::string::npos || name.find("libc10") != std::string::npos) {
          EXPECT_NE(name.find(AOTRUN_SHIM_STANDIN_DIR), std::string::npos) << name;
        }
        return 0;
      },
      nullptr);
}

}  // namespace
