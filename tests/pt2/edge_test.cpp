// Models at the edges users reach (issue #40), exported by
// tests/pt2/edge/export_edge.py (torch 2.15), through libaotrun's C API in
// every mode, each request from a thread other than the one that opened the
// package, against eager PyTorch:
//  - conv1d_stem, dilated: convolutions oneDNN runs on its GEMM path, which
//    crashed (SIGSEGV) when run on a thread other than the one that first ran
//    the shape;
//  - strided_len: an output length (length - 4) // 4 + 1 that neighbouring
//    probe sizes do not move, declared fixed and every request refused;
//  - data_len: an output whose size is read from the input's values during
//    the run; declared [2, 0] before, now dynamic; queries for its shape and
//    caller-allocated runs refused saying why, run_alloc sizing it in the run;
//  - proxy: torch.linalg.inv, torch.linalg.solve and torch.unique, which the
//    model calls through AOTInductor's proxy executor: run on aotrun's shim
//    (a singular matrix fails the run with libtorch's message), refused at
//    open on libtorch naming the ops;
//  - fft: torch.fft.rfft(x).abs() and torch.fft.fftn(h, dim=(1, 2)).real,
//    the C shim's _fft_r2c, _fft_c2c, abs and view_as_real fallbacks;
//  - scans: cummax, cummin, logcumsumexp and nonzero_static.
//  - median: torch.median(x, dim, keepdim) (NaN, ties, -0.0; int64 lines of
//    even length), aten::median.dim through the proxy executor;
//  - spectral: irfft(rfft(x) * w), irfft(rfft(x) * g), irfft(rfft(x)[..., :5])
//    and irfft(rfft(x) * w + rfft(x)) (n=16), the C shim's mul_Tensor,
//    slice_Tensor and view_dtype on complex64, constant_pad_nd and _fft_c2r
//    through the proxy executor.
//  - spectrum_zero: irfft(cat([X[..., :5], zeros_like(X[..., 5:])], -1)) and
//    irfft(Y) after Y[..., 5:] = 0, the C shim's cat on complex64, aten::full
//    and aten::slice_scatter through the proxy executor.
//  - int4_linear: int4 weight-only linears (float32 and bfloat16), the C
//    shim's _weight_int4pack_mm_cpu_tensor.
//  - cl_param: a parameter kept channels-last, read by Inductor's own kernel
//    by those strides, replaced through the update API (row-major values).
//  - repeated_outputs: one tensor returned as two outputs (one handle handed
//    out twice by the model), and the input returned as two more.
//  - pooling: the pools Inductor hands to ATen (large windows, adaptive
//    sizes that do not divide, 3-d adaptive pools), the C shim's pooling.
//  - vlm_merge: masked_scatter of image features into text embeddings, and
//    a boolean-mask selection whose size is known after the run.
//  - stats: histc, the median of a whole tensor, mode, nanmedian along a dim
//    and bincount (a size known after the run).
//  - geometry: nn.Bilinear, torch.pdist and a 3-d F.grid_sample, the C
//    shim's _trilinear, _pdist_forward and grid_sampler_3d.
// Provider: AOTRUN_LIBTORCH (libtorch, skipped without) or, in the shim.*
// variant, aotrun's own shim.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../core/test_util.hpp"
#include "../shim/npy.hpp"

using namespace aotrun_test;

namespace {

const std::string kDir = AOTRUN_PT2_EDGE;

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
    a.dtype = n.descr == "<i8"   ? DLDataType{kDLInt, 64, 1}
              : n.descr == "<c8" ? DLDataType{kDLComplex, 64, 1}  // compared as float32 pairs
                                 : DLDataType{kDLFloat, 32, 1};
    a.bind();
    return a;
  }
  static Array zeros(std::vector<int64_t> shape, DLDataType dtype = DLDataType{kDLFloat, 32, 1}) {
    Array a;
    a.shape = std::move(shape);
    a.dtype = dtype;
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    a.bytes.assign(static_cast<size_t>(n) * (dtype.bits / 8), 0);
    a.bind();
    return a;
  }
  void bind() {
    dl = DLTensor{bytes.data(), {kDLCPU, 0}, static_cast<int>(shape.size()), dtype, shape.data(), nullptr, 0};
  }
  const float* f() const { return reinterpret_cast<const float*>(bytes.data()); }
};

