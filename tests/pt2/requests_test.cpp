// Bad requests to a .pt2 (issue #29), through libaotrun's C API: the
// requests an LLM service receives most (token ids outside the vocabulary,
// negative ids, a sequence longer than the model's position table, an
// attention mask whose dims disagree with the ids) are each an
// INVALID_ARGUMENT naming the input, on every path into the model (run in
// every mode, async, graph replay, output shape query, run_alloc), and the
// process goes on serving: the next good request is right.
//
// The model (tests/pt2/requests/export_models.py, torch 2.15) indexes a
// 500-row token table and a 64-row position table inside OpenMP kernels:
// there a failed index check ends the process (PyTorch's own loader aborts
// with "index out of bounds: 0 <= tmp2 < 500L" on the first bad id).
// The same for transformers' GPT-2 and BERT (Architectures). Provider:
// AOTRUN_LIBTORCH (libtorch, skipped without) or, in the shim.* variant,
// aotrun's own shim.
#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "../core/test_util.hpp"
#include "../shim/npy.hpp"
#include "require_libtorch.hpp"

using namespace aotrun_test;

namespace {

const std::string kDir = AOTRUN_PT2_REQUESTS;
const std::string kModel = kDir + "/ids_mask.pt2";
constexpr int64_t kVocab = 500;

// An array the C API can take: .npy contents, or a shape filled in place.
struct Array {
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  DLDataType dtype{kDLFloat, 32, 1};
  DLTensor dl{};
  static Array load(const std::string& file) {
    const Npy n = read_npy(kDir + "/" + file);
    Array a;
    a.shape = n.shape;
    a.bytes = n.data;
    a.dtype = n.descr == "<i8" ? DLDataType{kDLInt, 64, 1} : DLDataType{kDLFloat, 32, 1};
    a.bind();
    return a;
  }
  static Array filled(std::vector<int64_t> shape, DLDataType dtype, double value) {
    Array a;
    a.shape = std::move(shape);
    a.dtype = dtype;
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    a.bytes.resize(static_cast<size_t>(n) * dtype.bits / 8);
    for (int64_t i = 0; i < n; ++i) {
      if (dtype.code == kDLInt) {
        reinterpret_cast<int64_t*>(a.bytes.data())[i] = static_cast<int64_t>(value);
      } else {
        reinterpret_cast<float*>(a.bytes.data())[i] = static_cast<float>(value);
      }
    }
    a.bind();
    return a;
  }
  void bind() {
    dl = DLTensor{bytes.data(), {kDLCPU, 0}, static_cast<int>(shape.size()), dtype, shape.data(), nullptr, 0};
  }
  int64_t* ids() { return reinterpret_cast<int64_t*>(bytes.data()); }
  const float* f() const { return reinterpret_cast<const float*>(bytes.data()); }
};

// PyTorch's float32 defaults (torch.testing.assert_close).
std::string close(const Array& got, const Array& want) {
  if (got.shape != want.shape) return "shape differs";
  for (size_t i = 0; i < want.bytes.size() / 4; ++i) {
    const double a = got.f()[i], b = want.f()[i];
    if (!(std::fabs(a - b) <= 1e-5 + 1.3e-6 * std::fabs(b))) return "element " + std::to_string(i);
  }
  return "";
}

class Requests : public ::testing::TestWithParam<aotrun_mode> {
 protected:
  void SetUp() override {
    const char* lt = std::getenv("AOTRUN_LIBTORCH");
    if (lt == nullptr || *lt == '\0') GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH (or 'shim')";
    ids_ = Array::load("ids_mask.in0.npy");
    mask_ = Array::load("ids_mask.in1.npy");
    want_ = Array::load("ids_mask.out0.npy");
    pkg_ = std::make_unique<Package>(kModel);
    runner_ = std::make_unique<Runner>(*pkg_, RunnerOptions().mode(GetParam()));
  }
  Outcome run(const DLTensor& ids, const DLTensor& mask, Array* out) {
    const DLTensor in[2] = {ids, mask};
    return outcome(aotrun_runner_run(runner_->get(), in, 2, &out->dl, 1));
  }
  // A good request, right.
  void expect_good(const char* when) {
    Array out = Array::filled(want_.shape, want_.dtype, 0);
    const Outcome o = run(ids_.dl, mask_.dl, &out);
    ASSERT_EQ(o.code, AOTRUN_OK) << when << ": " << o.message;
    EXPECT_EQ(close(out, want_), "") << when;
  }
  Array ids_, mask_, want_;
  std::unique_ptr<Package> pkg_;
  std::unique_ptr<Runner> runner_;
};

TEST_P(Requests, GoodRequestMatchesEager) {
  expect_good("first");
  expect_good("again");
}

// Each id the model would look up out of its table, alone in an otherwise
// good request; refused before the model sees it, then a good one is right
// (in graph mode the bad request replays the graph the good one captured).
TEST_P(Requests, IdsOutsideTheVocabularyAreRefused) {
  expect_good("before");
  for (int64_t bad : {int64_t{-1}, kVocab, kVocab + 1, int64_t{1} << 40, int64_t{-501}}) {
    SCOPED_TRACE(bad);
    Array ids = ids_;
    ids.bind();
    ids.ids()[1 * ids.shape[1] + 4] = bad;
    Array out = Array::filled(want_.shape, want_.dtype, 7);
    const Outcome o = run(ids.dl, mask_.dl, &out);
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find("input 0"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("element [1, 4] is " + std::to_string(bad)), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("outside [0, 500)"), std::string::npos) << o.message;
    expect_good("after");
  }
  if (GetParam() == AOTRUN_MODE_GRAPH) {
    // One shape, one capture: every later request (bad ones too) replayed
    // it; the good ones count as replays.
    EXPECT_EQ(runner_->stats().graph_captures, 1u);
    EXPECT_GE(runner_->stats().graph_replays, 5u);
  }
}

TEST_P(Requests, AsyncRunWithABadIdFailsThatRunOnly) {
  Array ids = ids_;
  ids.bind();
  ids.ids()[0] = kVocab;
  Array bad_out = Array::filled(want_.shape, want_.dtype, 0), good_out = bad_out;
  good_out.bind();
  const DLTensor bad_in[2] = {ids.dl, mask_.dl}, good_in[2] = {ids_.dl, mask_.dl};
  aotrun_event *bad = nullptr, *good = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(runner_->get(), bad_in, 2, &bad_out.dl, 1, &bad));
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(runner_->get(), good_in, 2, &good_out.dl, 1, &good));
  const Outcome b = outcome(aotrun_event_wait(bad));
  EXPECT_EQ(b.code, AOTRUN_ERR_INVALID_ARGUMENT) << b.message;
  EXPECT_NE(b.message.find("outside [0, 500)"), std::string::npos) << b.message;
  AOTRUN_EXPECT_OK(aotrun_event_wait(good));
  EXPECT_EQ(close(good_out, want_), "");
  aotrun_event_free(bad);
  aotrun_event_free(good);
}

