// Which C shim provider serves a .pt2 package, and why
// (cpp/package/pt2/provider/provider_choice.cpp), through the C API: the
// automatic choice, forcing either provider, one provider per process, a
// host that loaded libtorch itself, and the reports (aotrun_package_get_provider,
// the 1.3 slots of aotrun_get_api).
//
// The provider is per process, so every test runs its body in a fresh child
// process (fork) with the environment it sets: the suite is right whether
// ctest runs one case per process or the binary runs them all. Tests that
// need a real libtorch take it from $AOTRUN_LIBTORCH (a directory, as
// scripts/fetch-libtorch.sh prints it) and skip without it, saying so.
#include <dlfcn.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "../core/test_util.hpp"

using namespace aotrun_test;

namespace {

const std::string kMlp = std::string(AOTRUN_PT2_FIXTURES) + "/torch-2.15.0/mlp.pt2";
const std::string kFake = AOTRUN_PROVIDER_FAKE_PT2;  // imports aoti_torch_cpu__adaptive_avg_pool2d_backward
const char* kLacking = "aoti_torch_cpu__adaptive_avg_pool2d_backward";

// The libtorch directory of the test environment; "" when none.
std::string libtorch_dir() {
  const char* lt = std::getenv("AOTRUN_LIBTORCH");
  return lt != nullptr && *lt != '\0' && std::string(lt) != "shim" ? lt : "";
}

constexpr int kSkipped = 77;

// Runs `body` in a child process with nothing set (no AOTRUN_LIBTORCH, no
// AOTRUN_PROVIDER) and reports its failures and skips here.
void in_fresh_process(const std::function<void()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::unsetenv("AOTRUN_LIBTORCH");
    ::unsetenv("AOTRUN_PROVIDER");
    body();
    std::fflush(nullptr);
    ::_exit(::testing::Test::HasFailure() ? 1 : ::testing::Test::IsSkipped() ? kSkipped : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child process died (signal " << WTERMSIG(status) << ")";
  if (WEXITSTATUS(status) == kSkipped) GTEST_SKIP() << "skipped in the child process (its output says why)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child process failed (its output is above)";
}

#define REQUIRE_LIBTORCH_DIR(dir)                                                                                   \
  do {                                                                                                              \
    if ((dir).empty()) GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH to torch/lib (scripts/fetch-libtorch.sh)"; \
  } while (0)

struct Opened {
  aotrun_package* pkg = nullptr;
  std::string error;  // "CODE: message" when refused
  ~Opened() { aotrun_package_close(pkg); }
};

// Opens `path` with the options `provider` and `libtorch` ("" = unset).
void open_with(const std::string& path, const std::string& provider, const std::string& libtorch, Opened* out) {
  aotrun_package_options* o = nullptr;
  AOTRUN_ASSERT_OK(aotrun_package_options_create(&o));
  if (!provider.empty()) AOTRUN_ASSERT_OK(aotrun_package_options_set_provider(o, provider.c_str()));
  if (!libtorch.empty()) AOTRUN_ASSERT_OK(aotrun_package_options_set_libtorch(o, libtorch.c_str()));
  aotrun_status* s = aotrun_package_open(path.c_str(), o, &out->pkg);
  if (s != nullptr) out->error = describe(s);
  aotrun_package_options_free(o);
}

std::pair<std::string, std::string> provider_of(const aotrun_package* p) {
  const char* name = nullptr;
  const char* reason = nullptr;
  aotrun_status* s = aotrun_package_get_provider(p, &name, &reason);
  EXPECT_EQ(s, nullptr) << describe(s);
  return {name != nullptr ? name : "?", reason != nullptr ? reason : "?"};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Whether an object named libtorch_cpu.so other than aotrun's stand-in is loaded.
bool real_libtorch_loaded() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string n = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (contains(n, "libtorch_cpu.so") && !contains(n, "torch-standins")) *static_cast<bool*>(data) = true;
        return 0;
      },
      &found);
  return found;
}

// Runs the 2.15 mlp once on zeros ([4, 64] float32 -> [4, 16]).
void run_mlp(aotrun_package* p) {
  aotrun_runner* r = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_create(p, nullptr, &r));
  std::vector<float> in(4 * 64, 0.0f), out(4 * 16, -1.0f);
  int64_t in_shape[2] = {4, 64}, out_shape[2] = {4, 16};
  DLTensor x{in.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
  DLTensor y{out.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  aotrun_status* s = aotrun_runner_run(r, &x, 1, &y, 1);
  EXPECT_EQ(s, nullptr) << describe(s);
  aotrun_runner_destroy(r);
}

}  // namespace

TEST(Provider, NothingSetRunsACorpusModelOnTheShimWithNoLibtorchLoaded) {
  in_fresh_process([] {
    Opened o;
    open_with(kMlp, "", "", &o);
    ASSERT_NE(o.pkg, nullptr) << o.error;
    const auto [name, reason] = provider_of(o.pkg);
    EXPECT_EQ(name, "shim");
    EXPECT_TRUE(contains(reason, "aotrun's shim implements all 23 aoti_* function(s) the model library imports"))
        << reason;
    run_mlp(o.pkg);
    EXPECT_FALSE(real_libtorch_loaded());
    // The same through the 1.3 slots of the function table.
    const aotrun_api* api = aotrun_get_api(AOTRUN_API_VERSION_1_3);
    ASSERT_NE(api, nullptr);
    const char* n = nullptr;
    ASSERT_EQ(api->package_get_provider(o.pkg, &n, nullptr), nullptr);
    EXPECT_STREQ(n, "shim");
    aotrun_package_options* opts = nullptr;
    ASSERT_EQ(api->package_options_create(&opts), nullptr);
    EXPECT_EQ(api->package_options_set_provider(opts, "auto"), nullptr);
    api->package_options_free(opts);
  });
}

TEST(Provider, AModelImportingAFunctionTheShimLacksIsLoadFailedNamingItWithNoLibtorch) {
  in_fresh_process([] {
    Opened o;
    open_with(kFake, "", "", &o);
    EXPECT_EQ(o.pkg, nullptr);
    EXPECT_TRUE(contains(o.error,
                         "LOAD_FAILED: package 'provider_fake' imports 1 function(s) of libtorch's C shim "
                         "that aotrun's shim lacks: aoti_torch_cpu__adaptive_avg_pool2d_backward (first in torch "))
        << o.error;
    EXPECT_TRUE(contains(o.error, "no libtorch is configured to run it: set AOTRUN_LIBTORCH")) << o.error;
    EXPECT_FALSE(real_libtorch_loaded());
  });
}

TEST(Provider, AModelTheShimCannotRunGoesToTheConfiguredLibtorch) {
  const std::string lt = libtorch_dir();
  REQUIRE_LIBTORCH_DIR(lt);
  in_fresh_process([lt] {
    Opened o;
    open_with(kFake, "auto", lt, &o);  // auto: the path is the fallback only
    ASSERT_NE(o.pkg, nullptr) << o.error;
    const auto [name, reason] = provider_of(o.pkg);
    EXPECT_EQ(name, "libtorch");
    EXPECT_TRUE(contains(reason, kLacking)) << reason;
    EXPECT_TRUE(contains(reason, "libtorch from the package option 'libtorch'")) << reason;
    EXPECT_TRUE(real_libtorch_loaded());
    // Its run (a clone through libtorch's shim) works.
    aotrun_runner* r = nullptr;
    AOTRUN_ASSERT_OK(aotrun_runner_create(o.pkg, nullptr, &r));
    std::vector<float> in = {1, 2, 3}, out(3, 0);
    int64_t shape[1] = {3};
    DLTensor x{in.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
    DLTensor y{out.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
    AOTRUN_ASSERT_OK(aotrun_runner_run(r, &x, 1, &y, 1));
    EXPECT_EQ(out, in);
    aotrun_runner_destroy(r);
  });
}

TEST(Provider, TheEnvironmentForcesTheShimOverAConfiguredLibtorch) {
  in_fresh_process([] {
    ::setenv("AOTRUN_LIBTORCH", "/nonexistent/torch/lib", 1);  // never loaded: the shim is forced
    ::setenv("AOTRUN_PROVIDER", "shim", 1);
    Opened o;
    open_with(kMlp, "", "", &o);
    ASSERT_NE(o.pkg, nullptr) << o.error;
    EXPECT_EQ(provider_of(o.pkg), std::make_pair(std::string("shim"), std::string("forced by AOTRUN_PROVIDER=shim")));
  });
}

TEST(Provider, ForcingTheShimOnAModelItCannotRunNamesTheFunction) {
  in_fresh_process([] {
    Opened o;
    open_with(kFake, "shim", "", &o);
    EXPECT_TRUE(contains(o.error, std::string("LOAD_FAILED: package 'provider_fake' imports 1 function(s) of ") +
                                      "libtorch's C shim that aotrun's shim lacks: " + kLacking))
        << o.error;
    EXPECT_TRUE(contains(o.error, "forced by the package option 'provider' ('shim')")) << o.error;
  });
}

TEST(Provider, ForcingLibtorchWithoutOneConfiguredSaysHowToConfigureIt) {
  in_fresh_process([] {
    ::setenv("AOTRUN_PROVIDER", "libtorch", 1);
    Opened o;
    open_with(kMlp, "", "", &o);
    EXPECT_TRUE(contains(o.error,
                         "LOAD_FAILED: package 'mlp': AOTRUN_PROVIDER=libtorch asks for libtorch, and no "
                         "libtorch is configured: set AOTRUN_LIBTORCH"))
        << o.error;
  });
}

TEST(Provider, ForcingLibtorchRunsACorpusModelOnIt) {
  const std::string lt = libtorch_dir();
  REQUIRE_LIBTORCH_DIR(lt);
  in_fresh_process([lt] {
    ::setenv("AOTRUN_LIBTORCH", lt.c_str(), 1);  // a path alone forces libtorch, as before 1.3
    Opened o;
    open_with(kMlp, "", "", &o);
    ASSERT_NE(o.pkg, nullptr) << o.error;
    EXPECT_EQ(provider_of(o.pkg), std::make_pair(std::string("libtorch"), "forced by AOTRUN_LIBTORCH=" + lt));
    run_mlp(o.pkg);
    EXPECT_TRUE(real_libtorch_loaded());
  });
}

TEST(Provider, AfterTheShimAPackageNeedingLibtorchIsRefusedNamingTheProviderInUse) {
  in_fresh_process([] {
    Opened first;
    open_with(kMlp, "", "", &first);
    ASSERT_NE(first.pkg, nullptr) << first.error;
    // Refused before anything is loaded: no libtorch file is needed to see it.
    Opened second;
    open_with(kFake, "auto", "/nonexistent/torch/lib", &second);
    EXPECT_EQ(second.pkg, nullptr);
    EXPECT_TRUE(contains(second.error, std::string("imports 1 function(s) of libtorch's C shim that aotrun's shim "
                                                   "lacks: ") +
                                           kLacking))
        << second.error;
    EXPECT_TRUE(contains(second.error, "this process already uses aotrun's shim (")) << second.error;
    EXPECT_TRUE(contains(second.error, "loaded for an earlier .pt2 package), and libtorch cannot be loaded beside it"))
        << second.error;
    Opened forced;
    open_with(kMlp, "libtorch", "/nonexistent/torch/lib", &forced);
    EXPECT_TRUE(contains(forced.error,
                         "LOAD_FAILED: package 'mlp': the package option 'provider' ('libtorch') asks "
                         "for libtorch, but this process already uses aotrun's shim"))
        << forced.error;
    EXPECT_FALSE(real_libtorch_loaded());
    // The first package still runs on the shim.
    run_mlp(first.pkg);
  });
}

TEST(Provider, AfterLibtorchAutoStaysOnItAndForcingTheShimIsRefused) {
  const std::string lt = libtorch_dir();
  REQUIRE_LIBTORCH_DIR(lt);
  in_fresh_process([lt] {
    Opened first;
    open_with(kMlp, "libtorch", lt, &first);
    ASSERT_NE(first.pkg, nullptr) << first.error;
    Opened second;
    open_with(kMlp, "", "", &second);
    ASSERT_NE(second.pkg, nullptr) << second.error;
    const auto [name, reason] = provider_of(second.pkg);
    EXPECT_EQ(name, "libtorch");
    EXPECT_TRUE(contains(reason, "libtorch is already in use in this process (" + lt)) << reason;
    run_mlp(second.pkg);
    Opened third;
    open_with(kMlp, "shim", "", &third);
    EXPECT_TRUE(contains(third.error, "asks for aotrun's shim, but this process already uses libtorch (" + lt))
        << third.error;
  });
}

// A Python host imports torch before aotrun opens anything: its libtorch is
// the provider (a model's libtorch_cpu.so binds to it whatever aotrun loads).
TEST(Provider, AHostThatLoadedLibtorchItselfKeepsItForItsModels) {
  const std::string lt = libtorch_dir();
  REQUIRE_LIBTORCH_DIR(lt);
  in_fresh_process([lt] {
    for (const char* f : {"libc10.so", "libtorch_cpu.so", "libtorch.so"}) {
      ASSERT_NE(::dlopen((lt + "/" + f).c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << ::dlerror();
    }
    Opened o;
    open_with(kMlp, "", "", &o);
    ASSERT_NE(o.pkg, nullptr) << o.error;
    const auto [name, reason] = provider_of(o.pkg);
    EXPECT_EQ(name, "libtorch");
    EXPECT_TRUE(contains(reason, "loaded by the host")) << reason;
    run_mlp(o.pkg);
    Opened shim;
    open_with(kMlp, "shim", "", &shim);
    EXPECT_TRUE(contains(shim.error, "asks for aotrun's shim, but this process already uses libtorch (")) << shim.error;
    EXPECT_TRUE(contains(shim.error, "loaded by the host before aotrun")) << shim.error;
  });
}

TEST(Provider, AnUnknownProviderIsInvalidArgumentNamingIt) {
  in_fresh_process([] {
    aotrun_package_options* o = nullptr;
    AOTRUN_ASSERT_OK(aotrun_package_options_create(&o));
    EXPECT_EQ(describe(aotrun_package_options_set_provider(o, "torch")),
              "INVALID_ARGUMENT: unknown C shim provider 'torch' (expected auto, shim or libtorch)");
    EXPECT_EQ(describe(aotrun_package_options_set_provider(nullptr, "auto")).rfind("INVALID_ARGUMENT", 0), 0u);
    AOTRUN_ASSERT_OK(aotrun_package_options_set_provider(o, nullptr));  // back to the default
    aotrun_package_options_free(o);
    ::setenv("AOTRUN_PROVIDER", "torch", 1);
    Opened bad;
    open_with(kMlp, "", "", &bad);
    EXPECT_EQ(bad.error,
              "INVALID_ARGUMENT: AOTRUN_PROVIDER=torch names an unknown C shim provider; expected auto, shim "
              "(aotrun's own) or libtorch");
  });
}

TEST(Provider, APackageCallingNoShimReportsNone) {
  in_fresh_process([] {
    Opened o;
    open_with(bare_so("counting"), "", "", &o);
    ASSERT_NE(o.pkg, nullptr) << o.error;
    EXPECT_EQ(provider_of(o.pkg), std::make_pair(std::string(), std::string()));
    EXPECT_EQ(describe(aotrun_package_get_provider(nullptr, nullptr, nullptr)).rfind("INVALID_ARGUMENT", 0), 0u);
  });
}

// aotrun_package_preview_provider: what open would choose, loading nothing.
namespace {

struct Preview {
  std::string provider, library, reason, error;  // error: "CODE: message" when the call failed
};

Preview preview(const std::string& path, const std::string& provider = "", const std::string& libtorch = "") {
  aotrun_package_options* o = nullptr;
  EXPECT_EQ(aotrun_package_options_create(&o), nullptr);
  if (!provider.empty()) {
    EXPECT_EQ(aotrun_package_options_set_provider(o, provider.c_str()), nullptr);
  }
  if (!libtorch.empty()) {
    EXPECT_EQ(aotrun_package_options_set_libtorch(o, libtorch.c_str()), nullptr);
  }
  const char* name = nullptr;
  const char* lib = nullptr;
  const char* why = nullptr;
  Preview p;
  aotrun_status* s = aotrun_package_preview_provider(path.c_str(), o, &name, &lib, &why);
  if (s != nullptr) {
    p.error = describe(s);
  } else {
    p = {name, lib, why, ""};
  }
  aotrun_package_options_free(o);
  return p;
}

}  // namespace

TEST(ProviderPreview, BeforeOpenItNamesTheShimLoadsNothingAndOpenAgrees) {
  in_fresh_process([] {
    const Preview p = preview(kMlp);
    ASSERT_EQ(p.error, "");
    EXPECT_EQ(p.provider, "shim");
    EXPECT_TRUE(contains(p.library, "/libaotrun_shim.so.1")) << p.library;
    EXPECT_TRUE(contains(p.reason, "aotrun's shim implements all")) << p.reason;
    // Nothing was loaded: neither the stand-ins nor a libtorch.
    EXPECT_EQ(::dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD), nullptr);
    EXPECT_FALSE(real_libtorch_loaded());
    Opened o;
    open_with(kMlp, "", "", &o);
    ASSERT_NE(o.pkg, nullptr) << o.error;
    EXPECT_EQ(provider_of(o.pkg).first, p.provider);
    EXPECT_EQ(provider_of(o.pkg).second, p.reason);
    // Afterwards the answer is the provider in use.
    const Preview again = preview(kMlp);
    EXPECT_EQ(again.provider, "shim");
    EXPECT_EQ(again.library, p.library);
    EXPECT_TRUE(contains(again.reason, "loaded for an earlier .pt2 package")) << again.reason;
  });
}

TEST(ProviderPreview, WhatOpenWouldRefuseIsTheAnswerNotAnError) {
  in_fresh_process([] {
    // The shim lacks a function the model imports, and no libtorch is set.
    const Preview lacking = preview(kFake);
    ASSERT_EQ(lacking.error, "");
    EXPECT_EQ(lacking.provider, "");
    EXPECT_TRUE(contains(lacking.reason, kLacking)) << lacking.reason;
    EXPECT_TRUE(contains(lacking.library, "/libaotrun_shim.so.1")) << lacking.library;
    Opened o;
    open_with(kFake, "", "", &o);
    EXPECT_TRUE(contains(o.error, lacking.reason)) << o.error << " vs " << lacking.reason;
    // libtorch forced with none configured.
    const Preview forced = preview(kMlp, "libtorch");
    EXPECT_EQ(forced.provider, "");
    EXPECT_EQ(forced.library, "");
    EXPECT_TRUE(contains(forced.reason, "no libtorch is configured")) << forced.reason;
  });
}

TEST(ProviderPreview, AConfiguredLibtorchIsNamedByItsLibrary) {
  const std::string lt = libtorch_dir();
  REQUIRE_LIBTORCH_DIR(lt);
  in_fresh_process([lt] {
    const Preview fake = preview(kFake, "auto", lt);
    EXPECT_EQ(fake.provider, "libtorch");
    EXPECT_EQ(fake.library, lt + "/libtorch_cpu.so");
    EXPECT_TRUE(contains(fake.reason, kLacking)) << fake.reason;
    const Preview forced = preview(kMlp, "libtorch", lt);
    EXPECT_EQ(forced.provider, "libtorch");
    EXPECT_EQ(forced.library, lt + "/libtorch_cpu.so");
    EXPECT_FALSE(real_libtorch_loaded());
  });
}

TEST(ProviderPreview, PackagesCallingNoShimAndBadArgumentsAndPaths) {
  in_fresh_process([] {
    const Preview native = preview(bare_so("counting"));
    EXPECT_EQ(native.error, "");
    EXPECT_EQ(native.provider + native.library + native.reason, "");
    EXPECT_EQ(preview("/no/such/model.pt2").error.rfind("NOT_FOUND: ", 0), 0u);
    ::setenv("AOTRUN_PROVIDER", "torch", 1);
    EXPECT_EQ(preview(kMlp).error,
              "INVALID_ARGUMENT: AOTRUN_PROVIDER=torch names an unknown C shim provider; expected auto, shim "
              "(aotrun's own) or libtorch");
    ::unsetenv("AOTRUN_PROVIDER");
    aotrun_package_options* o = nullptr;
    AOTRUN_ASSERT_OK(aotrun_package_options_create(&o));
    EXPECT_EQ(describe(aotrun_package_preview_provider(nullptr, o, nullptr, nullptr, nullptr)),
              "INVALID_ARGUMENT: path is NULL");
    EXPECT_EQ(describe(aotrun_package_preview_provider(kMlp.c_str(), nullptr, nullptr, nullptr, nullptr)),
              "INVALID_ARGUMENT: options is NULL");
    AOTRUN_ASSERT_OK(aotrun_package_preview_provider(kMlp.c_str(), o, nullptr, nullptr, nullptr));  // all optional
    aotrun_package_options_free(o);
    // The slot of the 1.3 table.
    const aotrun_api* api = aotrun_get_api(AOTRUN_API_VERSION_1_3);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->package_preview_provider, &aotrun_package_preview_provider);
  });
}

// CUDA models (AOTI_DEVICE_KEY "cuda", exported with torch 2.11 on a GPU
// machine: tests/gpu/pt2/export_cuda_fixtures.py) run on aotrun's shim and
// its CUDA layer only (docs/SHIM.md, "CUDA"). Here, with no GPU, what a user
// hears is checked; on a GPU machine the GPU suite runs them.
namespace {
const std::string kCudaMlp = std::string(AOTRUN_CUDA_PT2_FIXTURES) + "/mlp.pt2";
const std::string kCudaConvnet = std::string(AOTRUN_CUDA_PT2_FIXTURES) + "/convnet.pt2";
}  // namespace

TEST(ProviderCuda, ACudaModelWithoutAUsableDeviceIsRefusedNamingTheDevice) {
  in_fresh_process([] {
    Opened o;
    open_with(kCudaMlp, "", "", &o);
    if (o.pkg != nullptr) GTEST_SKIP() << "a CUDA device is usable here: the GPU suite (tests/gpu/pt2) runs it";
    // DEVICE where aotrun has its CUDA backend; without it the shim has no
    // CUDA layer and the model's aoti_torch_cuda_* imports are what it lacks.
    EXPECT_TRUE(contains(o.error,
                         "DEVICE: package 'mlp' is a CUDA AOTInductor model and needs CUDA device 0, which "
                         "is not usable here") ||
                contains(o.error, "aoti_torch_cuda_mm_out"))
        << o.error;
  });
}

TEST(ProviderCuda, AConvolutionModelIsRefusedNamingTheFunctionAndTheExportOptions) {
  in_fresh_process([] {
    Opened o;
    open_with(kCudaConvnet, "shim", "", &o);
    ASSERT_EQ(o.pkg, nullptr);
    EXPECT_TRUE(contains(o.error, "LOAD_FAILED")) << o.error;
    EXPECT_TRUE(contains(o.error, "aoti_torch_cuda_convolution")) << o.error;
    EXPECT_TRUE(contains(o.error, "max_autotune_conv_backends = \"TRITON\"")) << o.error;
  });
}

TEST(ProviderCuda, ForcingLibtorchForACudaModelIsRefused) {
  in_fresh_process([] {
    Opened o;
    open_with(kCudaMlp, "libtorch", "", &o);
    ASSERT_EQ(o.pkg, nullptr);
    EXPECT_TRUE(contains(o.error, "package 'mlp' is a CUDA AOTInductor model")) << o.error;
  });
}
