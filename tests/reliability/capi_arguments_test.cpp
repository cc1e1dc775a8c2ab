// Bad arguments at the C API: NULL handles and out-pointers, counts, tensor
// descriptors (dtype, rank, shape, strides, device, byte_offset, data),
// capacities and option values out of range. Every case must fail with
// INVALID_ARGUMENT (UNSUPPORTED where noted), a message naming the argument,
// untouched out-parameters, no slot taken in the async window, and a runner
// that still works afterwards. Package: counting (x float32 [-1, 4] ->
// y = x + 1, float32 [-1, 4]).
#include <cstring>
#include <functional>

#include "rel_util.hpp"

using namespace aotrun_test;

namespace {

constexpr int64_t kBig = int64_t(1) << 62;

struct Fixture {
  Package pkg{pkg_path("counting")};
  Runner runner{pkg, RunnerOptions()};
};

// One tensor-descriptor case: `edit` breaks the input or the output pair.
struct TensorCase {
  std::string name;
  std::function<void(DLTensor& x, DLTensor& y)> edit;
  std::string needle;
};

// Storage that outlives the DLTensor edits (shapes, strides).
struct Scratch {
  int64_t shape_a[4] = {0, 0, 0, 0};
  int64_t strides_a[4] = {0, 0, 0, 0};
};
Scratch g_scratch;

std::vector<TensorCase> tensor_cases() {
  auto& s = g_scratch;
  return {
      // dtype
      {"input dtype code",
       [](DLTensor& x, DLTensor&) {
         x.dtype = DLDataType{kDLInt, 32, 1};
       },
       "input 0 ('x') has dtype int32, expected float32"},
      {"input dtype bits",
       [](DLTensor& x, DLTensor&) {
         x.dtype = DLDataType{kDLFloat, 64, 1};
       },
       "has dtype float64, expected float32"},
      {"input dtype lanes",
       [](DLTensor& x, DLTensor&) {
         x.dtype = DLDataType{kDLFloat, 32, 2};
       },
       "has dtype float32x2, expected float32"},
      {"input dtype bfloat",
       [](DLTensor& x, DLTensor&) {
         x.dtype = DLDataType{kDLBfloat, 16, 1};
       },
       "has dtype bfloat16"},
      {"output dtype",
       [](DLTensor&, DLTensor& y) {
         y.dtype = DLDataType{kDLUInt, 8, 1};
       },
       "output 0 ('y') has dtype uint8, expected float32"},
      // rank
      {"input rank 0", [](DLTensor& x, DLTensor&) { x.ndim = 0; }, "input 0 ('x') has rank 0, expected 2"},
      {"input rank 1", [](DLTensor& x, DLTensor&) { x.ndim = 1; }, "has rank 1, expected 2"},
      {"input rank 3", [](DLTensor& x, DLTensor&) { x.ndim = 3; }, "has rank 3, expected 2"},
      {"input rank negative", [](DLTensor& x, DLTensor&) { x.ndim = -1; }, "has rank -1, expected 2"},
      {"input rank huge", [](DLTensor& x, DLTensor&) { x.ndim = 1 << 30; }, "has rank 1073741824"},
      {"output rank", [](DLTensor&, DLTensor& y) { y.ndim = 1; }, "output 0 ('y') has rank 1, expected 2"},
      // shape
      {"input shape NULL", [](DLTensor& x, DLTensor&) { x.shape = nullptr; }, "input 0 ('x') has a NULL shape"},
      // Finding F6 (message): today this says "has rank 2, expected 2".
      {"output shape NULL", [](DLTensor&, DLTensor& y) { y.shape = nullptr; }, "output 0 ('y') has a NULL shape"},
      {"input negative dim",
       [&s](DLTensor& x, DLTensor&) {
         s.shape_a[0] = -2;
         s.shape_a[1] = 4;
         x.shape = s.shape_a;
       },
       "has shape [-2, 4], expected [-1, 4] (-1 = any)"},
      {"input INT64_MIN dim",
       [&s](DLTensor& x, DLTensor&) {
         s.shape_a[0] = INT64_MIN;
         s.shape_a[1] = 4;
         x.shape = s.shape_a;
       },
       "expected [-1, 4]"},
      {"input fixed dim wrong",
       [&s](DLTensor& x, DLTensor&) {
         s.shape_a[0] = 2;
         s.shape_a[1] = 5;
         x.shape = s.shape_a;
       },
       "has shape [2, 5], expected [-1, 4]"},
      {"output shape wrong",
       [&s](DLTensor&, DLTensor& y) {
         s.shape_a[0] = 3;
         s.shape_a[1] = 4;
         y.shape = s.shape_a;
       },
       "output 0 ('y') has shape [3, 4], expected [2, 4] for these inputs"},
      // strides
      {"input column-major",
       [&s](DLTensor& x, DLTensor&) {
         s.strides_a[0] = 1;
         s.strides_a[1] = 2;
         x.strides = s.strides_a;
       },
       "input 0 ('x') is not contiguous (strides [1, 2])"},
      {"input broadcast stride 0",
       [&s](DLTensor& x, DLTensor&) {
         s.strides_a[0] = 0;
         s.strides_a[1] = 1;
         x.strides = s.strides_a;
       },
       "is not contiguous"},
      {"input negative stride",
       [&s](DLTensor& x, DLTensor&) {
         s.strides_a[0] = -4;
         s.strides_a[1] = 1;
         x.strides = s.strides_a;
       },
       "is not contiguous"},
      {"input padded rows",
       [&s](DLTensor& x, DLTensor&) {
         s.strides_a[0] = 8;
         s.strides_a[1] = 1;
         x.strides = s.strides_a;
       },
       "is not contiguous (strides [8, 1])"},
      {"output strided",
       [&s](DLTensor&, DLTensor& y) {
         s.strides_a[0] = 4;
         s.strides_a[1] = 2;
         y.strides = s.strides_a;
       },
       "output 0 ('y') is not contiguous"},
      // device
      {"input on CUDA",
       [](DLTensor& x, DLTensor&) {
         x.device = DLDevice{kDLCUDA, 0};
       },
       "input 0 ('x') is on device (2, 0) but the runner runs on (1, 0)"},
      {"input on CPU 1",
       [](DLTensor& x, DLTensor&) {
         x.device = DLDevice{kDLCPU, 1};
       },
       "is on device (1, 1)"},
      {"output on CUDA host",
       [](DLTensor&, DLTensor& y) {
         y.device = DLDevice{kDLCUDAHost, 0};
       },
       "output 0 ('y') is on device (3, 0)"},
      // data / byte_offset
      {"input data NULL", [](DLTensor& x, DLTensor&) { x.data = nullptr; }, "input 0 ('x') has a NULL data pointer"},
      {"input data NULL with byte_offset",
       [](DLTensor& x, DLTensor&) {
         x.data = nullptr;
         x.byte_offset = 64;
       },
       "has a NULL data pointer"},
      {"output data NULL", [](DLTensor&, DLTensor& y) { y.data = nullptr; }, "output 0 ('y') has a NULL data pointer"},
      // Finding F10 (fixed): is_compact() multiplied the dims in int64 and
      // overflowed; the byte size is now checked first.
      {"input [2^61, 4] with explicit strides and NULL data",
       [&s](DLTensor& x, DLTensor&) {
         s.shape_a[0] = int64_t(1) << 61;
         s.shape_a[1] = 4;
         s.strides_a[0] = 4;
         s.strides_a[1] = 1;
         x.shape = s.shape_a;
         x.strides = s.strides_a;
         x.data = nullptr;
       },
       "has shape [2305843009213693952, 4], too large to address"},
      // Finding F4 (fixed): numel() wrapped: [2^62, 4] had 2^64 == 0
      // elements in uint64, so a NULL data pointer passed as "empty".
      {"input+output [2^62, 4] with NULL data (numel overflow)",
       [&s](DLTensor& x, DLTensor& y) {
         s.shape_a[0] = kBig;
         s.shape_a[1] = 4;
         x.shape = y.shape = s.shape_a;
         x.data = y.data = nullptr;
       },
       "too large to address"},
  };
}

}  // namespace