// ids [3, 9] with a mask of [3, 8] or [2, 9]: the model reads the mask with
// the ids' sizes (past its end), so the pair is refused naming both.
TEST_P(Requests, MaskWhoseDimsDisagreeWithTheIdsIsRefusedOnEveryPath) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 8}, std::vector<int64_t>{2, 9}}) {
    SCOPED_TRACE(shape[0] * 100 + shape[1]);
    Array mask = Array::filled(shape, DLDataType{kDLFloat, 32, 1}, 1);
    Array out = Array::filled(want_.shape, want_.dtype, 0);
    const Outcome o = run(ids_.dl, mask.dl, &out);
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find("input 1"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("input 0"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("must agree"), std::string::npos) << o.message;
    const DLTensor in[2] = {ids_.dl, mask.dl};
    int64_t shapes[8] = {};
    const Outcome q = outcome(aotrun_runner_get_output_shapes(runner_->get(), in, 2, shapes, 8));
    EXPECT_EQ(q.code, AOTRUN_ERR_INVALID_ARGUMENT) << q.message;
    DLManagedTensor* owned = nullptr;
    const Outcome a = outcome(aotrun_runner_run_alloc(runner_->get(), in, 2, &owned, 1));
    EXPECT_EQ(a.code, AOTRUN_ERR_INVALID_ARGUMENT) << a.message;
    EXPECT_EQ(owned, nullptr);
  }
  expect_good("after");
}

