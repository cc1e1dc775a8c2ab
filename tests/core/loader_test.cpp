// Package opening: probing of 1.1 and 1.0 packages, manifest and weights
// checks, and every bad-package case with its status code.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "test_util.hpp"

using namespace aotrun_test;

namespace {

aotrun_symbol_info symbol(aotrun_package* p, const std::string& name) {
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  aotrun_status_free(aotrun_package_get_info(p, &info));
  for (size_t i = 0; i < info.num_symbols; ++i) {
    aotrun_symbol_info s{};
    s.struct_size = sizeof(s);
    aotrun_status_free(aotrun_package_get_symbol(p, i, &s));
    if (name == s.name) return s;
  }
  ADD_FAILURE() << "symbol " << name << " not listed";
  return {};
}

Outcome open_outcome(const std::string& path) {
  aotrun_package* p = nullptr;
  Outcome o = outcome(aotrun_package_open(path.c_str(), nullptr, &p));
  EXPECT_EQ(p, nullptr);
  aotrun_package_close(p);
  return o;
}

}  // namespace

TEST(Loader, ProbesSingleThreadedInAbi11Package) {
  Package pkg(pkg_path("mlp"));
  ASSERT_NE(pkg.get(), nullptr);
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  AOTRUN_ASSERT_OK(aotrun_package_get_info(pkg.get(), &info));
  EXPECT_EQ(info.abi_version, (1u << 16) | 1u);
  EXPECT_STREQ(info.name, "mlp");
  EXPECT_STREQ(info.format, "aotrun-dir");
  EXPECT_EQ(info.hashes_verified, 1);
  EXPECT_EQ(info.num_inputs, 1u);
  EXPECT_EQ(info.num_outputs, 1u);
  EXPECT_EQ(info.num_constants, 6u);
  EXPECT_EQ(info.constant_bytes, 4u * (1024 * 256 + 1024 + 1024 * 1024 + 1024 + 64 * 1024 + 64));
  auto st = symbol(pkg.get(), "aotrun_pkg_container_run_single_threaded");
  EXPECT_EQ(st.found, 1);
  EXPECT_EQ(st.required, 0);
  EXPECT_EQ(st.since, (1u << 16) | 1u);
  EXPECT_EQ(symbol(pkg.get(), "aotrun_pkg_container_run").found, 1);
  const char* reason = nullptr;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_SINGLE_THREADED, &reason), 1);
  EXPECT_STREQ(reason, "");
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_GRAPH, &reason), 1);

  aotrun_tensor_info in{};
  in.struct_size = sizeof(in);
  AOTRUN_ASSERT_OK(aotrun_package_get_input(pkg.get(), 0, &in));
  EXPECT_STREQ(in.name, "x");
  ASSERT_EQ(in.ndim, 2);
  EXPECT_EQ(in.shape[0], -1);
  EXPECT_EQ(in.shape[1], 256);
  EXPECT_EQ(in.dtype.code, kDLFloat);
  EXPECT_EQ(in.dtype.bits, 32);
  EXPECT_EQ(outcome(aotrun_package_get_input(pkg.get(), 1, &in)).code, AOTRUN_ERR_INVALID_ARGUMENT);
}

TEST(Loader, Abi10PackageLacksSingleThreadedAndSaysWhy) {
  Package pkg(pkg_path("mlp_abi10"));
  ASSERT_NE(pkg.get(), nullptr);
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  AOTRUN_ASSERT_OK(aotrun_package_get_info(pkg.get(), &info));
  EXPECT_EQ(info.abi_version, 1u << 16);
  EXPECT_EQ(symbol(pkg.get(), "aotrun_pkg_container_run_single_threaded").found, 0);
  const char* reason = nullptr;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_THREADED, &reason), 1);
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_SINGLE_THREADED, &reason), 0);
  EXPECT_NE(std::string(reason).find("aotrun_pkg_container_run_single_threaded"), std::string::npos) << reason;
  EXPECT_EQ(aotrun_package_mode_available(pkg.get(), AOTRUN_MODE_GRAPH, &reason), 0);
  EXPECT_NE(std::string(reason).find(
                "graph mode unavailable: package ABI 1.0 lacks aotrun_pkg_container_run_single_threaded"),
            std::string::npos)
      << reason;
}

