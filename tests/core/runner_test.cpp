// Runner modes, the fallback table, argument validation and package failures.
#include <functional>
#include <thread>
#include <utility>

#include "test_util.hpp"

using namespace aotrun_test;

namespace {

std::string package_name(aotrun_package* p) {
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  aotrun_status_free(aotrun_package_get_info(p, &info));
  return info.name;
}

}  // namespace

TEST(Runner, ThreadedAndSingleThreadedRunTheModel) {
  Package pkg(pkg_path("counting"));
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED}) {
    Runner r(pkg, RunnerOptions().mode(m));
    EXPECT_EQ(aotrun_runner_mode(r.get()), m);
    Tensor x({3, 4}), y({3, 4});
    x.randomize(7);
    AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
    for (size_t i = 0; i < x.data.size(); ++i) ASSERT_FLOAT_EQ(y.data[i], x.data[i] + 1.f);
    auto st = r.stats();
    EXPECT_EQ(st.runs, 1u);
    EXPECT_EQ(st.fallback_runs, 0u);
    EXPECT_STREQ(st.fallback_reason, "");
  }
}

TEST(Runner, Abi10SingleThreadedFallsBackWithOneWarning) {
  LogCapture logs;
  Package pkg(pkg_path("mlp_abi10"));
  ASSERT_NE(pkg.get(), nullptr);
  const std::string name = package_name(pkg.get());
  const std::string expected = "package '" + name +
                               "' (ABI 1.0) lacks aotrun_pkg_container_run_single_threaded; "
                               "single_threaded runs fall back to aotrun_pkg_container_run";
  {
    Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    ASSERT_NE(r.get(), nullptr);
    EXPECT_EQ(aotrun_runner_mode(r.get()), AOTRUN_MODE_THREADED);
    Tensor x({2, 256}), y({2, 64});
    x.randomize(1);
    AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
    auto st = r.stats();
    EXPECT_EQ(st.requested_mode, AOTRUN_MODE_SINGLE_THREADED);
    EXPECT_EQ(st.effective_mode, AOTRUN_MODE_THREADED);
    EXPECT_EQ(st.fallback_runs, 1u);
    EXPECT_EQ(std::string(st.fallback_reason), expected);
  }
  Runner again(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));  // warned once per package...
  Runner graph(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));            // ...whichever mode falls back
  EXPECT_EQ(aotrun_runner_mode(graph.get()), AOTRUN_MODE_THREADED);
  auto msgs = logs.messages();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].first, AOTRUN_LOG_WARN);
  EXPECT_EQ(msgs[0].second, expected);
}