TEST(CapiArgs, TensorDescriptorsAreValidatedOnEveryRunPath) {
  Fixture f;
  ASSERT_NE(f.runner.get(), nullptr);
  size_t n = 0;
  for (const auto& c : tensor_cases()) {
    // Every entry point that takes tensors: sync, async (3 variants), on a
    // caller's stream. run_alloc and get_output_shapes only take inputs.
    for (int path = 0; path < 5; ++path) {
      SCOPED_TRACE(c.name + " / path " + std::to_string(path));
      Tensor x({2, 4}, 1.f), y({2, 4}, -7.f);
      c.edit(x.dl, y.dl);
      aotrun_event* ev = reinterpret_cast<aotrun_event*>(0x1);
      aotrun_stream* stream = nullptr;
      aotrun_status* s = nullptr;
      switch (path) {
        case 0: s = aotrun_runner_run(f.runner.get(), &x.dl, 1, &y.dl, 1); break;
        case 1: s = aotrun_runner_run_async(f.runner.get(), &x.dl, 1, &y.dl, 1, &ev); break;
        case 2: s = aotrun_runner_try_run_async(f.runner.get(), &x.dl, 1, &y.dl, 1, &ev); break;
        case 3: s = aotrun_runner_run_async_timeout(f.runner.get(), &x.dl, 1, &y.dl, 1, 1000000, &ev); break;
        case 4:
          AOTRUN_ASSERT_OK(aotrun_stream_create(AOTRUN_STREAM_INLINE, &stream));
          s = aotrun_runner_run_on_stream(f.runner.get(), stream, &x.dl, 1, &y.dl, 1);
          aotrun_stream_free(stream);
          break;
      }
      if (s == nullptr && path >= 1 && path <= 3 && ev != reinterpret_cast<aotrun_event*>(0x1)) {
        aotrun_event_wait(ev);  // accepted by mistake: let it finish before the buffers go
        aotrun_event_free(ev);
      }
      REL_EXPECT_OUTCOME(outcome(s), AOTRUN_ERR_INVALID_ARGUMENT, c.needle);
      EXPECT_EQ(ev, reinterpret_cast<aotrun_event*>(0x1)) << "event written on failure";
      if (!y.data.empty() && y.dl.data == y.data.data()) {
        EXPECT_EQ(y.data[0], -7.f) << "output written by a refused run";
      }
      ++n;
    }
    const bool touches_output_only = c.name.rfind("output", 0) == 0;
    if (!touches_output_only) {
      SCOPED_TRACE(c.name + " / run_alloc");
      Tensor x({2, 4}, 1.f), y({2, 4});
      c.edit(x.dl, y.dl);
      DLManagedTensor* out = nullptr;
      rel::Outcome o = outcome(aotrun_runner_run_alloc(f.runner.get(), &x.dl, 1, &out, 1));
      if (out != nullptr) out->deleter(out);
      // Device, layout and data checks are for runs; run_alloc must still
      // refuse everything a run refuses.
      EXPECT_EQ(o.code, AOTRUN_ERR_INVALID_ARGUMENT) << o.message;
      EXPECT_EQ(out, nullptr);
      ++n;
    }
  }
  auto st = f.runner.stats();
  EXPECT_EQ(st.runs, 0u);
  EXPECT_EQ(st.failures, 0u);
  EXPECT_EQ(st.async_submitted, 0u) << "a refused async run took a slot";
  EXPECT_EQ(st.inflight, 0u);
  Tensor x({2, 4}, 1.f), y({2, 4});
  AOTRUN_ASSERT_OK(run_vec(f.runner.get(), x, y));  // still usable
  EXPECT_EQ(y.data[7], 2.f);
  RecordProperty("cases", static_cast<int>(n));
}

