// What a model library needs from this process, checked before dlopen
// (cpp/package/pt2/provider/link_check.cpp, cpp/linkinfo/elf_symbols.cpp).
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "linkinfo/elf_symbols.hpp"
#include "package/pt2/provider/link_check.hpp"
#include "base/error.hpp"

using aotrun::Code;
using aotrun::Error;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A copy of the probe model whose need of GLIBCXX_3.4 reads GLIBCXX_9.9:
// a toolchain newer than any libstdc++ (same length, so nothing moves).
struct FutureToolchainCopy {
  std::string path = "/tmp/aotrun-link-probe-" + std::to_string(::getpid()) + ".so";
  FutureToolchainCopy() {
    std::string bytes = read_file(AOTRUN_LINK_PROBE_MODEL);
    const std::string from("GLIBCXX_3.4\0", 12), to("GLIBCXX_9.9\0", 12);
    const size_t at = bytes.find(from);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) bytes.replace(at, from.size(), to);
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~FutureToolchainCopy() { ::unlink(path.c_str()); }
};

aotrun::pt2::TorchShim fake_shim() {
  void* torch = ::dlopen(AOTRUN_LINK_PROBE_TORCH, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(torch, nullptr) << ::dlerror();
  aotrun::pt2::TorchShim shim;
  shim.delete_tensor_object =
      reinterpret_cast<aotrun::pt2::TorchShim::Delete>(::dlsym(torch, "aoti_torch_delete_tensor_object"));
  EXPECT_NE(shim.delete_tensor_object, nullptr);
  return shim;
}

Code code_of(const std::function<void()>& f, std::string* message) {
  try {
    f();
  } catch (const Error& e) {
    *message = e.what();
    return e.code();
  }
  return Code::Ok;
}

}  // namespace

TEST(ElfSymbols, ReadsUndefinedExportedAndNeededVersionsOfALibrary) {
  const auto model = aotrun::read_elf_dynamic_symbols(AOTRUN_LINK_PROBE_MODEL);
  EXPECT_TRUE(contains(model.undefined, "aoti_torch_from_a_future_release"));
  EXPECT_TRUE(contains(model.undefined, "aoti_torch_delete_tensor_object"));
  EXPECT_TRUE(std::binary_search(model.defined.begin(), model.defined.end(), "aotrun_link_probe"));
  bool needs_glibcxx = false;
  for (const auto& n : model.needs) needs_glibcxx |= n.file == "libstdc++.so.6" && n.version == "GLIBCXX_3.4";
  EXPECT_TRUE(needs_glibcxx);

  const auto torch = aotrun::read_elf_dynamic_symbols(AOTRUN_LINK_PROBE_TORCH);
  EXPECT_TRUE(std::binary_search(torch.defined.begin(), torch.defined.end(), "aoti_torch_get_dim"));
  EXPECT_FALSE(std::binary_search(torch.defined.begin(), torch.defined.end(), "aoti_torch_from_a_future_release"));
}

TEST(ElfSymbols, ComparesVersionNumbersNotText) {
  EXPECT_TRUE(aotrun::version_less("GLIBCXX_3.4.9", "GLIBCXX_3.4.30"));
  EXPECT_FALSE(aotrun::version_less("GLIBCXX_3.4.30", "GLIBCXX_3.4.9"));
  EXPECT_TRUE(aotrun::version_less("GLIBCXX_3.4", "GLIBCXX_3.4.1"));
  EXPECT_FALSE(aotrun::version_less("GLIBCXX_3.4", "GLIBCXX_3.4"));
  EXPECT_FALSE(aotrun::version_less("NOT_A_VERSION", "GLIBCXX_3.4"));
}

TEST(ElfSymbols, ANonElfFileIsLoadFailedNamingIt) {
  std::string msg;
  EXPECT_EQ(code_of([] { aotrun::read_elf_dynamic_symbols("/etc/hostname"); }, &msg), Code::LoadFailed);
  EXPECT_NE(msg.find("/etc/hostname"), std::string::npos) << msg;
}

TEST(LinkCheck, AShimFunctionTheLibtorchLacksIsNamedBeforeDlopen) {
  const aotrun::pt2::TorchShim shim = fake_shim();
  std::string msg;
  EXPECT_EQ(code_of([&] { aotrun::pt2::check_model_requirements(AOTRUN_LINK_PROBE_MODEL, "probe", shim, ""); }, &msg),
            Code::LoadFailed);
  EXPECT_NE(msg.find("package 'probe' calls 1 function(s) of libtorch's C shim that"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not export: aoti_torch_from_a_future_release (the package was exported by a newer "
                     "torch"),
            std::string::npos)
      << msg;
  // Never dlopen'd: the probe's undefined symbols would have failed it.
  EXPECT_EQ(::dlopen(AOTRUN_LINK_PROBE_MODEL, RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(LinkCheck, ASymbolVersionTheProcessLacksIsNamedWithTheNewestItHas) {
  FutureToolchainCopy future;
  aotrun::pt2::TorchShim no_torch;  // skips the shim check: only versions are looked at
  no_torch.delete_tensor_object = nullptr;
  std::string msg;
  EXPECT_EQ(code_of([&] { aotrun::pt2::check_model_requirements(future.path, "probe", no_torch, ""); }, &msg),
            Code::LoadFailed);
  EXPECT_NE(msg.find("needs symbol versions this process's libraries lack: GLIBCXX_9.9 from "), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("libstdc++.so.6 (which has up to GLIBCXX_3.4."), std::string::npos) << msg;
}

TEST(LinkCheck, VectorExtensionsTheCpuLacksAreNamed) {
  auto none = [](const char*) { return false; };
  auto all = [](const char*) { return true; };
  using aotrun::pt2::missing_cpu_features;
  EXPECT_EQ(missing_cpu_features("AVX512", none),
            (std::vector<std::string>{"avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"}));
  EXPECT_EQ(missing_cpu_features("avx2", none), (std::vector<std::string>{"avx2", "fma", "f16c"}));
  EXPECT_TRUE(missing_cpu_features("AVX2", all).empty());
  EXPECT_TRUE(missing_cpu_features("SOMETHING_NEW", none).empty());  // unknown: not refused
  EXPECT_TRUE(missing_cpu_features("", none).empty());
}