TEST(Runner, StrictTurnsFallbackIntoUnsupported) {
  Package pkg(pkg_path("noop_abi10"));
  for (aotrun_mode m : {AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    RunnerOptions o;
    o.mode(m).strict(true);
    aotrun_runner* r = nullptr;
    Outcome out = outcome(aotrun_runner_create(pkg.get(), o.get(), &r));
    EXPECT_EQ(out.code, AOTRUN_ERR_UNSUPPORTED);
    EXPECT_NE(out.message.find("aotrun_pkg_container_run_single_threaded"), std::string::npos) << out.message;
    EXPECT_NE(out.message.find("strict"), std::string::npos) << out.message;
    EXPECT_EQ(r, nullptr);
  }
}

TEST(Runner, GraphModeOnAbi10RunsEagerlyAndSaysWhy) {
  LogCapture logs;
  Package pkg(pkg_path("noop_abi10"));
  Runner r(pkg, RunnerOptions().mode(AOTRUN_MODE_GRAPH));
  EXPECT_EQ(aotrun_runner_mode(r.get()), AOTRUN_MODE_THREADED);
  Tensor x({1, 4}), y({1, 4});
  AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
  auto st = r.stats();
  EXPECT_NE(std::string(st.fallback_reason)
                .find("graph mode unavailable: package ABI 1.0 lacks aotrun_pkg_container_run_single_threaded"),
            std::string::npos)
      << st.fallback_reason;
  EXPECT_EQ(st.graph_captures, 0u);
  EXPECT_EQ(st.fallback_runs, 1u);
  EXPECT_EQ(logs.count_containing("graph mode unavailable"), 1u);
}

// A run that repeats the last validated run's descriptors skips the checks
// (runner.cpp, ShapeCache): every field the checks read must still be
// compared. Each case first runs valid descriptors, then changes one field of
// the same DLTensor in place (same address, same shape array) and must be
// refused, then runs the valid one again.
TEST(Runner, RepeatedDescriptorsAreRevalidatedWhenAnyFieldChanges) {
  Package pkg(pkg_path("counting"));
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(aotrun_mode_name(m));
    Runner r(pkg, RunnerOptions().mode(m));
    Tensor x({2, 4}, 1.f), y({2, 4});
    int64_t column_major[2] = {1, 2};
    const std::vector<std::pair<const char*, std::function<void(DLTensor&, DLTensor&)>>> changes = {
        {"dtype int32",
         [](DLTensor& in, DLTensor&) {
           in.dtype = DLDataType{kDLInt, 32, 1};
         }},
        {"NULL data", [](DLTensor& in, DLTensor&) { in.data = nullptr; }},
        {"not contiguous", [&](DLTensor& in, DLTensor&) { in.strides = column_major; }},
        {"device",
         [](DLTensor& in, DLTensor&) {
           in.device = DLDevice{kDLCUDA, 0};
         }},
        {"device",
         [](DLTensor& in, DLTensor&) {
           in.device = DLDevice{kDLCPU, 1};
         }},
        {"rank 1", [](DLTensor& in, DLTensor&) { in.ndim = 1; }},
        {"NULL shape", [](DLTensor& in, DLTensor&) { in.shape = nullptr; }},  // read before validation: fuzz_capi
        {"output 0 ('y') has a NULL shape", [](DLTensor&, DLTensor& out) { out.shape = nullptr; }},
        {"output 0 ('y') has dtype",
         [](DLTensor&, DLTensor& out) {
           out.dtype = DLDataType{kDLFloat, 64, 1};
         }},
        {"output 0 ('y') is not contiguous", [&](DLTensor&, DLTensor& out) { out.strides = column_major; }},
        {"runs past the end of the address space", [](DLTensor&, DLTensor& out) { out.byte_offset = UINT64_MAX - 8; }},
    };
    for (const auto& [needle, change] : changes) {
      SCOPED_TRACE(needle);
      AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
      AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));  // the repeat that skips the checks
      change(x.dl, y.dl);
      Outcome o = outcome(aotrun_runner_run(r.get(), &x.dl, 1, &y.dl, 1));
      EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
      EXPECT_NE(o.message.find(needle), std::string::npos) << o.message;
      x.rebind();
      y.rebind();
    }
    // A dim changed in the caller's own shape array, input and output.
    AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
    y.shape[0] = 3;
    Outcome o = outcome(aotrun_runner_run(r.get(), &x.dl, 1, &y.dl, 1));
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find("output 0 ('y') has shape [3, 4], expected [2, 4]"), std::string::npos) << o.message;
    y.shape[0] = 2;
    x.shape[1] = 5;
    o = outcome(aotrun_runner_run(r.get(), &x.dl, 1, &y.dl, 1));
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find("shape [2, 5], expected [-1, 4]"), std::string::npos) << o.message;
    x.shape[1] = 4;
    AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
    for (float v : y.data) EXPECT_FLOAT_EQ(v, 2.f);
  }
}