// torch.testing.assert_close's float32 defaults; integers exactly.
std::string close(const Array& got, const Array& want) {
  if (got.shape != want.shape) return "shape differs";
  if (want.dtype.code == kDLInt) return got.bytes == want.bytes ? "" : "integers differ";
  for (size_t i = 0; i < want.bytes.size() / 4; ++i) {
    const double a = got.f()[i], b = want.f()[i];
    if (a == b || (std::isnan(a) && std::isnan(b))) continue;  // infinities; NaN where eager has NaN
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

class Edge : public ::testing::TestWithParam<aotrun_mode> {
 protected:
  void SetUp() override {
    const char* lt = std::getenv("AOTRUN_LIBTORCH");
    if (lt == nullptr || *lt == '\0') GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH (or 'shim')";
  }
  // Every case of `model` in the manifest, run on `r` and compared with eager.
  static void run_case(Runner& r, const nlohmann::json& c, size_t n_in) {
    const std::string prefix = c["prefix"];
    std::vector<Array> in;
    for (size_t i = 0; i < n_in; ++i) in.push_back(Array::load(prefix + ".in" + std::to_string(i) + ".npy"));
    std::vector<Array> want, got;
    for (size_t k = 0; k < c["outputs"].size(); ++k) {
      want.push_back(Array::load(prefix + ".out" + std::to_string(k) + ".npy"));
      got.push_back(Array::zeros(want.back().shape, want.back().dtype));
    }
    std::vector<DLTensor> dl, out;
    for (auto& a : in) dl.push_back(a.dl);
    for (auto& a : got) out.push_back(a.dl);
    const Outcome o = outcome(aotrun_runner_run(r.get(), dl.data(), dl.size(), out.data(), out.size()));
    ASSERT_EQ(o.code, AOTRUN_OK) << prefix << ": " << o.message;
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(close(got[k], want[k]), "") << prefix << " output " << k;
  }
  // Opens `model` here, runs its first case here, then every case on a new
  // thread, then every case on two threads at once.
  void sweep(const std::string& model) {
    const nlohmann::json m = manifest()[model];
    const size_t n_in = m["inputs"].size();
    Package pkg(kDir + "/" + model + ".pt2");
    Runner r(pkg, RunnerOptions().mode(GetParam()));
    run_case(r, m["cases"][0], n_in);
    std::thread t([&] {
      for (const auto& c : m["cases"]) run_case(r, c, n_in);
    });
    t.join();
    std::thread a([&] {
      for (const auto& c : m["cases"]) run_case(r, c, n_in);
    });
    std::thread b([&] {
      for (const auto& c : m["cases"]) run_case(r, c, n_in);
    });
    a.join();
    b.join();
  }
};

TEST_P(Edge, SpeechStemConvolutionFromAnyThread) { sweep("conv1d_stem"); }

TEST_P(Edge, DilatedConvolutionFromAnyThread) { sweep("dilated"); }

// The output's length is a floor division of the input's: dynamic, and every
// length from the minimum to the maximum runs.
TEST_P(Edge, StridedDynamicLengthRunsAtEveryLength) {
  Package pkg(kDir + "/strided_len.pt2");
  const aotrun_tensor_info out = pkg.output(0);
  ASSERT_EQ(out.ndim, 3);
  EXPECT_EQ(out.shape[0], 2);
  EXPECT_EQ(out.shape[1], 8);
  EXPECT_EQ(out.shape[2], -1);
  sweep("strided_len");
}

// x[:, :lengths.max()]: the output's dim 1 is known only after the run. Not
// [2, 0] from a probe on zeros; the shape query and a caller-allocated run
// say why they cannot answer and what can; run_alloc runs it, the model
// sizing the output while it runs: every case (lengths differ) equal to
// eager, from the opening thread, another thread and two at once.
TEST_P(Edge, DataDependentOutputIsSizedByTheRun) {
  Package pkg(kDir + "/data_len.pt2");
  const aotrun_tensor_info out = pkg.output(0);
  ASSERT_EQ(out.ndim, 2);
  EXPECT_EQ(out.shape[1], -1);
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  Array x = Array::load("data_len.in0.npy"), lengths = Array::load("data_len.in1.npy");
  const DLTensor in[2] = {x.dl, lengths.dl};
  int64_t shapes[2] = {};
  const Outcome q = outcome(aotrun_runner_get_output_shapes(r.get(), in, 2, shapes, 2));
  EXPECT_EQ(q.code, AOTRUN_ERR_PACKAGE) << q.message;
  EXPECT_NE(q.message.find("depends on the values of the inputs"), std::string::npos) << q.message;
  EXPECT_NE(q.message.find("aotrun_runner_run_alloc"), std::string::npos) << q.message;
  const Array first = Array::load("data_len.out0.npy");
  Array got = Array::zeros(first.shape);
  const Outcome o = outcome(aotrun_runner_run(r.get(), in, 2, &got.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_PACKAGE) << o.message;
  EXPECT_NE(o.message.find("known only after the run"), std::string::npos) << o.message;

  const nlohmann::json m = manifest()["data_len"];
  auto run_all = [&] {
    for (const auto& c : m["cases"]) {
      const std::string prefix = c["prefix"];
      Array cx = Array::load(prefix + ".in0.npy"), cl = Array::load(prefix + ".in1.npy");
      const DLTensor ci[2] = {cx.dl, cl.dl};
      DLManagedTensor* owned = nullptr;
      const Outcome a = outcome(aotrun_runner_run_alloc(r.get(), ci, 2, &owned, 1));
      ASSERT_EQ(a.code, AOTRUN_OK) << prefix << ": " << a.message;
      ASSERT_NE(owned, nullptr);
      const Array want = Array::load(prefix + ".out0.npy");
      Array copy =
          Array::zeros(std::vector<int64_t>(owned->dl_tensor.shape, owned->dl_tensor.shape + owned->dl_tensor.ndim));
      if (!copy.bytes.empty())
        std::memcpy(copy.bytes.data(), owned->dl_tensor.data, copy.bytes.size());  // [2, 0]: none
      owned->deleter(owned);
      EXPECT_EQ(close(copy, want), "") << prefix;
    }
  };
  run_all();
  std::thread t(run_all);
  t.join();
  std::thread a(run_all), b(run_all);
  a.join();
  b.join();
  // Each run_alloc is one counted run (the refusals above are not runs).
  aotrun_runner_stats st{};
  st.struct_size = sizeof(st);
  ASSERT_EQ(outcome(aotrun_runner_get_stats(r.get(), &st)).code, AOTRUN_OK);
  EXPECT_EQ(st.runs, 4 * m["cases"].size());
}

bool on_shim() {
  const char* lt = std::getenv("AOTRUN_LIBTORCH");
  return lt != nullptr && std::string(lt) == "shim";
}

// linalg.inv, linalg.solve and unique run through the proxy executor that
// aotrun's shim makes from the model's extern kernel nodes; a singular matrix
// fails the run with libtorch's message and the runner goes on. On libtorch
// (whose executor is C++ inside libtorch) the package is refused at open,
// naming the ops, rather than failing in its first run.
TEST_P(Edge, ProxyExecutorOpsRunOnTheShimAndAreRefusedOnLibtorch) {
  const std::string path = kDir + "/proxy.pt2";
  if (!on_shim()) {
    aotrun_package* p = nullptr;
    const Outcome o = outcome(aotrun_package_open(path.c_str(), nullptr, &p));
    EXPECT_EQ(o.code, AOTRUN_ERR_UNSUPPORTED) << o.message;
    EXPECT_EQ(p, nullptr);
    for (const char* op : {"aten::linalg_inv_ex", "aten::_linalg_solve_ex", "aten::_unique2", "proxy executor"}) {
      EXPECT_NE(o.message.find(op), std::string::npos) << o.message;
    }
    return;
  }
  sweep("proxy");
  Package pkg(path);
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  Array a = Array::load("proxy.in0.npy"), b = Array::load("proxy.in1.npy"), ids = Array::load("proxy.in2.npy");
  float* m = reinterpret_cast<float*>(a.bytes.data()) + 16;  // matrix 1
  for (int j = 0; j < 4; ++j) m[2 * 4 + j] = 0.0f;           // row 2 zero: singular
  Array o0 = Array::zeros({2, 4, 3}), o1 = Array::zeros({2, 4, 3}), o2 = Array::zeros({}, DLDataType{kDLInt, 64, 1});
  const DLTensor in[3] = {a.dl, b.dl, ids.dl};
  DLTensor out[3] = {o0.dl, o1.dl, o2.dl};
  // On a thread of its own, which ends while the model is loaded: the
  // model's runtime keeps its last error message in thread-local storage,
  // freed when the thread ends (on a thread that outlives the package, it
  // stays until the thread ends, unreachable once the model is unloaded).
  Outcome o;
  std::thread([&] { o = outcome(aotrun_runner_run(r.get(), in, 3, out, 3)); }).join();
  EXPECT_EQ(o.code, AOTRUN_ERR_PACKAGE) << o.message;
  EXPECT_NE(o.message.find("(Batch element 1)"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("singular"), std::string::npos) << o.message;
  run_case(r, manifest()["proxy"]["cases"][0], 3);  // the runner goes on
}

// A spectrogram front end's rfft(x).abs() and FNet's fftn(h).real: the
// model calls the C shim's FFT fallbacks (aotrun-shim 1.4 runs them on KISS
// FFT), from any thread.
TEST_P(Edge, TorchFftFallbacksMatchEager) { sweep("fft"); }

// cummax/cummin (ties take the last index, a NaN sticks), logcumsumexp
// (-inf and NaN) and nonzero_static (padded with its fill value): the C
// shim's scan fallbacks (aotrun-shim 1.4), from any thread.
TEST_P(Edge, ScanFallbacksMatchEager) { sweep("scans"); }

// The pools Inductor hands to ATen: windows over 25 elements that are not
// the stride, adaptive pools to sizes that do not divide the input, every
// 3-d adaptive pool (torchvision's S3D, an SPP block): the C shim's
// avg_pool2d/3d, _adaptive_avg_pool2d/3d and adaptive_max_pool2d/3d
// (aotrun-shim 1.7) on a channels-last input with ties, from any thread.
TEST_P(Edge, PoolingFallbacksMatchEager) { sweep("pooling"); }

// nn.Bilinear (_trilinear), torch.pdist at p = 2 and 0.5 (_pdist_forward)
// and a 3-d F.grid_sample, bilinear with border padding and nearest with
// reflection (grid_sampler_3d): the C shim's (since aotrun-shim 1.8) against
// eager, from any thread.
TEST_P(Edge, GeometryFallbacksMatchEager) { sweep("geometry"); }

// A vision-language model's merge: image features scattered into the
// image-token positions of the text embeddings (masked_scatter), then the
// tokens that are not padding selected by a mask (index_Tensor, a size
// known only after the run): the C shim's masked_scatter and index_Tensor
// (aotrun-shim 1.7) at 6, 3 and 0 image tokens, outputs sized by the run,
// from any thread.
TEST_P(Edge, VisionLanguageMergeMatchesEager) {
  const nlohmann::json m = manifest()["vlm_merge"];
  Package pkg(kDir + "/vlm_merge.pt2");
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  auto run_all = [&] {
    for (const auto& c : m["cases"]) {
      const std::string prefix = c["prefix"];
      std::vector<Array> in;
      for (int i = 0; i < 3; ++i) in.push_back(Array::load(prefix + ".in" + std::to_string(i) + ".npy"));
      const DLTensor ci[3] = {in[0].dl, in[1].dl, in[2].dl};
      DLManagedTensor* owned[2] = {};
      const Outcome a = outcome(aotrun_runner_run_alloc(r.get(), ci, 3, owned, 2));
      ASSERT_EQ(a.code, AOTRUN_OK) << prefix << ": " << a.message;
      for (int k = 0; k < 2; ++k) {
        const DLTensor& t = owned[k]->dl_tensor;
        Array copy = Array::zeros(std::vector<int64_t>(t.shape, t.shape + t.ndim));
        if (!copy.bytes.empty()) std::memcpy(copy.bytes.data(), t.data, copy.bytes.size());
        owned[k]->deleter(owned[k]);
        EXPECT_EQ(close(copy, Array::load(prefix + ".out" + std::to_string(k) + ".npy")), "") << prefix << " " << k;
      }
    }
  };
  run_all();
  std::thread t(run_all);
  t.join();
  std::thread a(run_all), b(run_all);
  a.join();
  b.join();
}

// gpt-fast's int4 weight-only linear on CPU (packed weights, [K / G, N, 2]
// scales and zeros, a group-size constant): the C shim's
// _weight_int4pack_mm_cpu_tensor (aotrun-shim 1.4) in float32 and bfloat16,
// at every batch size swept, from any thread.
TEST_P(Edge, Int4WeightOnlyLinearMatchesEager) { sweep("int4_linear"); }

// A package that calls ops through the proxy executor, on libtorch: refused
// at open naming `ops` (libtorch's executor is C++ inside libtorch). True
// when that was checked (not on the shim).
bool refused_on_libtorch(const std::string& model, const std::vector<const char*>& ops) {
  if (on_shim()) return false;
  const std::string path = kDir + "/" + model + ".pt2";
  aotrun_package* p = nullptr;
  const Outcome o = outcome(aotrun_package_open(path.c_str(), nullptr, &p));
  EXPECT_EQ(o.code, AOTRUN_ERR_UNSUPPORTED) << o.message;
  EXPECT_EQ(p, nullptr);
  for (const char* op : ops) EXPECT_NE(o.message.find(op), std::string::npos) << o.message;
  return true;
}

// torch.median(x, dim, keepdim) (values and indices; a NaN wins, ties give
// libtorch's index, even lengths the lower median): aten::median.dim through
// the proxy executor (aotrun-shim 1.4), every case in every mode from
// several threads against eager.
TEST_P(Edge, MedianDimRunsOnTheShimAndIsRefusedOnLibtorch) {
  if (refused_on_libtorch("median", {"aten::median.dim", "proxy executor"})) return;
  sweep("median");
}

// The statistics fallbacks: histc (values outside the range and NaN not
// counted), the median of a whole tensor holding NaN, mode along a dim with
// ties and NaN, nanmedian along a dim (a row of NaN only) through the C
// shim's histc, median and mode and the proxy executor's aten::nanmedian.dim
// and aten::bincount (aotrun-shim 1.8), the last sized by the run (ids past
// minlength and not); every case in every mode from several threads against
// eager. libtorch's executor is inside libtorch: refused there at open.
TEST_P(Edge, StatisticsFallbacksMatchEager) {
  if (refused_on_libtorch("stats", {"aten::nanmedian.dim", "proxy executor"})) return;
  const nlohmann::json m = manifest()["stats"];
  Package pkg(kDir + "/stats.pt2");
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  auto run_all = [&] {
    for (const auto& c : m["cases"]) {
      const std::string prefix = c["prefix"];
      std::vector<Array> in;
      for (int i = 0; i < 2; ++i) in.push_back(Array::load(prefix + ".in" + std::to_string(i) + ".npy"));
      const DLTensor ci[2] = {in[0].dl, in[1].dl};
      DLManagedTensor* owned[5] = {};
      const Outcome a = outcome(aotrun_runner_run_alloc(r.get(), ci, 2, owned, 5));
      ASSERT_EQ(a.code, AOTRUN_OK) << prefix << ": " << a.message;
      for (int k = 0; k < 5; ++k) {
        const DLTensor& t = owned[k]->dl_tensor;
        const Array want = Array::load(prefix + ".out" + std::to_string(k) + ".npy");
        Array copy = Array::zeros(std::vector<int64_t>(t.shape, t.shape + t.ndim), want.dtype);
        if (!copy.bytes.empty()) std::memcpy(copy.bytes.data(), t.data, copy.bytes.size());
        owned[k]->deleter(owned[k]);
        EXPECT_EQ(close(copy, want), "") << prefix << " output " << k;
      }
    }
  };
  run_all();
  std::thread t(run_all);
  t.join();
  std::thread a(run_all), b(run_all);
  a.join();
  b.join();
}

// A spectrum multiplied by a complex weight and by a real input, sliced
// (high frequencies zeroed) and added to itself, then irfft: the C shim's
// complex mul_Tensor, slice_Tensor and view_dtype, and constant_pad_nd and
// _fft_c2r through the proxy executor (aotrun-shim 1.4).
TEST_P(Edge, SpectrumMultiplyAndSliceRunOnTheShimAndAreRefusedOnLibtorch) {
  if (refused_on_libtorch("spectral", {"aten::_fft_c2r", "aten::constant_pad_nd", "proxy executor"})) return;
  sweep("spectral");
}

// A spectrum rebuilt with its high frequencies zeroed (torch.cat of a slice
// and zeros_like) and one zeroed in place (Y[..., 5:] = 0), then irfft: the C
// shim's cat on complex64, aten::full and aten::slice_scatter through the
// proxy executor (aotrun-shim 1.4).
TEST_P(Edge, SpectrumZeroedByCatAndInPlaceRunsOnTheShimAndIsRefusedOnLibtorch) {
  if (refused_on_libtorch("spectrum_zero", {"aten::full", "aten::slice_scatter", "proxy executor"})) return;
  sweep("spectrum_zero");
}

// A complex64 constant (an nn.Parameter), a complex64 input and a complex64
// output, beside a real one: complex tensors cross aotrun's package layer as
// DLPack complex (kDLComplex, 64 bits), with the constant listed as such.
TEST_P(Edge, ComplexConstantsInputsAndOutputsCrossTheRuntime) {
  if (refused_on_libtorch("complex_io", {"aten::_fft_c2r", "proxy executor"})) return;
  Package pkg(kDir + "/complex_io.pt2");
  const aotrun_package_info info = pkg.info();
  ASSERT_EQ(info.num_constants, 1u);
  const aotrun_constant_info c = pkg.constant(0);
  EXPECT_EQ(c.dtype.code, kDLComplex);
  EXPECT_EQ(c.dtype.bits, 64);
  EXPECT_EQ(pkg.input(0).dtype.code, kDLComplex);
  EXPECT_EQ(pkg.output(0).dtype.code, kDLComplex);
  EXPECT_EQ(pkg.output(1).dtype.code, kDLFloat);
  sweep("complex_io");
}

// A parameter kept channels-last (p [1, 8, 4, 4], strides [128, 1, 32, 8]),
// which Inductor's own kernel reads by those strides, replaced with row-major
// values as the update API takes them: laid out as the model keeps it, so
// p[0, c, h, w] = c gives tanh(x * c + 1) and p's own values give eager's
// outputs again (handed over row-major as they were, the kernel would read
// them permuted; before, the update was refused as UNSUPPORTED).
TEST_P(Edge, ChannelsLastConstantIsReplacedInTheModelsLayout) {
  sweep("cl_param");
  Package pkg(kDir + "/cl_param.pt2");
  ASSERT_EQ(pkg.info().num_constants, 1u);
  const std::string name = pkg.constant(0).name;
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  const Array own = Array::load("cl_param.p.npy");
  ASSERT_EQ(own.shape, (std::vector<int64_t>{1, 8, 4, 4}));
  Array by_channel = Array::zeros(own.shape);
  float* pc = reinterpret_cast<float*>(by_channel.bytes.data());
  for (int64_t c = 0; c < 8; ++c) std::fill(pc + c * 16, pc + (c + 1) * 16, static_cast<float>(c));
  const nlohmann::json m = manifest()["cl_param"];
  for (const Array* p : {static_cast<const Array*>(&by_channel), &own}) {
    aotrun_named_tensor t{name.c_str(), p->dl};
    AOTRUN_ASSERT_OK(aotrun_runner_update_constants(r.get(), &t, 1, 0));
    AOTRUN_ASSERT_OK(aotrun_runner_swap_constants(r.get()));
    for (const auto& c : m["cases"]) {
      const std::string prefix = c["prefix"];
      if (p == &own) {
        run_case(r, c, 1);
        continue;
      }
      const Array x = Array::load(prefix + ".in0.npy");
      Array y = Array::zeros(x.shape);
      AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), &x.dl, 1, &y.dl, 1));
      for (int64_t i = 0; i < 2 * 8 * 16; ++i) {
        const float want = std::tanh(x.f()[i] * static_cast<float>(i / 16 % 8) + 1.0f);
        ASSERT_NEAR(y.f()[i], want, 1e-5f + 1e-5f * std::fabs(want)) << prefix << " element " << i;
      }
    }
  }
}

// A model that returns one tensor as two outputs, and its input as two more:
// AOTInductor hands its one handle out twice (output_handles[2] =
// output_handles[0]), and the bridge, which deleted every output handle, freed
// it twice (glibc: "double free detected", or heap corruption and a crash
// later; found on a HuggingFace BERT returning its hidden states). Every
// output equals eager in every mode and from several threads, also through
// run_alloc, where each output is a tensor of its own.
TEST_P(Edge, ATensorReturnedTwiceFillsBothOutputsAndIsFreedOnce) {
  sweep("repeated_outputs");
  Package pkg(kDir + "/repeated_outputs.pt2");
  ASSERT_EQ(pkg.info().num_outputs, 5u);
  Runner r(pkg, RunnerOptions().mode(GetParam()));
  const nlohmann::json m = manifest()["repeated_outputs"];
  for (int round = 0; round < 3; ++round) {
    for (const auto& c : m["cases"]) {
      const std::string prefix = c["prefix"];
      const Array x = Array::load(prefix + ".in0.npy");
      DLManagedTensor* owned[5] = {};
      AOTRUN_ASSERT_OK(aotrun_runner_run_alloc(r.get(), &x.dl, 1, owned, 5));
      for (size_t k = 0; k < 5; ++k) {
        ASSERT_NE(owned[k], nullptr);
        const Array want = Array::load(prefix + ".out" + std::to_string(k) + ".npy");
        Array got = Array::zeros(want.shape);
        std::memcpy(got.bytes.data(), owned[k]->dl_tensor.data, got.bytes.size());
        EXPECT_EQ(close(got, want), "") << prefix << " output " << k;
      }
      EXPECT_NE(owned[0]->dl_tensor.data, owned[2]->dl_tensor.data) << "two outputs share one buffer";
      for (DLManagedTensor* t : owned) t->deleter(t);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, Edge,
                         ::testing::Values(AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH),
                         [](const auto& info) {
                           return std::string(info.param == AOTRUN_MODE_THREADED          ? "threaded"
                                              : info.param == AOTRUN_MODE_SINGLE_THREADED ? "single_threaded"
                                                                                          : "graph");
                         });

}  // namespace