TEST(CapiArgs, CountsAndArrayPointers) {
  Fixture f;
  Tensor x({2, 4}), y({2, 4});
  DLTensor two[2] = {x.dl, x.dl};
  DLTensor two_out[2] = {y.dl, y.dl};
  auto r = f.runner.get();
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, &x.dl, 0, &y.dl, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "takes 1 inputs, got 0");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, two, 2, &y.dl, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "takes 1 inputs, got 2");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, &x.dl, SIZE_MAX, &y.dl, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "takes 1 inputs, got 18446744073709551615");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, nullptr, 1, &y.dl, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "inputs is NULL");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, &x.dl, 1, two_out, 2)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "produces 1 outputs, got 2");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, &x.dl, 1, &y.dl, 0)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "produces 1 outputs, got 0");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run(r, &x.dl, 1, nullptr, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "outputs is NULL");
  DLManagedTensor* outs[2] = {nullptr, nullptr};
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_alloc(r, &x.dl, 1, outs, 2)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "produces 1 outputs, got room for 2");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_alloc(r, &x.dl, 1, nullptr, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "outputs is NULL");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_alloc(r, nullptr, 1, outs, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "inputs is NULL");
  EXPECT_EQ(outs[0], nullptr);
  aotrun_event* ev = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_async(r, two, 2, &y.dl, 1, &ev)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "takes 1 inputs");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_async(r, &x.dl, 1, &y.dl, 1, nullptr)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "event is NULL");
  EXPECT_EQ(f.runner.stats().async_submitted, 0u);
}