TEST(Loader, BareSharedObjectIsAPackage) {
  Package pkg(bare_so("noop"));
  ASSERT_NE(pkg.get(), nullptr);
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  AOTRUN_ASSERT_OK(aotrun_package_get_info(pkg.get(), &info));
  EXPECT_STREQ(info.format, "aotrun-so");
  EXPECT_STREQ(info.name, "noop");
  EXPECT_EQ(info.num_constants, 0u);
  EXPECT_EQ(info.hashes_verified, 0);
}

TEST(Loader, SmallerInfoStructIsNotOverrun) {
  Package pkg(pkg_path("mlp"));
  // An older caller knowing only the first fields: bytes past them stay intact.
  struct {
    aotrun_package_info info;
    unsigned char guard[64];
  } buf;
  std::memset(&buf, 0xAB, sizeof(buf));
  buf.info.struct_size = offsetof(aotrun_package_info, abi_version) + sizeof(uint32_t);
  AOTRUN_ASSERT_OK(aotrun_package_get_info(pkg.get(), &buf.info));
  EXPECT_STREQ(buf.info.name, "mlp");
  const unsigned char* tail = reinterpret_cast<const unsigned char*>(&buf.info) + buf.info.struct_size;
  for (size_t i = 0; i < sizeof(aotrun_package_info) - buf.info.struct_size; ++i) ASSERT_EQ(tail[i], 0xAB) << i;
}

TEST(Loader, MissingPathIsNotFound) {
  auto o = open_outcome("/nonexistent/aotrun/package");
  EXPECT_EQ(o.code, AOTRUN_ERR_NOT_FOUND);
  EXPECT_NE(o.message.find("/nonexistent/aotrun/package"), std::string::npos);
}

TEST(Loader, FileThatIsNotElfIsRefused) {
  std::string path = testing::TempDir() + "/not_an_elf.so";
  std::ofstream(path) << "this is text, not a shared object\n";
  auto o = open_outcome(path);
  EXPECT_EQ(o.code, AOTRUN_ERR_LOAD_FAILED);
  EXPECT_NE(o.message.find("not an ELF"), std::string::npos) << o.message;
  std::remove(path.c_str());
}

TEST(Loader, AllMissingRequiredSymbolsAreListed) {
  auto o = open_outcome(bare_so("missing_symbols"));
  EXPECT_EQ(o.code, AOTRUN_ERR_MISSING_SYMBOL);
  EXPECT_NE(o.message.find("aotrun_pkg_container_get_output_shapes"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("aotrun_pkg_container_destroy"), std::string::npos) << o.message;
}

TEST(Loader, FutureMajorIsRefused) {
  auto o = open_outcome(bare_so("future_major"));
  EXPECT_EQ(o.code, AOTRUN_ERR_ABI_MISMATCH);
  EXPECT_NE(o.message.find("2."), std::string::npos) << o.message;
}

TEST(Loader, ManifestHashMismatchIsIntegrityError) {
  auto o = open_outcome(pkg_path("mlp_bad_hash"));
  EXPECT_EQ(o.code, AOTRUN_ERR_INTEGRITY);
  EXPECT_NE(o.message.find("sha256"), std::string::npos) << o.message;
}

TEST(Loader, HashCheckCanBeSkipped) {
  PackageOptions opts;
  AOTRUN_ASSERT_OK(aotrun_package_options_set_verify_hashes(opts.get(), 0));
  {
    Package pkg(pkg_path("mlp_bad_hash"), opts);
    EXPECT_NE(pkg.get(), nullptr);
  }
}

TEST(Loader, MissingWeightsFileIsBadPackage) {
  auto o = open_outcome(pkg_path("mlp_missing_weights"));
  EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE);
  EXPECT_NE(o.message.find("weights.safetensors"), std::string::npos) << o.message;
}

TEST(Loader, WeightOfWrongShapeIsBadPackage) {
  auto o = open_outcome(pkg_path("mlp_bad_shape"));
  EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE);
  EXPECT_NE(o.message.find("fc2.weight"), std::string::npos) << o.message;
}

TEST(Loader, MissingConstantIsBadPackage) {
  auto o = open_outcome(pkg_path("mlp_missing_constant"));
  EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE);
  EXPECT_NE(o.message.find("fc3.bias"), std::string::npos) << o.message;
}

TEST(Loader, MalformedManifestIsBadPackage) {
  auto o = open_outcome(pkg_path("mlp_bad_manifest"));
  EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE);
  EXPECT_NE(o.message.find("manifest.json"), std::string::npos) << o.message;
}

