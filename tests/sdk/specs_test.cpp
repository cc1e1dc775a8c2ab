// Spec reporting, output shapes, ABI versions, struct_size handling.
#include <cstring>

#include "fixture.h"

namespace aotrun {
namespace test {
namespace {

class SpecsTest : public ::testing::Test {
 protected:
  SpecsTest() : lib_(package_path("libmlp.so")), host_(make_direct_host()) {}
  PackageLib lib_;
  DirectHost host_;
};

TEST_F(SpecsTest, MetadataOnlyContainerReportsSpecs) {
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  ContainerHandle c(lib_, must_create(lib_, a));
  size_t n = 99;
  ASSERT_EQ(lib_.num_inputs(c.get(), &n), AOTRUN_PKG_OK);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(lib_.num_outputs(c.get(), &n), AOTRUN_PKG_OK);
  EXPECT_EQ(n, 1u);

  aotrun_pkg_tensor_spec s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  ASSERT_EQ(lib_.input_spec(c.get(), 0, &s), AOTRUN_PKG_OK) << message(lib_);
  EXPECT_EQ(s.struct_size, sizeof(s));
  EXPECT_STREQ(s.name, "x");
  EXPECT_EQ(s.dtype.code, kDLFloat);
  EXPECT_EQ(s.dtype.bits, 32);
  EXPECT_EQ(s.dtype.lanes, 1);
  ASSERT_EQ(s.ndim, 2);
  EXPECT_EQ(s.shape[0], -1);  // dynamic batch
  EXPECT_EQ(s.shape[1], 256);

  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  ASSERT_EQ(lib_.output_spec(c.get(), 0, &s), AOTRUN_PKG_OK) << message(lib_);
  EXPECT_STREQ(s.name, "y");
  ASSERT_EQ(s.ndim, 2);
  EXPECT_EQ(s.shape[0], -1);
  EXPECT_EQ(s.shape[1], 64);
}

// A caller built against an older, smaller tensor_spec: the package writes only
// the fields that fit and says how many bytes it filled.
TEST_F(SpecsTest, SmallCallerSpecStructIsNotOverrun) {
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  ContainerHandle c(lib_, must_create(lib_, a));
  const size_t small = offsetof(aotrun_pkg_tensor_spec, dtype) + sizeof(DLDataType);  // 20
  unsigned char buffer[64];
  std::memset(buffer, 0xAB, sizeof(buffer));
  std::memset(buffer, 0, small);
  auto* s = reinterpret_cast<aotrun_pkg_tensor_spec*>(buffer);
  s->struct_size = small;
  ASSERT_EQ(lib_.input_spec(c.get(), 0, s), AOTRUN_PKG_OK) << message(lib_);
  EXPECT_EQ(s->struct_size, small);
  EXPECT_STREQ(s->name, "x");
  EXPECT_EQ(s->dtype.bits, 32);
  for (size_t i = small; i < sizeof(buffer); ++i) ASSERT_EQ(buffer[i], 0xAB) << "byte " << i;

  // Only struct_size fits.
  std::memset(buffer, 0xAB, sizeof(buffer));
  s->struct_size = sizeof(size_t);
  ASSERT_EQ(lib_.output_spec(c.get(), 0, s), AOTRUN_PKG_OK) << message(lib_);
  EXPECT_EQ(s->struct_size, sizeof(size_t));
  for (size_t i = sizeof(size_t); i < sizeof(buffer); ++i) ASSERT_EQ(buffer[i], 0xAB);

  // A newer, larger caller struct: filled up to this package's size.
  std::memset(buffer, 0, sizeof(buffer));
  s->struct_size = sizeof(buffer);
  ASSERT_EQ(lib_.output_spec(c.get(), 0, s), AOTRUN_PKG_OK) << message(lib_);
  EXPECT_EQ(s->struct_size, sizeof(aotrun_pkg_tensor_spec));
  EXPECT_EQ(s->ndim, 2);

  // No capacity at all is a caller error.
  s->struct_size = 0;
  EXPECT_EQ(lib_.output_spec(c.get(), 0, s), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("struct_size"), std::string::npos) << message(lib_);
}

TEST_F(SpecsTest, SpecIndexOutOfRange) {
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  ContainerHandle c(lib_, must_create(lib_, a));
  aotrun_pkg_tensor_spec s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  EXPECT_EQ(lib_.input_spec(c.get(), 1, &s), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("out of range"), std::string::npos) << message(lib_);
  EXPECT_EQ(lib_.output_spec(c.get(), 7, &s), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
}

TEST_F(SpecsTest, OutputShapesFollowTheBatch) {
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  ContainerHandle c(lib_, must_create(lib_, a));
  for (int64_t batch : {0, 1, 5, 1000}) {
    int64_t in_shape[2] = {batch, 256};
    DLTensor x;
    std::memset(&x, 0, sizeof(x));
    x.ndim = 2;
    x.shape = in_shape;
    x.dtype = DLDataType{kDLFloat, 32, 1};  // data stays NULL: only shapes are read
    int64_t out[2] = {-7, -7};
    aotrun_pkg_shape_args sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.struct_size = sizeof(sa);
    sa.inputs = &x;
    sa.num_inputs = 1;
    sa.output_shapes = out;
    sa.output_shapes_capacity = 2;
    ASSERT_EQ(lib_.output_shapes(c.get(), &sa), AOTRUN_PKG_OK) << message(lib_);
    EXPECT_EQ(out[0], batch);
    EXPECT_EQ(out[1], 64);
  }
}

TEST_F(SpecsTest, OutputShapesRejectBadInputsAndSmallBuffers) {
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  ContainerHandle c(lib_, must_create(lib_, a));
  int64_t in_shape[3] = {3, 256, 1};
  DLTensor x;
  std::memset(&x, 0, sizeof(x));
  x.ndim = 2;
  x.shape = in_shape;
  x.dtype = DLDataType{kDLFloat, 32, 1};
  int64_t out[2];
  aotrun_pkg_shape_args sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.struct_size = sizeof(sa);
  sa.inputs = &x;
  sa.num_inputs = 1;
  sa.output_shapes = out;
  sa.output_shapes_capacity = 1;
  EXPECT_EQ(lib_.output_shapes(c.get(), &sa), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("needs room for 2"), std::string::npos) << message(lib_);

  sa.output_shapes_capacity = 2;
  in_shape[1] = 255;
  EXPECT_EQ(lib_.output_shapes(c.get(), &sa), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("'x'"), std::string::npos) << message(lib_);
  EXPECT_NE(message(lib_).find("[3, 255]"), std::string::npos) << message(lib_);

  in_shape[1] = 256;
  x.ndim = 3;
  EXPECT_EQ(lib_.output_shapes(c.get(), &sa), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("3 dimensions"), std::string::npos) << message(lib_);

  x.ndim = 2;
  sa.num_inputs = 2;
  EXPECT_EQ(lib_.output_shapes(c.get(), &sa), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("expected 1 inputs, got 2"), std::string::npos) << message(lib_);

  sa.num_inputs = 1;
  sa.struct_size = 8;
  EXPECT_EQ(lib_.output_shapes(c.get(), &sa), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("struct_size"), std::string::npos) << message(lib_);
}

struct AbiCase {
  const char* file;
  uint32_t minor;
};

class AbiVersionTest : public ::testing::TestWithParam<AbiCase> {};

TEST_P(AbiVersionTest, ReportsVersionAndProbedSymbol) {
  PackageLib lib(package_path(GetParam().file));
  const uint32_t v = lib.abi_version();
  EXPECT_EQ(AOTRUN_PKG_VERSION_MAJOR(v), 1u);
  EXPECT_EQ(AOTRUN_PKG_VERSION_MINOR(v), GetParam().minor);
  if (GetParam().minor == 0) {
    EXPECT_EQ(lib.run_single_threaded, nullptr) << "an ABI 1.0 package must not export it";
  } else {
    EXPECT_NE(lib.run_single_threaded, nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(Packages, AbiVersionTest,
                         ::testing::Values(AbiCase{"libmlp.so", 1}, AbiCase{"libmlp_abi10.so", 0},
                                           AbiCase{"libnoop.so", 1}, AbiCase{"libnoop_abi10.so", 0}));

TEST_F(SpecsTest, OnlyPackageSymbolsAreExported) {
  // The SDK is header-only C++; none of it (nor libstdc++ instantiations) may
  // leak out of the package's dynamic symbol table.
  EXPECT_EQ(lib_.symbol("_ZNSt7__cxx119to_stringEi"), nullptr);
  EXPECT_EQ(lib_.symbol("_ZNSt7__cxx119to_stringEm"), nullptr);
  EXPECT_NE(lib_.symbol("aotrun_pkg_container_run"), nullptr);
}

TEST_F(SpecsTest, CreateRejectsBadArguments) {
  aotrun_pkg_container* c = nullptr;
  auto a = create_args(aotrun_test_direct_host_services(host_.get()), -1);
  EXPECT_EQ(lib_.create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("num_models is -1"), std::string::npos) << message(lib_);
  EXPECT_EQ(c, nullptr);

  a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  a.struct_size = 4;
  EXPECT_EQ(lib_.create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("struct_size"), std::string::npos) << message(lib_);

  a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  EXPECT_EQ(lib_.create(nullptr, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(lib_.create(&c, nullptr), AOTRUN_PKG_ERR_INVALID_ARGUMENT);

  a.device = DLDevice{kDLCUDA, 0};
  EXPECT_EQ(lib_.create(&c, &a), AOTRUN_PKG_ERR_UNSUPPORTED);
  EXPECT_NE(message(lib_).find("cuda:0"), std::string::npos) << message(lib_);

  // num_models >= 1 needs host services.
  a = create_args(nullptr, 1);
  EXPECT_EQ(lib_.create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
}

TEST_F(SpecsTest, NullContainerIsRejected) {
  size_t n = 0;
  EXPECT_EQ(lib_.num_inputs(nullptr, &n), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib_).find("container is NULL"), std::string::npos) << message(lib_);
  EXPECT_EQ(lib_.destroy(nullptr), AOTRUN_PKG_OK);
}

TEST_F(SpecsTest, LastErrorIsEmptyAfterSuccess) {
  EXPECT_STREQ(lib_.last_error(), "");
  size_t n = 0;
  ASSERT_NE(lib_.num_inputs(nullptr, &n), AOTRUN_PKG_OK);
  EXPECT_STRNE(lib_.last_error(), "");
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0);
  ContainerHandle c(lib_, must_create(lib_, a));
  EXPECT_STREQ(lib_.last_error(), "");
}

}  // namespace
}  // namespace test
}  // namespace aotrun