TEST(CapiArgs, OutputShapesCapacity) {
  Fixture f;
  Tensor x({3, 4});
  int64_t shapes[4] = {-9, -9, -9, -9};
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(f.runner.get(), &x.dl, 1, shapes, 1)),
                     AOTRUN_ERR_INVALID_ARGUMENT, "shapes holds 1 elements; the outputs of package 'counting' need 2");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(f.runner.get(), &x.dl, 1, shapes, 0)),
                     AOTRUN_ERR_INVALID_ARGUMENT, "need 2");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(f.runner.get(), &x.dl, 1, nullptr, 2)),
                     AOTRUN_ERR_INVALID_ARGUMENT, "shapes is NULL");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(f.runner.get(), nullptr, 1, shapes, 2)),
                     AOTRUN_ERR_INVALID_ARGUMENT, "inputs is NULL");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(nullptr, &x.dl, 1, shapes, 2)),
                     AOTRUN_ERR_INVALID_ARGUMENT, "runner is NULL");
  EXPECT_EQ(shapes[0], -9);  // untouched on failure
  // Shape queries need no data: a NULL data pointer is fine there.
  x.dl.data = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_get_output_shapes(f.runner.get(), &x.dl, 1, shapes, 4));
  EXPECT_EQ(shapes[0], 3);
  EXPECT_EQ(shapes[1], 4);
  EXPECT_EQ(shapes[2], -9);
}