TEST(Runner, BadArgumentsGetInvalidArgumentNamingTheTensor) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions());
  Tensor x({2, 4}), y({2, 4});
  auto expect_invalid = [&](aotrun_status* s, const std::string& needle) {
    Outcome o = outcome(s);
    EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
    EXPECT_NE(o.message.find(needle), std::string::npos) << "'" << needle << "' not in: " << o.message;
  };
  expect_invalid(aotrun_runner_run(nullptr, &x.dl, 1, &y.dl, 1), "runner is NULL");
  expect_invalid(aotrun_runner_run(r.get(), &x.dl, 2, &y.dl, 1), "takes 1 inputs, got 2");
  expect_invalid(aotrun_runner_run(r.get(), nullptr, 1, &y.dl, 1), "inputs is NULL");
  expect_invalid(aotrun_runner_run(r.get(), &x.dl, 1, &y.dl, 0), "produces 1 outputs");

  Tensor bad = x;
  bad.rebind();
  bad.dl.dtype = DLDataType{kDLInt, 32, 1};
  expect_invalid(aotrun_runner_run(r.get(), &bad.dl, 1, &y.dl, 1), "dtype int32, expected float32");

  Tensor rank({8});
  expect_invalid(aotrun_runner_run(r.get(), &rank.dl, 1, &y.dl, 1), "rank 1, expected 2");

  Tensor wide({2, 5}), wide_out({2, 5});
  expect_invalid(aotrun_runner_run(r.get(), &wide.dl, 1, &wide_out.dl, 1), "shape [2, 5], expected [-1, 4]");

  Tensor null_data = x;
  null_data.rebind();
  null_data.dl.data = nullptr;
  expect_invalid(aotrun_runner_run(r.get(), &null_data.dl, 1, &y.dl, 1), "NULL data");

  Tensor strided({2, 4});
  int64_t strides[2] = {1, 2};  // column-major
  strided.dl.strides = strides;
  expect_invalid(aotrun_runner_run(r.get(), &strided.dl, 1, &y.dl, 1), "not contiguous");

  Tensor gpu = x;
  gpu.rebind();
  gpu.dl.device = DLDevice{kDLCUDA, 0};
  expect_invalid(aotrun_runner_run(r.get(), &gpu.dl, 1, &y.dl, 1), "device");

  Tensor small_out({1, 4});
  expect_invalid(aotrun_runner_run(r.get(), &x.dl, 1, &small_out.dl, 1),
                 "output 0 ('y') has shape [1, 4], expected [2, 4]");

  EXPECT_EQ(r.stats().runs, 0u);
  EXPECT_EQ(r.stats().failures, 0u);
  AOTRUN_EXPECT_OK(run_vec(r.get(), x, y));  // still usable
}

TEST(Runner, ExplicitStridesThatAreCompactAndByteOffsetsAreAccepted) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions());
  Tensor x({2, 4}), y({2, 4});
  x.randomize(3);
  int64_t strides[2] = {4, 1};
  x.dl.strides = strides;
  // Shift the input view by one row through byte_offset.
  Tensor big({3, 4});
  big.randomize(5);
  DLTensor shifted = big.dl;
  int64_t shape[2] = {2, 4};
  shifted.shape = shape;
  shifted.byte_offset = 4 * sizeof(float);
  AOTRUN_ASSERT_OK(aotrun_runner_run(r.get(), &shifted, 1, &y.dl, 1));
  for (size_t i = 0; i < 8; ++i) ASSERT_FLOAT_EQ(y.data[i], big.data[4 + i] + 1.f);
  AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
}

TEST(Runner, PackageFailuresSurfaceAndRunnerStaysUsable) {
  Package thrower(pkg_path("throwing"));
  Runner t(thrower, RunnerOptions());
  Tensor x({1, 4}), y({1, 4});
  for (int i = 0; i < 2; ++i) {
    Outcome o = outcome(run_vec(t.get(), x, y));
    EXPECT_EQ(o.code, AOTRUN_ERR_PACKAGE);
    EXPECT_NE(o.message.find("throwing: forward failed"), std::string::npos) << o.message;
  }
  EXPECT_EQ(t.stats().failures, 2u);

  Package fault(pkg_path("fault_sync"));
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED}) {
    Runner f(fault, RunnerOptions().mode(m));
    int failed = 0;
    for (int i = 1; i <= 21; ++i) {
      Outcome o = outcome(run_vec(f.get(), x, y));
      if (i % 7 == 0) {
        EXPECT_EQ(o.code, AOTRUN_ERR_PACKAGE) << "run " << i;
        EXPECT_NE(o.message.find("injected failure"), std::string::npos) << o.message;
        ++failed;
      } else {
        EXPECT_EQ(o.code, AOTRUN_OK) << "run " << i << ": " << o.message;
      }
    }
    EXPECT_EQ(failed, 3);
    EXPECT_EQ(f.stats().runs, 18u);
    EXPECT_EQ(f.stats().failures, 3u);
  }
}

