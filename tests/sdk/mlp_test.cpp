// The example MLP against the naive reference; constants validation; input
// validation; the threaded run from several threads.
#include <cmath>
#include <thread>

#include "fixture.h"
#include "mlp_reference.h"

namespace aotrun {
namespace test {
namespace {

constexpr float kTolerance = 1e-4f;

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], kTolerance) << "element " << i;
  }
}

class MlpTest : public ::testing::Test {
 protected:
  MlpTest()
      : weights_(Safetensors::load(package_path("mlp/weights.safetensors"))),
        reference_(weights_),
        host_(make_direct_host()) {}

  aotrun_pkg_create_args args(int32_t num_models) {
    return create_args(aotrun_test_direct_host_services(host_.get()), num_models, &weights_.constants());
  }

  // Runs one batch through `fn` and returns y.
  std::vector<float> run_batch(PackageLib& lib, aotrun_pkg_container* c, int64_t batch, aotrun_pkg_container_run_fn fn,
                               uint64_t seed = 1) {
    FloatTensor x({batch, 256}, mlp_reference_input(batch, seed));
    FloatTensor y({batch, 64}, -99.0f);
    const auto ra = run_args(&x.dl(), 1, &y.dl(), 1);
    const int32_t st = fn(c, &ra);
    EXPECT_EQ(st, AOTRUN_PKG_OK) << lib.last_error();
    return y.values();
  }

  Safetensors weights_;
  MlpReference reference_;
  DirectHost host_;
};

TEST_F(MlpTest, MatchesReferenceThreadedAndSingleThreaded) {
  PackageLib lib(package_path("libmlp.so"));
  ContainerHandle c(lib, must_create(lib, args(1)));
  ASSERT_NE(c.get(), nullptr);
  for (int64_t batch : {1, 3, 17}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto want = reference_.forward(mlp_reference_input(batch), batch);
    expect_close(run_batch(lib, c.get(), batch, lib.run), want);
    expect_close(run_batch(lib, c.get(), batch, lib.run_single_threaded), want);
  }
}

TEST_F(MlpTest, Abi10PackageComputesTheSame) {
  PackageLib lib(package_path("libmlp_abi10.so"));
  ContainerHandle c(lib, must_create(lib, args(1)));
  for (int64_t batch : {1, 3, 17}) {
    expect_close(run_batch(lib, c.get(), batch, lib.run), reference_.forward(mlp_reference_input(batch), batch));
  }
}

TEST_F(MlpTest, EmptyBatchRuns) {
  PackageLib lib(package_path("libmlp.so"));
  ContainerHandle c(lib, must_create(lib, args(1)));
  EXPECT_TRUE(run_batch(lib, c.get(), 0, lib.run).empty());
}

TEST_F(MlpTest, ScratchIsFreedAndEventsTracked) {
  PackageLib lib(package_path("libmlp.so"));
  {
    ContainerHandle c(lib, must_create(lib, args(3)));
    for (int i = 0; i < 10; ++i) run_batch(lib, c.get(), 4, lib.run);
    aotrun_test_direct_host_counters n;
    aotrun_test_direct_host_counters_get(host_.get(), &n);
    EXPECT_EQ(n.events_live, 3);  // one per instance
    EXPECT_EQ(n.allocs, 10);      // one scratch allocation per run ...
    EXPECT_EQ(n.frees, 10);       // ... freed on the stream after the compute
    EXPECT_EQ(n.launches, 10);
    EXPECT_EQ(n.event_records, 10);
  }
  aotrun_test_direct_host_counters n;
  aotrun_test_direct_host_counters_get(host_.get(), &n);
  EXPECT_EQ(n.events_live, 0);
}

TEST_F(MlpTest, FourThreadsShareTwoInstances) {
  PackageLib lib(package_path("libmlp.so"));
  ContainerHandle c(lib, must_create(lib, args(2)));
  const int64_t batches[4] = {1, 3, 8, 17};
  std::vector<std::vector<float>> want;
  for (int64_t b : batches) want.push_back(reference_.forward(mlp_reference_input(b, 7), b));
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int64_t b = batches[(t + i) % 4];
        FloatTensor x({b, 256}, mlp_reference_input(b, 7));
        FloatTensor y({b, 64}, 0.0f);
        const auto ra = run_args(&x.dl(), 1, &y.dl(), 1);
        if (lib.run(c.get(), &ra) != AOTRUN_PKG_OK) {
          ++failures[t];
          continue;
        }
        const auto& w = want[(t + i) % 4];
        for (size_t k = 0; k < w.size(); ++k) {
          if (std::fabs(y.values()[k] - w[k]) > kTolerance) {
            ++failures[t];
            break;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST_F(MlpTest, MissingWeightsFailCreateNamingTheConstant) {
  PackageLib lib(package_path("libmlp.so"));
  aotrun_pkg_container* c = nullptr;
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 1);
  EXPECT_EQ(lib.create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib).find("constant 'fc1.weight' is missing"), std::string::npos) << message(lib);
  // A metadata-only container without constants is fine (bare .so open).
  const auto meta = create_args(nullptr, 0);
  ContainerHandle m(lib, must_create(lib, meta));
}

TEST_F(MlpTest, WrongShapeConstantFailsCreateWithBothShapes) {
  auto bad = Safetensors::load(package_path("mlp_bad_shape/weights.safetensors"));
  PackageLib lib(package_path("libmlp.so"));
  aotrun_pkg_container* c = nullptr;
  // The host's open creates a metadata-only container with the constants.
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0, &bad.constants());
  EXPECT_EQ(lib.create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  const std::string m = message(lib);
  EXPECT_NE(m.find("'fc2.weight'"), std::string::npos) << m;
  EXPECT_NE(m.find("[1024, 1000]"), std::string::npos) << m;
  EXPECT_NE(m.find("[1024, 1024]"), std::string::npos) << m;
}

TEST_F(MlpTest, MissingConstantFailsCreate) {
  auto partial = Safetensors::load(package_path("mlp_missing_constant/weights.safetensors"));
  PackageLib lib(package_path("libmlp.so"));
  aotrun_pkg_container* c = nullptr;
  const auto a = create_args(aotrun_test_direct_host_services(host_.get()), 0, &partial.constants());
  EXPECT_EQ(lib.create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib).find("'fc3.bias' is missing"), std::string::npos) << message(lib);
}