TEST(CapiArgs, NullHandlesAndOutPointers) {
  Fixture f;
  Tensor x({1, 4}), y({1, 4});
  auto invalid = [](aotrun_status* s, const std::string& needle) {
    REL_EXPECT_OUTCOME(outcome(s), AOTRUN_ERR_INVALID_ARGUMENT, needle);
  };
  aotrun_package* p = nullptr;
  aotrun_runner* r = nullptr;
  aotrun_event* ev = nullptr;
  aotrun_stream* st = nullptr;
  aotrun_graph* g = nullptr;
  invalid(aotrun_package_options_create(nullptr), "out is NULL");
  invalid(aotrun_runner_options_create(nullptr), "out is NULL");
  invalid(aotrun_package_options_set_verify_hashes(nullptr, 1), "options is NULL");
  invalid(aotrun_package_options_set_expected_sha256(nullptr, nullptr), "options is NULL");
  invalid(aotrun_package_options_set_allow_untrusted_files(nullptr, 1), "options is NULL");
  invalid(aotrun_package_open(nullptr, nullptr, &p), "path is NULL");
  invalid(aotrun_package_open(pkg_path("counting").c_str(), nullptr, nullptr), "out is NULL");
  REL_EXPECT_OUTCOME(outcome(aotrun_package_open("", nullptr, &p)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "package path is empty");
  invalid(aotrun_package_get_info(nullptr, nullptr), "package is NULL");
  invalid(aotrun_package_get_info(f.pkg.get(), nullptr), "info is NULL");
  aotrun_tensor_info ti{};
  ti.struct_size = sizeof(ti);
  invalid(aotrun_package_get_input(nullptr, 0, &ti), "package is NULL");
  invalid(aotrun_package_get_output(f.pkg.get(), 0, nullptr), "info is NULL");
  aotrun_symbol_info si{};
  si.struct_size = sizeof(si);
  invalid(aotrun_package_get_symbol(nullptr, 0, &si), "package is NULL");
  invalid(aotrun_runner_create(nullptr, nullptr, &r), "package is NULL");
  invalid(aotrun_runner_create(f.pkg.get(), nullptr, nullptr), "out is NULL");
  invalid(aotrun_runner_run(nullptr, &x.dl, 1, &y.dl, 1), "runner is NULL");
  DLManagedTensor* m = nullptr;
  invalid(aotrun_runner_run_alloc(nullptr, &x.dl, 1, &m, 1), "runner is NULL");
  invalid(aotrun_runner_run_async(nullptr, &x.dl, 1, &y.dl, 1, &ev), "runner is NULL");
  invalid(aotrun_runner_try_run_async(nullptr, &x.dl, 1, &y.dl, 1, &ev), "runner is NULL");
  invalid(aotrun_runner_run_async_timeout(nullptr, &x.dl, 1, &y.dl, 1, 5, &ev), "runner is NULL");
  invalid(aotrun_runner_wait_all(nullptr), "runner is NULL");
  aotrun_runner_stats stats{};
  stats.struct_size = sizeof(stats);
  invalid(aotrun_runner_get_stats(nullptr, &stats), "runner is NULL");
  invalid(aotrun_runner_get_stats(f.runner.get(), nullptr), "stats is NULL");
  invalid(aotrun_runner_evict_graphs(nullptr), "runner is NULL");
  invalid(aotrun_runner_freeze_graphs(nullptr), "runner is NULL");
  invalid(aotrun_event_wait(nullptr), "event is NULL");
  invalid(aotrun_event_wait_timeout(nullptr, 1), "event is NULL");
  invalid(aotrun_event_set_callback(
              nullptr, [](void*, aotrun_code, const char*) {}, nullptr),
          "event is NULL");
  invalid(aotrun_stream_create(AOTRUN_STREAM_INLINE, nullptr), "out is NULL");
  invalid(aotrun_stream_synchronize(nullptr), "stream is NULL");
  invalid(aotrun_stream_begin_capture(nullptr, AOTRUN_CAPTURE_GLOBAL), "stream is NULL");
  invalid(aotrun_stream_end_capture(nullptr, &g), "stream is NULL");
  invalid(aotrun_graph_launch(nullptr, nullptr), "graph is NULL");
  invalid(aotrun_runner_run_on_stream(f.runner.get(), nullptr, &x.dl, 1, &y.dl, 1), "stream is NULL");
  invalid(aotrun_runner_run_on_stream(nullptr, nullptr, &x.dl, 1, &y.dl, 1), "runner is NULL");
  AOTRUN_ASSERT_OK(aotrun_stream_create(AOTRUN_STREAM_INLINE, &st));
  invalid(aotrun_stream_end_capture(st, nullptr), "graph is NULL");
  aotrun_stream_free(st);
  // Queries and frees of NULL are defined.
  EXPECT_EQ(aotrun_event_is_ready(nullptr), 0);
  EXPECT_EQ(aotrun_stream_is_capturing(nullptr), 0);
  EXPECT_EQ(aotrun_graph_num_nodes(nullptr), 0u);
  EXPECT_EQ(aotrun_status_code(nullptr), AOTRUN_OK);
  EXPECT_STREQ(aotrun_status_message(nullptr), "");
  const char* reason = nullptr;
  EXPECT_EQ(aotrun_package_mode_available(nullptr, AOTRUN_MODE_THREADED, &reason), 0);
  EXPECT_STREQ(reason, "package is NULL");
  EXPECT_EQ(aotrun_package_mode_available(f.pkg.get(), static_cast<aotrun_mode>(9), &reason), 0);
  EXPECT_STREQ(reason, "unknown mode");
  EXPECT_STREQ(aotrun_mode_name(static_cast<aotrun_mode>(-5)), "unknown");
  aotrun_status_free(nullptr);
  aotrun_package_options_free(nullptr);
  aotrun_runner_options_free(nullptr);
  aotrun_package_close(nullptr);
  aotrun_runner_destroy(nullptr);
  aotrun_event_free(nullptr);
  aotrun_stream_free(nullptr);
  aotrun_graph_free(nullptr);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(r, nullptr);
}

TEST(CapiArgs, StructSizeAndIndexOutOfRange) {
  Fixture f;
  aotrun_package_info info{};
  info.struct_size = 0;
  REL_EXPECT_OUTCOME(outcome(aotrun_package_get_info(f.pkg.get(), &info)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "struct_size is not set");
  aotrun_tensor_info ti{};
  ti.struct_size = 0;
  REL_EXPECT_OUTCOME(outcome(aotrun_package_get_input(f.pkg.get(), 0, &ti)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "struct_size is not set");
  ti.struct_size = sizeof(ti);
  REL_EXPECT_OUTCOME(outcome(aotrun_package_get_input(f.pkg.get(), 1, &ti)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "input index 1 out of range");
  REL_EXPECT_OUTCOME(outcome(aotrun_package_get_output(f.pkg.get(), SIZE_MAX, &ti)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "out of range");
  aotrun_symbol_info si{};
  si.struct_size = sizeof(si);
  REL_EXPECT_OUTCOME(outcome(aotrun_package_get_symbol(f.pkg.get(), 1000, &si)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "symbol index 1000 out of range");
  aotrun_runner_stats st{};
  st.struct_size = 3;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_stats(f.runner.get(), &st)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "stats->struct_size is not set");
}

TEST(CapiArgs, OptionsOutOfRange) {
  RunnerOptions o;
  auto invalid = [](aotrun_status* s, const std::string& needle) {
    REL_EXPECT_OUTCOME(outcome(s), AOTRUN_ERR_INVALID_ARGUMENT, needle);
  };
  invalid(aotrun_runner_options_set_mode(o.get(), static_cast<aotrun_mode>(3)), "mode must be 0..2, got 3");
  invalid(aotrun_runner_options_set_num_models(o.get(), 0), "num_models must be 1..1024, got 0");
  invalid(aotrun_runner_options_set_num_models(o.get(), -3), "num_models must be 1..1024");
  invalid(aotrun_runner_options_set_num_models(o.get(), 1025), "num_models must be 1..1024, got 1025");
  invalid(aotrun_runner_options_set_max_inflight(o.get(), 0), "max_inflight must be 1..65536, got 0");
  invalid(aotrun_runner_options_set_max_inflight(o.get(), 65537), "max_inflight must be 1..65536");
  invalid(aotrun_runner_options_set_graph_warmup_runs(o.get(), -1), "graph warm-up runs must be 0..1000, got -1");
  invalid(aotrun_runner_options_set_graph_warmup_runs(o.get(), 1001), "graph warm-up runs must be 0..1000");
  invalid(aotrun_runner_options_set_graph_cache_limit(o.get(), 0), "graph_cache_limit must be 1..4096, got 0");
  invalid(aotrun_runner_options_set_graph_cache_limit(o.get(), 4097), "graph_cache_limit must be 1..4096");
  invalid(aotrun_runner_options_set_device(o.get(), DLDevice{kDLCPU, -1}), "device_id must be >= 0");
  const int32_t ndims_bad[1] = {33};
  const int32_t ndims_neg[1] = {-1};
  const int32_t ndims_ok[1] = {2};
  const int64_t dims_neg[2] = {-1, 4};
  const int64_t dims_huge[2] = {int64_t(1) << 41, 4};
  invalid(aotrun_runner_options_add_capture_shapes(o.get(), ndims_bad, 1, dims_neg), "ndims[i] must be 0..32, got 33");
  invalid(aotrun_runner_options_add_capture_shapes(o.get(), ndims_neg, 1, dims_neg), "ndims[i] must be 0..32, got -1");
  invalid(aotrun_runner_options_add_capture_shapes(o.get(), nullptr, 1, dims_neg), "ndims is NULL");
  invalid(aotrun_runner_options_add_capture_shapes(o.get(), ndims_ok, 1, nullptr), "dims is NULL");
  invalid(aotrun_runner_options_add_capture_shapes(o.get(), ndims_ok, 1, dims_neg), "capture dimension must be 0..");
  invalid(aotrun_runner_options_add_capture_shapes(o.get(), ndims_ok, 1, dims_huge), "capture dimension must be 0..");
  aotrun_stream* s = nullptr;
  invalid(aotrun_stream_create(AOTRUN_STREAM_WORKER, nullptr), "out is NULL");
  AOTRUN_ASSERT_OK(aotrun_stream_create(AOTRUN_STREAM_INLINE, &s));
  invalid(aotrun_stream_begin_capture(s, static_cast<aotrun_capture_mode>(3)), "unknown capture mode 3");
  aotrun_graph* g = nullptr;
  invalid(aotrun_stream_end_capture(s, &g), "");  // not capturing
  AOTRUN_ASSERT_OK(aotrun_stream_begin_capture(s, AOTRUN_CAPTURE_GLOBAL));
  invalid(aotrun_stream_begin_capture(s, AOTRUN_CAPTURE_GLOBAL), "");  // already capturing
  AOTRUN_ASSERT_OK(aotrun_stream_end_capture(s, &g));
  aotrun_graph_free(g);
  aotrun_stream_free(s);
  // Options that were refused left the defaults in place: a runner made from
  // them is the default one.
  Package pkg(pkg_path("counting"));
  Runner r(pkg, o);
  ASSERT_NE(r.get(), nullptr);
  auto st = r.stats();
  EXPECT_EQ(st.num_models, 1);
  EXPECT_EQ(st.effective_mode, AOTRUN_MODE_THREADED);
  EXPECT_EQ(st.max_inflight, 2);
}

TEST(CapiArgs, UnsupportedDeviceAndCallbacks) {
  Package pkg(pkg_path("counting"));
  for (DLDevice d : {DLDevice{kDLCUDA, 0}, DLDevice{kDLMetal, 0}}) {
    RunnerOptions o;
    AOTRUN_ASSERT_OK(aotrun_runner_options_set_device(o.get(), d));
    aotrun_runner* r = nullptr;
    REL_EXPECT_OUTCOME(outcome(aotrun_runner_create(pkg.get(), o.get(), &r)), AOTRUN_ERR_UNSUPPORTED,
                       "is not supported");
    EXPECT_EQ(r, nullptr);
  }
  Runner r(pkg, RunnerOptions());
  Tensor x({1, 4}), y({1, 4});
  aotrun_event* ev = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev));
  REL_EXPECT_OUTCOME(outcome(aotrun_event_set_callback(ev, nullptr, nullptr)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "callback is NULL");
  int calls = 0;
  auto cb = [](void* u, aotrun_code, const char*) { ++*static_cast<int*>(u); };
  AOTRUN_ASSERT_OK(aotrun_event_set_callback(ev, cb, &calls));
  REL_EXPECT_OUTCOME(outcome(aotrun_event_set_callback(ev, cb, &calls)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "the event already has a callback");
  AOTRUN_ASSERT_OK(aotrun_event_wait(ev));
  aotrun_event_free(ev);
  AOTRUN_ASSERT_OK(aotrun_runner_wait_all(r.get()));
  EXPECT_EQ(calls, 1);
}

// Empty tensors may have NULL data in every mode and on every path; graph
// mode captures and replays them. (Finding F7: graph replay memcpy's from and
// to those NULL pointers, which UBSan reports; the result is still right.)
TEST(CapiArgs, EmptyTensorsWithNullDataRunInEveryMode) {
  Package pkg(pkg_path("counting"));
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(aotrun_mode_name(m));
    Runner r(pkg, RunnerOptions().mode(m));
    for (int i = 0; i < 3; ++i) {  // graph: warm-up, capture, replay
      Tensor x({0, 4}), y({0, 4});
      x.dl.data = nullptr;
      y.dl.data = nullptr;
      AOTRUN_ASSERT_OK(run_vec(r.get(), x, y));
    }
  }
}

// A C caller may store any int in an enum field or pass any int as an enum
// argument. Finding F9: the library loads such values as C++ enums, which is
// undefined behaviour outside the enum's range (UBSan -fsanitize=enum aborts
// here); the codes themselves are right.
TEST(CapiArgs, EnumValuesOutsideTheirRange) {
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions());
  Tensor x({2, 4}), y({2, 4});
  x.dl.device.device_type = static_cast<DLDeviceType>(99);
  REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT, "is on device (99, 0)");
  RunnerOptions o;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_options_set_mode(o.get(), static_cast<aotrun_mode>(7))),
                     AOTRUN_ERR_INVALID_ARGUMENT, "mode must be 0..2");
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_device(o.get(), DLDevice{static_cast<DLDeviceType>(1000), 3}));
  aotrun_runner* bad = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_create(pkg.get(), o.get(), &bad)), AOTRUN_ERR_UNSUPPORTED,
                     "is not supported");
  aotrun_stream* s = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_stream_create(static_cast<aotrun_stream_kind>(7), &s)), AOTRUN_ERR_INVALID_ARGUMENT,
                     "unknown stream kind 7");
  EXPECT_EQ(s, nullptr);
}