TEST(Runner, RunAllocHandsOverManagedOutputs) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions());
  Tensor x({5, 4});
  x.randomize(11);
  DLManagedTensor* out = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_run_alloc(r.get(), &x.dl, 1, &out, 1));
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->dl_tensor.ndim, 2);
  EXPECT_EQ(out->dl_tensor.shape[0], 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(out->dl_tensor.data) % 256, 0u);
  const float* y = static_cast<const float*>(out->dl_tensor.data);
  for (size_t i = 0; i < x.data.size(); ++i) ASSERT_FLOAT_EQ(y[i], x.data[i] + 1.f);
  out->deleter(out);
  DLManagedTensor* none = nullptr;
  EXPECT_EQ(outcome(aotrun_runner_run_alloc(r.get(), &x.dl, 1, &none, 2)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
}

TEST(Runner, OutputShapesAndCapacity) {
  Package pkg(pkg_path("mlp"));
  Runner r(pkg, RunnerOptions());
  Tensor x({7, 256});
  int64_t shapes[2] = {0, 0};
  AOTRUN_ASSERT_OK(aotrun_runner_get_output_shapes(r.get(), &x.dl, 1, shapes, 2));
  EXPECT_EQ(shapes[0], 7);
  EXPECT_EQ(shapes[1], 64);
  Outcome o = outcome(aotrun_runner_get_output_shapes(r.get(), &x.dl, 1, shapes, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("need 2"), std::string::npos) << o.message;
}

TEST(Runner, OptionsAreValidated) {
  RunnerOptions o;
  EXPECT_EQ(outcome(aotrun_runner_options_set_num_models(o.get(), 0)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outcome(aotrun_runner_options_set_num_models(o.get(), 5000)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outcome(aotrun_runner_options_set_mode(o.get(), static_cast<aotrun_mode>(7))).code,
            AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outcome(aotrun_runner_options_set_max_inflight(o.get(), 0)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outcome(aotrun_runner_options_set_mode(nullptr, AOTRUN_MODE_GRAPH)).code, AOTRUN_ERR_INVALID_ARGUMENT);
  Package pkg(bare_so("noop"));
  aotrun_runner_options* cuda = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_options_create(&cuda));
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_device(cuda, DLDevice{kDLCUDA, 0}));
  aotrun_runner* r = nullptr;
  EXPECT_EQ(outcome(aotrun_runner_create(pkg.get(), cuda, &r)).code, AOTRUN_ERR_UNSUPPORTED);
  aotrun_runner_options_free(cuda);
}

TEST(Runner, CudaStreamEntryPointRefusesCpuRunners) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions());
  Tensor x({1, 4}), y({1, 4});
  int dummy = 0;
  Outcome o = outcome(aotrun_runner_run_on_cuda_stream(r.get(), &dummy, &x.dl, 1, &y.dl, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("runs on the CPU"), std::string::npos) << o.message;
  EXPECT_EQ(outcome(aotrun_runner_run_on_cuda_stream(r.get(), nullptr, &x.dl, 1, &y.dl, 1)).code,
            AOTRUN_ERR_INVALID_ARGUMENT);
}

// Found by fuzz_capi: run_alloc must refuse a NULL-data input of a huge shape
// as an argument error before it allocates outputs for it.
TEST(Runner, RunAllocChecksInputsBeforeAllocating) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions());
  int64_t shape[2] = {int64_t(1) << 31, 4};
  DLTensor x{};
  x.device = DLDevice{kDLCPU, 0};
  x.ndim = 2;
  x.dtype = DLDataType{kDLFloat, 32, 1};
  x.shape = shape;
  DLManagedTensor* out = nullptr;
  Outcome o = outcome(aotrun_runner_run_alloc(r.get(), &x, 1, &out, 1));
  EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
  EXPECT_NE(o.message.find("NULL data"), std::string::npos) << o.message;
  EXPECT_EQ(out, nullptr);
}