TEST_F(MlpTest, MetadataOnlyContainerRefusesToRun) {
  PackageLib lib(package_path("libmlp.so"));
  ContainerHandle c(lib, must_create(lib, args(0)));
  FloatTensor x({2, 256}, 0.5f);
  FloatTensor y({2, 64}, 0.0f);
  const auto ra = run_args(&x.dl(), 1, &y.dl(), 1);
  EXPECT_EQ(lib.run(c.get(), &ra), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(lib).find("metadata only"), std::string::npos) << message(lib);
  EXPECT_EQ(lib.run_single_threaded(c.get(), &ra), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
}

class MlpBadInputTest : public MlpTest {
 protected:
  MlpBadInputTest() : lib_(package_path("libmlp.so")), c_(lib_, must_create(lib_, args(1))) {}

  void expect_invalid(const aotrun_pkg_run_args& ra, const std::string& needle) {
    for (auto fn : {lib_.run, lib_.run_single_threaded}) {
      EXPECT_EQ(fn(c_.get(), &ra), AOTRUN_PKG_ERR_INVALID_ARGUMENT) << needle;
      EXPECT_NE(message(lib_).find(needle), std::string::npos)
          << "message: " << message(lib_) << "\nexpected to contain: " << needle;
    }
  }

  PackageLib lib_;
  ContainerHandle c_;
};

TEST_F(MlpBadInputTest, WrongCounts) {
  FloatTensor x({2, 256}), y({2, 64});
  expect_invalid(run_args(&x.dl(), 0, &y.dl(), 1), "expected 1 inputs, got 0");
  expect_invalid(run_args(&x.dl(), 1, &y.dl(), 2), "expected 1 outputs, got 2");
  expect_invalid(run_args(nullptr, 1, &y.dl(), 1), "inputs pointer is NULL");
}

TEST_F(MlpBadInputTest, WrongDtype) {
  FloatTensor x({2, 256}), y({2, 64});
  x.dl().dtype = DLDataType{kDLFloat, 64, 1};
  expect_invalid(run_args(&x.dl(), 1, &y.dl(), 1), "input 0 ('x'): dtype is float64, expected float32");
}

TEST_F(MlpBadInputTest, WrongShapes) {
  FloatTensor x({2, 255}), y({2, 64});
  expect_invalid(run_args(&x.dl(), 1, &y.dl(), 1), "[2, 255] does not match [?, 256]");
  FloatTensor x3({2, 256, 1});
  expect_invalid(run_args(&x3.dl(), 1, &y.dl(), 1), "has 3 dimensions, expected 2");
  FloatTensor x_ok({2, 256}), y_batch({3, 64});
  expect_invalid(run_args(&x_ok.dl(), 1, &y_batch.dl(), 1), "output 0 ('y'): shape [3, 64] differs from [2, 64]");
  FloatTensor y_cols({2, 63});
  expect_invalid(run_args(&x_ok.dl(), 1, &y_cols.dl(), 1), "output 0 ('y')");
}

TEST_F(MlpBadInputTest, WrongDeviceLayoutOrData) {
  FloatTensor x({2, 256}), y({2, 64});
  x.dl().device = DLDevice{kDLCUDA, 0};
  expect_invalid(run_args(&x.dl(), 1, &y.dl(), 1), "is on device cuda:0");
  FloatTensor x2({2, 256});
  int64_t strides[2] = {1, 2};  // column-major: not compact row-major
  x2.dl().strides = strides;
  expect_invalid(run_args(&x2.dl(), 1, &y.dl(), 1), "not compact");
  FloatTensor x3({2, 256});
  x3.dl().data = nullptr;
  expect_invalid(run_args(&x3.dl(), 1, &y.dl(), 1), "data is NULL");
}

}  // namespace
}  // namespace test
}  // namespace aotrun
