// Frozen exports (torch._inductor.config.freezing = True, PyTorch's CPU
// inference recipe; issue #38), exported by tests/pt2/frozen/export_frozen.py
// (torch 2.15), through libaotrun's C API in every mode against eager
// PyTorch (float32 assert_close tolerances): an MLP (linear + GELU, a
// residual add fused into the linear, ReLU), a channels_last Conv-BN-ReLU
// net, a ResNet-style net at a dynamic batch (plain conv weights, packed fc)
// and at a static one (every weight packed, residual adds fused in place),
// the attr vocabulary, a transposed convolution, and torchvision's
// MobileNetV3-small in channels_last, a bidirectional LSTM tagger (two
// outputs). Their weights are
// oneDNN-packed constants (the mkldnn layout) and their ops the fused mkldnn
// ones (docs/SHIM.md, "Frozen exports").
// On aotrun's shim (the shim.* variant, AOTRUN_LIBTORCH=shim) it also counts
// oneDNN's reorders (dnnl_set_verbose, stdout captured) over repeated runs:
// the packed weights are read (unpacked or reordered for a convolution
// primitive) at their first run, and what is derived is kept; later runs of
// the models whose weights are all packed reorder nothing.
// Provider: AOTRUN_LIBTORCH (libtorch, skipped without) or aotrun's shim.
#include <dlfcn.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../core/test_util.hpp"
#include "../shim/npy.hpp"
#include "../shim/onednn_verbose.hpp"

using namespace aotrun_test;

namespace {

const std::string kDir = AOTRUN_PT2_FROZEN;

struct Array {
  std::vector<int64_t> shape, strides;
  std::vector<char> bytes;
  DLTensor dl{};
  static Array load(const std::string& file, bool channels_last = false) {
    const Npy n = read_npy(kDir + "/" + file);
    Array a;
    a.shape = n.shape;
    a.bytes = n.data;
    if (channels_last && a.shape.size() == 4) {  // the same values in NHWC memory
      const int64_t b = a.shape[0], c = a.shape[1], h = a.shape[2], w = a.shape[3];
      const float* src = reinterpret_cast<const float*>(n.data.data());
      float* dst = reinterpret_cast<float*>(a.bytes.data());
      for (int64_t i = 0; i < b; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x) dst[((i * h + y) * w + x) * c + ch] = src[((i * c + ch) * h + y) * w + x];
      a.strides = {h * w * c, 1, w * c, c};
    }
    a.bind();
    return a;
  }
  static Array zeros(std::vector<int64_t> shape) {
    Array a;
    a.shape = std::move(shape);
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    a.bytes.assign(static_cast<size_t>(n) * 4, 0);
    a.bind();
    return a;
  }
  void bind() {
    dl = DLTensor{bytes.data(),
                  {kDLCPU, 0},
                  static_cast<int>(shape.size()),
                  DLDataType{kDLFloat, 32, 1},
                  shape.data(),
                  strides.empty() ? nullptr : strides.data(),
                  0};
  }
  const float* f() const { return reinterpret_cast<const float*>(bytes.data()); }
};

// torch.testing.assert_close's float32 defaults.
std::string close(const Array& got, const Array& want) {
  if (got.shape != want.shape) return "shape differs";
  for (size_t i = 0; i < want.bytes.size() / 4; ++i) {
    const double a = got.f()[i], b = want.f()[i];
    if (!(std::fabs(a - b) <= 1e-5 + 1.3e-6 * std::fabs(b))) {
      return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b);
    }
  }
  return "";
}

nlohmann::json manifest() {
  std::ifstream f(kDir + "/manifest.json");
  return nlohmann::json::parse(f);
}

bool on_shim() {
  const char* lt = std::getenv("AOTRUN_LIBTORCH");
  return lt != nullptr && std::string(lt) == "shim";
}

