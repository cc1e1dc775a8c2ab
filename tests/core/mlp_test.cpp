// The example MLP through libaotrun in every mode equals a naive reference
// implementation (double accumulation) within 1e-4.
#include <cmath>

#include "mlp_reference.h"
#include "test_util.hpp"

using namespace aotrun_test;

class MlpThroughRunner : public testing::TestWithParam<aotrun_mode> {};

TEST_P(MlpThroughRunner, MatchesNaiveReference) {
  const auto weights = aotrun::test::Safetensors::load(pkg_path("mlp") + "/weights.safetensors");
  const aotrun::test::MlpReference ref(weights);
  Package pkg(pkg_path("mlp"));
  Runner r(pkg, RunnerOptions().mode(GetParam()).num_models(2));
  for (int64_t batch : {1, 3, 17, 64, 3}) {
    Tensor x({batch, 256}), y({batch, 64});
    x.data = aotrun::test::mlp_reference_input(batch, static_cast<uint64_t>(batch) + 11);
    x.rebind();
    AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
    const std::vector<float> expect = ref.forward(x.data, batch);
    ASSERT_EQ(expect.size(), y.data.size());
    double worst = 0;
    for (size_t i = 0; i < expect.size(); ++i) {
      worst = std::max(worst,
                       std::fabs(double(y.data[i]) - double(expect[i])) / std::max(1.0, std::fabs(double(expect[i]))));
    }
    EXPECT_LE(worst, 1e-4) << "batch " << batch << " mode " << aotrun_mode_name(GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, MlpThroughRunner,
                         testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(aotrun_mode_name(i.param));
                         });