// 65 tokens to a model with 64 positions: refused on every path, the shape
// query included (it runs the model, and its position check would fire).
TEST_P(Requests, OverlongSequenceIsRefusedOnEveryPath) {
  Array ids = Array::filled({2, 65}, DLDataType{kDLInt, 64, 1}, 3);
  Array mask = Array::filled({2, 65}, DLDataType{kDLFloat, 32, 1}, 1);
  const DLTensor in[2] = {ids.dl, mask.dl};
  int64_t shapes[8] = {};
  const Outcome q = outcome(aotrun_runner_get_output_shapes(runner_->get(), in, 2, shapes, 8));
  EXPECT_EQ(q.code, AOTRUN_ERR_INVALID_ARGUMENT) << q.message;
  EXPECT_NE(q.message.find("[2, 64]"), std::string::npos) << q.message;
  Array out = Array::filled({2, 64}, DLDataType{kDLFloat, 32, 1}, 0);
  const Outcome r = run(ids.dl, mask.dl, &out);
  EXPECT_EQ(r.code, AOTRUN_ERR_INVALID_ARGUMENT) << r.message;
  DLManagedTensor* owned = nullptr;
  const Outcome a = outcome(aotrun_runner_run_alloc(runner_->get(), in, 2, &owned, 1));
  EXPECT_EQ(a.code, AOTRUN_ERR_INVALID_ARGUMENT) << a.message;
  expect_good("after");
}