class Frozen : public ::testing::TestWithParam<aotrun_mode> {
 protected:
  void SetUp() override {
    const char* lt = std::getenv("AOTRUN_LIBTORCH");
    if (lt == nullptr || *lt == '\0') GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH (or 'shim')";
  }
  static void run_case(Runner& r, const nlohmann::json& m, const nlohmann::json& c) {
    const std::string prefix = c["prefix"];
    std::vector<Array> in;
    for (size_t i = 0; i < m["inputs"].size(); ++i) {
      const bool cl = m["memory_format"][i] == "channels_last";
      in.push_back(Array::load(prefix + ".in" + std::to_string(i) + ".npy", cl));
    }
    std::vector<Array> want, got;
    for (size_t k = 0; k < c["outputs"].size(); ++k) {
      want.push_back(Array::load(prefix + ".out" + std::to_string(k) + ".npy"));
      got.push_back(Array::zeros(want.back().shape));
    }
    std::vector<DLTensor> dl, out;
    for (auto& a : in) dl.push_back(a.dl);
    for (auto& a : got) out.push_back(a.dl);
    const Outcome o = outcome(aotrun_runner_run(r.get(), dl.data(), dl.size(), out.data(), out.size()));
    ASSERT_EQ(o.code, AOTRUN_OK) << prefix << ": " << o.message;
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(close(got[k], want[k]), "") << prefix << " output " << k;
  }
  // Opens `model` (on aotrun's shim in the shim.* variant, where it must
  // say so), runs every case here, then on another thread; on the shim
  // counts the reorders of `runs` more rounds of every case.
  void sweep(const std::string& model, bool all_packed) {
    const nlohmann::json m = manifest()[model];
    Package pkg(kDir + "/" + model + ".pt2");
    const char *provider = nullptr, *reason = nullptr;
    ASSERT_EQ(outcome(aotrun_package_get_provider(pkg.get(), &provider, &reason)).code, AOTRUN_OK);
    if (on_shim()) {
      EXPECT_STREQ(provider, "shim") << reason;
    }
    Runner r(pkg, RunnerOptions().mode(GetParam()));
    for (const auto& c : m["cases"]) run_case(r, m, c);
    std::thread t([&] {
      for (const auto& c : m["cases"]) run_case(r, m, c);
    });
    t.join();
    if (!on_shim()) return;
    constexpr int kRounds = 3;
    const int reorders = count_reorders([&] {
      for (int i = 0; i < kRounds; ++i)
        for (const auto& c : m["cases"]) run_case(r, m, c);
    });
    ASSERT_GE(reorders, 0) << "oneDNN (libdnnl.so.2) is not loaded";
    std::printf("%s: %d oneDNN reorders in %d more rounds of %zu case(s)\n", model.c_str(), reorders, kRounds,
                m["cases"].size());
    if (all_packed) {
      EXPECT_EQ(reorders, 0) << model << ": a packed weight was reordered again";
    }
  }
};

// Constant updates on a frozen model: a packed weight (oneDNN's blocked
// layout) is refused naming it, never read as the wrong layout; a plain
// constant beside it updates (the outputs move), and swapping back to the
// package's own set gives eager's outputs again: the packed weights the new
// container holds are the model's own.
TEST_P(Frozen, PackedConstantsAreRefusedForUpdatePlainOnesUpdate) {
  const nlohmann::json m = manifest()["mlp"];
  Package pkg(kDir + "/mlp.pt2");
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  std::vector<float> weight(256 * 64, 0.5f), bias(16, 3.0f);
  std::vector<int64_t> wshape = {256, 64}, bshape = {16};
  aotrun_named_tensor packed{
      "_frozen_param3",
      DLTensor{weight.data(), {kDLCPU, 0}, 2, DLDataType{kDLFloat, 32, 1}, wshape.data(), nullptr, 0}};
  const Outcome refused = outcome(aotrun_runner_update_constants(r.get(), &packed, 1, 0));
  EXPECT_EQ(refused.code, AOTRUN_ERR_UNSUPPORTED) << refused.message;
  EXPECT_NE(refused.message.find("_frozen_param3"), std::string::npos) << refused.message;
  EXPECT_NE(refused.message.find("blocked layout"), std::string::npos) << refused.message;
  run_case(r, m, m["cases"][0]);  // unchanged

  aotrun_named_tensor plain{
      "l3_bias", DLTensor{bias.data(), {kDLCPU, 0}, 1, DLDataType{kDLFloat, 32, 1}, bshape.data(), nullptr, 0}};
  AOTRUN_ASSERT_OK(aotrun_runner_update_constants(r.get(), &plain, 1, 0));
  AOTRUN_ASSERT_OK(aotrun_runner_swap_constants(r.get()));
  const std::string prefix = m["cases"][0]["prefix"];
  Array x = Array::load(prefix + ".in0.npy");
  const Array want = Array::load(prefix + ".out0.npy");
  Array got = Array::zeros(want.shape);
  AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), &x.dl, 1, &got.dl, 1));
  EXPECT_NE(close(got, want), "") << "the updated bias changed nothing";
  AOTRUN_ASSERT_OK(aotrun_runner_swap_constants(r.get()));  // back to the package's own set
  run_case(r, m, m["cases"][0]);
}