// Messages name the value the caller passed, as the caller wrote it.
TEST(CapiArgs, MessagesNameTheRealValue) {
  RunnerOptions o;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_options_set_mode(o.get(), static_cast<aotrun_mode>(-1))),
                     AOTRUN_ERR_INVALID_ARGUMENT, "mode must be 0..2, got -1");
  aotrun_stream* s = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_stream_create(static_cast<aotrun_stream_kind>(-2), &s)),
                     AOTRUN_ERR_INVALID_ARGUMENT, "unknown stream kind -2");
  AOTRUN_ASSERT_OK(aotrun_stream_create(AOTRUN_STREAM_INLINE, &s));
  REL_EXPECT_OUTCOME(outcome(aotrun_stream_begin_capture(s, static_cast<aotrun_capture_mode>(-3))),
                     AOTRUN_ERR_INVALID_ARGUMENT, "unknown capture mode -3");
  aotrun_stream_free(s);
  EXPECT_STREQ(aotrun_mode_name(static_cast<aotrun_mode>(-1)), "unknown");

  // An unknown dtype code is named as the number it is ("code990" before).
  {
    Package named(pkg_path("counting"));
    Runner nr(named, RunnerOptions());
    Tensor x({2, 4}), y({2, 4});
    x.dl.dtype = DLDataType{static_cast<uint8_t>(99), 32, 1};
    REL_EXPECT_OUTCOME(outcome(run_vec(nr.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT,
                       "has dtype code 99 (unknown, 32 bits), expected float32");
  }

  // A zero timeout is a bound of 0 ns: TIMEOUT saying so, not "1 ns".
  ::setenv("AOTRUN_TEST_SPIN_US", "20000", 1);  // the first run holds the only slot a while
  Package pkg(pkg_path("counting"));
  Runner r(pkg, RunnerOptions().max_inflight(1));
  ::unsetenv("AOTRUN_TEST_SPIN_US");
  Tensor x({2, 4}), y1({2, 4}), y2({2, 4});
  aotrun_event* first = nullptr;
  AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &x.dl, 1, &y1.dl, 1, &first));
  aotrun_event* second = nullptr;
  Outcome t = outcome(aotrun_runner_run_async_timeout(r.get(), &x.dl, 1, &y2.dl, 1, 0, &second));
  if (t.code == AOTRUN_OK) {
    // The first run finished before the second was submitted (a loaded
    // machine): nothing to check about the full window this time.
    aotrun_event_free(second);
  } else {
    EXPECT_EQ(t.code, AOTRUN_ERR_TIMEOUT) << t.message;
    EXPECT_TRUE(rel::contains(t.message, "no slot freed within 0 ns")) << t.message;
  }
  AOTRUN_ASSERT_OK(aotrun_event_wait(first));
  aotrun_event_free(first);
}

// Device ids are validated where they are set: the CPU is device 0.
TEST(CapiArgs, DeviceIdsAreValidatedWhereSet) {
  RunnerOptions o;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_options_set_device(o.get(), DLDevice{kDLCPU, 1})),
                     AOTRUN_ERR_INVALID_ARGUMENT, "device_id 1 is not a CPU device");
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_options_set_device(o.get(), DLDevice{kDLCUDA, -2})),
                     AOTRUN_ERR_INVALID_ARGUMENT, "device_id must be >= 0, got -2");
  AOTRUN_ASSERT_OK(aotrun_runner_options_set_device(o.get(), DLDevice{kDLCPU, 0}));
  Package pkg(pkg_path("counting"));
  Runner r(pkg, o);
  Tensor x({2, 4}), y({2, 4});
  AOTRUN_EXPECT_OK(run_vec(r.get(), x, y));
}