TEST(Loader, NullArgumentsAreInvalid) {
  aotrun_package* p = nullptr;
  EXPECT_EQ(outcome(aotrun_package_open(nullptr, nullptr, &p)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outcome(aotrun_package_open(pkg_path("mlp").c_str(), nullptr, nullptr)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outcome(aotrun_package_get_info(nullptr, nullptr)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_package_close(nullptr);  // no-op
  EXPECT_EQ(aotrun_package_mode_available(nullptr, AOTRUN_MODE_THREADED, nullptr), 0);
}

TEST(Loader, PackageOutlivesItsHandleWhileRunnersExist) {
  aotrun_package* p = nullptr;
  AOTRUN_ASSERT_OK(aotrun_package_open(bare_so("noop").c_str(), nullptr, &p));
  aotrun_runner* r = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_create(p, nullptr, &r));
  aotrun_package_close(p);  // the runner keeps the library loaded
  Tensor x({2, 4}, 1.f), y({2, 4});
  AOTRUN_EXPECT_OK(run_vec(r, x, y));
  aotrun_runner_destroy(r);
}

TEST(Api, VersionAndTable) {
  EXPECT_EQ(aotrun_version(), AOTRUN_VERSION);
  EXPECT_STREQ(aotrun_version_string(), "1.3.0");
  const aotrun_api* api = aotrun_get_api(AOTRUN_API_VERSION);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->package_open, &aotrun_package_open);
  EXPECT_EQ(api->runner_run_on_stream, &aotrun_runner_run_on_stream);
  EXPECT_EQ(aotrun_get_api(AOTRUN_MAKE_VERSION(1, 99, 0)), nullptr);
  EXPECT_EQ(aotrun_get_api(AOTRUN_MAKE_VERSION(2, 0, 0)), nullptr);
  EXPECT_STREQ(aotrun_code_name(AOTRUN_ERR_WOULD_BLOCK), "WOULD_BLOCK");
  EXPECT_STREQ(aotrun_code_name(static_cast<aotrun_code>(999)), "UNKNOWN");
}

TEST(Loader, PinnedSha256IsCheckedBeforeLoading) {
  PackageOptions opts;
  EXPECT_EQ(outcome(aotrun_package_options_set_expected_sha256(opts.get(), "abc")).code, AOTRUN_ERR_INVALID_ARGUMENT);
  const std::string wrong(64, '0');
  AOTRUN_ASSERT_OK(aotrun_package_options_set_expected_sha256(opts.get(), wrong.c_str()));
  for (const std::string& path : {bare_so("noop"), pkg_path("mlp")}) {
    aotrun_package* p = nullptr;
    Outcome o = outcome(aotrun_package_open(path.c_str(), opts.get(), &p));
    EXPECT_EQ(o.code, AOTRUN_ERR_INTEGRITY) << path;
    EXPECT_NE(o.message.find("pinned"), std::string::npos) << o.message;
  }
  // The right pin loads (sha256sum computes it independently).
  char hex[65] = {};
  FILE* f = popen(("sha256sum '" + bare_so("noop") + "'").c_str(), "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fread(hex, 1, 64, f), 64u);
  pclose(f);
  AOTRUN_ASSERT_OK(aotrun_package_options_set_expected_sha256(opts.get(), hex));
  {
    Package pkg(bare_so("noop"), opts);
    EXPECT_NE(pkg.get(), nullptr);
  }
}

TEST(Loader, WorldWritablePackageFilesAreRefusedUnlessAllowed) {
  const std::string dir = testing::TempDir() + "/aotrun_ww_pkg";
  const std::string so = dir + "/libnoop.so";
  ASSERT_EQ(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "' && cp '" + bare_so("noop") + "' '" + so +
                         "' && chmod 666 '" + so + "'")
                            .c_str()),
            0);
  auto o = open_outcome(so);
  EXPECT_EQ(o.code, AOTRUN_ERR_INTEGRITY);
  EXPECT_NE(o.message.find("writable by group or others"), std::string::npos) << o.message;
  PackageOptions opts;
  AOTRUN_ASSERT_OK(aotrun_package_options_set_allow_untrusted_files(opts.get(), 1));
  {
    Package pkg(so, opts);
    EXPECT_NE(pkg.get(), nullptr);
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}