TEST_P(Frozen, MlpWithFusedGeluAndResidual) { sweep("mlp", true); }
TEST_P(Frozen, ChannelsLastConvBnRelu) { sweep("cbr_cl", true); }
// Dynamic batch: the conv weights stay plain (channels_last), reordered into
// the convolution primitive's layout on every run as unfrozen models' are;
// only the fc weight is packed.
TEST_P(Frozen, ResNetDynamicBatch) { sweep("resnet", false); }
TEST_P(Frozen, ResNetStaticBatchEveryWeightPacked) { sweep("resnet_static", true); }
TEST_P(Frozen, AttrVocabulary) { sweep("acts", true); }
TEST_P(Frozen, TransposedConvolutionHardswish) { sweep("upconv", true); }
// torchvision's MobileNetV3-small (width 0.5) in channels_last at a static
// batch: depthwise convolutions, hardswish, squeeze-excitation.
TEST_P(Frozen, MobileNetV3ChannelsLast) { sweep("mobilenet", true); }
// Every nn.LSTM lowers to aoti_torch_cpu_mkldnn_rnn_layer, one call per
// layer and direction (aotrun-shim 1.4), here with packed weights.
TEST_P(Frozen, BidirectionalLstmTagger) { sweep("lstm", true); }

// Package open creates a container to read the specs, loading every weight;
// the first runner of one model instance takes it rather than loading them
// again (bridge.hpp, park_spare). Its runs are right; a second runner makes
// its own; a runner of two instances has open's destroyed first.
TEST_P(Frozen, TheFirstRunnerTakesTheContainerPackageOpenMade) {
  const nlohmann::json m = manifest()["mlp"];
  const aotrun_log_level level = aotrun_get_log_level();
  aotrun_set_log_level(AOTRUN_LOG_DEBUG);
  LogCapture log;
  {
    Package pkg(kDir + "/mlp.pt2");
    Runner a(pkg, RunnerOptions().mode(GetParam()));
    EXPECT_EQ(log.count_containing("the container package open made is the runner's"), 1u);
    Runner b(pkg, RunnerOptions().mode(GetParam()));
    EXPECT_EQ(log.count_containing("the container package open made"), 1u);
    for (const auto& c : m["cases"]) {
      run_case(a, m, c);
      run_case(b, m, c);
    }
  }
  {
    Package pkg(kDir + "/mlp.pt2");
    Runner two(pkg, RunnerOptions().mode(GetParam()).num_models(2));
    EXPECT_EQ(log.count_containing("the container package open made is destroyed first (2 model instances"), 1u);
    for (const auto& c : m["cases"]) run_case(two, m, c);
  }
  {
    Package unused(kDir + "/mlp.pt2");  // its container goes with it (ASan: nothing leaks)
  }
  aotrun_set_log_level(level);
}