// The same with pt2_above_compiled_max (issue #40): the position index is
// computed from the sequence, so the option would remove the only guard in
// front of a check inside parallel code (which ends the process). Refused on
// every path, naming the check; the refusal without the option does not
// recommend it.
TEST_P(Requests, OverlongSequenceIsRefusedEvenAboveCompiledMax) {
  Array ids = Array::filled({2, 65}, DLDataType{kDLInt, 64, 1}, 3);
  Array mask = Array::filled({2, 65}, DLDataType{kDLFloat, 32, 1}, 1);
  const DLTensor in[2] = {ids.dl, mask.dl};
  Array out = Array::filled({2, 64}, DLDataType{kDLFloat, 32, 1}, 0);
  const Outcome plain = run(ids.dl, mask.dl, &out);
  EXPECT_EQ(plain.code, AOTRUN_ERR_INVALID_ARGUMENT) << plain.message;
  EXPECT_NE(plain.message.find("refused even with pt2_above_compiled_max"), std::string::npos) << plain.message;
  EXPECT_EQ(plain.message.find("open the package with pt2_above_compiled_max"), std::string::npos) << plain.message;

  Package above(kModel, PackageOptions().pt2_above_compiled_max(true));
  Runner r(above, RunnerOptions().mode(GetParam()));
  const Outcome o = outcome(aotrun_runner_run(r.get(), in, 2, &out.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("index out of bounds"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("[2, 64]"), std::string::npos) << o.message;
  int64_t shapes[8] = {};
  EXPECT_EQ(outcome(aotrun_runner_get_output_shapes(r.get(), in, 2, shapes, 8)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  DLManagedTensor* owned = nullptr;
  EXPECT_EQ(outcome(aotrun_runner_run_alloc(r.get(), in, 2, &owned, 1)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(owned, nullptr);
  // The runner with the option still runs what is inside the range.
  Array good = Array::filled(want_.shape, want_.dtype, 0);
  const DLTensor gin[2] = {ids_.dl, mask_.dl};
  AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), gin, 2, &good.dl, 1));
  EXPECT_EQ(close(good, want_), "");
}

// Real architectures (transformers' GPT-2 and BERT, vocabulary 1000, 128
// positions, exported by export_models.py): ids outside the vocabulary and
// 129 tokens refused naming the input, BERT's mask checked against its ids,
// and the next good request equal to eager PyTorch, in every mode.
struct Arch {
  const char* model;
  size_t inputs;
};
void PrintTo(const Arch& a, std::ostream* os) { *os << a.model; }

class Architectures : public ::testing::TestWithParam<std::tuple<Arch, aotrun_mode>> {
 protected:
  void SetUp() override {
    const char* lt = std::getenv("AOTRUN_LIBTORCH");
    if (lt == nullptr || *lt == '\0') GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH (or 'shim')";
    const Arch a = std::get<0>(GetParam());
    for (size_t i = 0; i < a.inputs; ++i)
      in_.push_back(Array::load(std::string(a.model) + ".in" + std::to_string(i) + ".npy"));
    want_ = Array::load(std::string(a.model) + ".out0.npy");
    pkg_ = std::make_unique<Package>(kDir + "/" + a.model + ".pt2");
    runner_ = std::make_unique<Runner>(*pkg_, RunnerOptions().mode(std::get<1>(GetParam())));
  }
  Outcome run(std::vector<Array>& in, Array* out) {
    std::vector<DLTensor> dl;
    for (auto& a : in) {
      a.bind();
      dl.push_back(a.dl);
    }
    return outcome(aotrun_runner_run(runner_->get(), dl.data(), dl.size(), &out->dl, 1));
  }
  void expect_good(const char* when) {
    Array out = Array::filled(want_.shape, want_.dtype, 0);
    const Outcome o = run(in_, &out);
    ASSERT_EQ(o.code, AOTRUN_OK) << when << ": " << o.message;
    EXPECT_EQ(close(out, want_), "") << when;
  }
  std::string a_name() const { return std::get<0>(GetParam()).model; }
  std::vector<Array> in_;
  Array want_;
  std::unique_ptr<Package> pkg_;
  std::unique_ptr<Runner> runner_;
};

TEST_P(Architectures, BadIdsAndOverlongSequencesAreRefused) {
  expect_good("before");
  for (int64_t bad : {int64_t{-1}, int64_t{1000}, int64_t{1001}, int64_t{1} << 40}) {
    SCOPED_TRACE(bad);
    std::vector<Array> in = in_;
    in[0].bind();
    in[0].ids()[1 * in[0].shape[1] + 2] = bad;
    Array out = Array::filled(want_.shape, want_.dtype, 0);
    const Outcome o = run(in, &out);
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find("element [1, 2] is " + std::to_string(bad) + ", outside [0, 1000)"), std::string::npos)
        << o.message;
    expect_good("after a bad id");
  }
  std::vector<Array> longer;
  for (size_t i = 0; i < in_.size(); ++i) longer.push_back(Array::filled({2, 129}, in_[i].dtype, 1));
  Array out = Array::filled({2, 129, want_.shape[2]}, want_.dtype, 0);
  const Outcome o = run(longer, &out);
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("dim 1 is 129, outside the range the model was compiled for [2, 128]"), std::string::npos)
      << o.message;
  {
    // With pt2_above_compiled_max too: the position table would be read
    // past its end (issue #40).
    Package above(kDir + "/" + a_name() + ".pt2", PackageOptions().pt2_above_compiled_max(true));
    Runner r(above, RunnerOptions().mode(std::get<1>(GetParam())));
    std::vector<DLTensor> dl;
    for (auto& x : longer) dl.push_back(x.dl);
    const Outcome w = outcome(aotrun_runner_run(r.get(), dl.data(), dl.size(), &out.dl, 1));
    EXPECT_EQ(w.code, AOTRUN_ERR_INVALID_ARGUMENT) << w.message;
    EXPECT_NE(w.message.find("refused even with pt2_above_compiled_max"), std::string::npos) << w.message;
  }
  if (in_.size() == 2) {  // BERT: a mask one token short
    std::vector<Array> in = in_;
    in[1] = Array::filled({in_[1].shape[0], in_[1].shape[1] - 1}, in_[1].dtype, 1);
    const Outcome m = run(in, &out);
    EXPECT_EQ(m.code, AOTRUN_ERR_INVALID_ARGUMENT) << m.message;
    EXPECT_NE(m.message.find("must agree"), std::string::npos) << m.message;
  }
  expect_good("after");
}

// Batch 1 of models exported with Dim(min=1): the compiled code assumes 2 and
// up (torch's 0/1 specialisation), so a lone row is refused saying why, and
// with pad_batch it runs padded to 2 rows and equals eager PyTorch's row.
TEST_P(Architectures, BatchOneRunsPaddedWithPadBatch) {
  const Arch a = std::get<0>(GetParam());
  std::vector<Array> one;
  for (const Array& x : in_) {
    Array r = x;
    r.shape[0] = 1;
    r.bytes.resize(r.bytes.size() / static_cast<size_t>(x.shape[0]));
    one.push_back(r);
  }
  Array want = want_;
  want.shape[0] = 1;
  want.bytes.resize(want.bytes.size() / static_cast<size_t>(want_.shape[0]));
  Array out = Array::filled(want.shape, want.dtype, 0);
  const Outcome refused = run(one, &out);
  EXPECT_EQ(refused.code, AOTRUN_ERR_INVALID_ARGUMENT) << refused.message;
  EXPECT_NE(refused.message.find("open the package with pad_batch"), std::string::npos) << refused.message;

  Package padded(kDir + "/" + a.model + ".pt2", PackageOptions().pt2_pad_batch(true));
  Runner r(padded, RunnerOptions().mode(std::get<1>(GetParam())));
  std::vector<DLTensor> dl;
  for (auto& x : one) {
    x.bind();
    dl.push_back(x.dl);
  }
  int64_t shapes[8] = {};
  AOTRUN_ASSERT_OK(aotrun_runner_get_output_shapes(r.get(), dl.data(), dl.size(), shapes, 8));
  EXPECT_EQ(shapes[0], 1);
  for (int round = 0; round < 3; ++round) {  // graph mode: capture, then replays
    out = Array::filled(want.shape, want.dtype, 0);
    AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), dl.data(), dl.size(), &out.dl, 1));
    EXPECT_EQ(close(out, want), "") << "round " << round;
  }
  if (one.size() == 2) {  // BERT: ids of 1 row with a mask of 2 is refused, never half padded
    DLTensor mixed[2] = {one[0].dl, in_[1].dl};
    in_[1].bind();
    mixed[1] = in_[1].dl;
    const Outcome o = outcome(aotrun_runner_run(r.get(), mixed, 2, &out.dl, 1));
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  }
  // The full batch on the same runner is untouched by the padding.
  Array full = Array::filled(want_.shape, want_.dtype, 0);
  std::vector<DLTensor> all;
  for (auto& x : in_) {
    x.bind();
    all.push_back(x.dl);
  }
  AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), all.data(), all.size(), &full.dl, 1));
  EXPECT_EQ(close(full, want_), "");
}

INSTANTIATE_TEST_SUITE_P(Models, Architectures,
                         ::testing::Combine(::testing::Values(Arch{"gpt2", 1}, Arch{"bert", 2}),
                                            ::testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED,
                                                              AOTRUN_MODE_GRAPH)),
                         [](const ::testing::TestParamInfo<std::tuple<Arch, aotrun_mode>>& i) {
                           const aotrun_mode m = std::get<1>(i.param);
                           return std::string(std::get<0>(i.param).model) + "_" +
                                  (m == AOTRUN_MODE_SINGLE_THREADED ? "single" : aotrun_mode_name(m));
                         });

INSTANTIATE_TEST_SUITE_P(Modes, Requests,
                         ::testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<aotrun_mode>& i) {
                           return std::string(i.param == AOTRUN_MODE_SINGLE_THREADED ? "single"
                                                                                     : aotrun_mode_name(i.param));
                         });

}  // namespace