// The packed weights are read when first used, not when the model loads:
// opening cbr_cl executes no reorder; its first run reads each of its three
// packed conv weights where the model keeps it when the export packed it in
// the layout the convolution primitive wants here (no reorder), else once
// (a reorder out of the blob) and reorders it at most once more (into the
// primitive's layout, kept with the constant); later runs reorder nothing.
TEST_P(Frozen, PackedConstantsAreUnpackedAtFirstUseNotAtLoad) {
  if (!on_shim()) GTEST_SKIP() << "counts aotrun's shim's oneDNN reorders";
  if (GetParam() != AOTRUN_MODE_THREADED) GTEST_SKIP() << "once is enough";
  int at_open = -1, first_run = -1, later = -1;
  std::unique_ptr<Package> pkg;
  std::unique_ptr<Runner> r;
  const nlohmann::json m = manifest()["cbr_cl"];
  // Another package first, so that the shim (and the oneDNN it links) is
  // loaded before counting.
  Package loader(kDir + "/upconv.pt2");
  at_open = count_reorders([&] {
    pkg = std::make_unique<Package>(kDir + "/cbr_cl.pt2");
    r = std::make_unique<Runner>(*pkg, RunnerOptions().mode(GetParam()));
  });
  first_run = count_reorders([&] { run_case(*r, m, m["cases"][0]); });
  later = count_reorders([&] {
    for (int i = 0; i < 5; ++i) run_case(*r, m, m["cases"][0]);
  });
  std::printf("cbr_cl: %d reorders at open, %d in the first run, %d in 5 later runs\n", at_open, first_run, later);
  ASSERT_GE(at_open, 0) << "oneDNN (libdnnl.so.2) is not loaded";
  EXPECT_EQ(at_open, 0) << "no packed weight is unpacked at load";
  EXPECT_LE(first_run, 6) << "at most one read and one reorder into its primitive's layout per weight";
  EXPECT_EQ(later, 0);
}

// An output-shape query runs the model only where the wrapper leaves an
// output dim open: resnet_static states every one, so its query (what
// run_alloc and callers that size their outputs first make before the
// first run) executes no convolution; the dynamic-batch resnet's query for
// a new batch runs the model once (a probe on zeros), and the same query
// again is answered from the cache.
TEST_P(Frozen, OutputShapeQueriesRunTheModelOnlyForOpenDims) {
  if (!on_shim()) GTEST_SKIP() << "counts aotrun's shim's oneDNN convolutions";
  if (GetParam() != AOTRUN_MODE_THREADED) GTEST_SKIP() << "once is enough";
  auto query = [](const char* model, std::vector<int64_t> in_shape, std::vector<int64_t>* shape) {
    Package pkg(kDir + "/" + std::string(model) + ".pt2");
    Runner r(pkg, RunnerOptions().mode(GetParam()));
    Array x = Array::zeros(in_shape);
    shape->assign(static_cast<size_t>(pkg.output(0).ndim), 0);
    int first = -1, again = -1;
    first = count_executed(",convolution,", [&] {
      AOTRUN_ASSERT_OK(aotrun_runner_get_output_shapes(r.get(), &x.dl, 1, shape->data(), shape->size()));
    });
    again = count_executed(",convolution,", [&] {
      AOTRUN_ASSERT_OK(aotrun_runner_get_output_shapes(r.get(), &x.dl, 1, shape->data(), shape->size()));
    });
    return std::make_pair(first, again);
  };
  Package loader(kDir + "/upconv.pt2");  // the shim and its oneDNN loaded before counting
  std::vector<int64_t> shape;
  const auto fixed = query("resnet_static", {2, 3, 64, 64}, &shape);
  ASSERT_GE(fixed.first, 0) << "oneDNN (libdnnl.so.2) is not loaded";
  const std::vector<int64_t> want_fixed = manifest()["resnet_static"]["cases"][0]["outputs"][0];
  EXPECT_EQ(shape, want_fixed);
  EXPECT_EQ(fixed.first, 0) << "every output dim is stated: the query runs nothing";
  EXPECT_EQ(fixed.second, 0);
  const auto open = query("resnet", {3, 3, 64, 64}, &shape);
  const std::vector<int64_t> want_open = manifest()["resnet"]["cases"][1]["outputs"][0];
  EXPECT_EQ(shape, want_open);
  EXPECT_GT(open.first, 0) << "an open batch dim: the first query for a batch runs the model once";
  EXPECT_EQ(open.second, 0) << "the same query again comes from the cache";
  std::printf("convolutions executed by output-shape queries: resnet_static %d then %d, resnet (batch 3) %d then %d\n",
              fixed.first, fixed.second, open.first, open.second);
}

INSTANTIATE_TEST_SUITE_P(Modes, Frozen,
                         ::testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const auto& info) {
                           return std::string(info.param == AOTRUN_MODE_THREADED          ? "threaded"
                                              : info.param == AOTRUN_MODE_SINGLE_THREADED ? "single_threaded"
                                                                                          : "graph");
                         });

}  // namespace
