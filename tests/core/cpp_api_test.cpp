// aotrun.hpp, the header-only C++17 host API, against real packages: every
// owner opens and releases its handle, moves leave safe empty objects,
// failures of the C API come back as aotrun::cxx::Error with the code and the
// message the C call gives, and runs (sync, run_alloc, async, on streams,
// captured) produce the package's results.
//
// This file is compiled as C++17 with -Wpedantic -Werror (tests/core/CMakeLists.txt).
#include <aotrun/aotrun.hpp>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <type_traits>

#include "test_util.hpp"

static_assert(__cplusplus == 201703L, "this suite checks aotrun.hpp as C++17");

namespace ax = aotrun::cxx;
using aotrun_test::bare_so;
using aotrun_test::Outcome;
using aotrun_test::outcome;
using aotrun_test::pkg_path;
using aotrun_test::Tensor;

namespace {

// The owners are move-only and moving never throws.
template <typename T>
constexpr bool move_only() {
  return !std::is_copy_constructible<T>::value && !std::is_copy_assignable<T>::value &&
         std::is_nothrow_move_constructible<T>::value && std::is_nothrow_move_assignable<T>::value &&
         std::is_nothrow_destructible<T>::value;
}
static_assert(move_only<ax::PackageOptions>(), "PackageOptions");
static_assert(move_only<ax::Package>(), "Package");
static_assert(move_only<ax::RunnerOptions>(), "RunnerOptions");
static_assert(move_only<ax::Runner>(), "Runner");
static_assert(move_only<ax::Event>(), "Event");
static_assert(move_only<ax::Stream>(), "Stream");
static_assert(move_only<ax::Graph>(), "Graph");
static_assert(move_only<ax::ManagedTensor>(), "ManagedTensor");
// The wrappers are one pointer: no state besides the C handle.
static_assert(sizeof(ax::Package) == sizeof(void*) && sizeof(ax::Runner) == sizeof(void*), "one pointer");
static_assert(std::is_base_of<std::runtime_error, ax::Error>::value, "Error is a std::runtime_error");

// The Error `f` throws; a failure (and a default Error) if it throws nothing.
template <typename F>
ax::Error thrown_by(F&& f) {
  try {
    f();
  } catch (const ax::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no aotrun::cxx::Error thrown";
  return ax::Error(AOTRUN_OK, "");
}

#define EXPECT_SAME_FAILURE(error, c_outcome)                \
  do {                                                       \
    const ax::Error& _e = (error);                           \
    const Outcome& _c = (c_outcome);                         \
    EXPECT_NE(_c.code, AOTRUN_OK);                           \
    EXPECT_EQ(_e.code(), _c.code) << _e.what();              \
    EXPECT_STREQ(_e.code_name(), aotrun_code_name(_c.code)); \
    EXPECT_EQ(std::string(_e.what()), _c.message);           \
  } while (0)

// Spin time of the counting package, read when its container is created.
struct SpinUs {
  explicit SpinUs(int us) { setenv("AOTRUN_TEST_SPIN_US", std::to_string(us).c_str(), 1); }
  ~SpinUs() { unsetenv("AOTRUN_TEST_SPIN_US"); }
};

}  // namespace

// --- library-wide functions and views ---------------------------------------

TEST(CppApi, VersionAndNamesMirrorTheCApi) {
  EXPECT_EQ(ax::version(), aotrun_version());
  EXPECT_EQ(ax::version(), static_cast<uint32_t>(AOTRUN_VERSION));
  EXPECT_STREQ(ax::version_string(), aotrun_version_string());
  EXPECT_STREQ(ax::code_name(AOTRUN_ERR_NOT_FOUND), "NOT_FOUND");
  EXPECT_STREQ(ax::mode_name(AOTRUN_MODE_GRAPH), "graph");
  const aotrun_log_level before = ax::log_level();
  ax::set_log_level(AOTRUN_LOG_DEBUG);
  EXPECT_EQ(ax::log_level(), AOTRUN_LOG_DEBUG);
  EXPECT_EQ(aotrun_get_log_level(), AOTRUN_LOG_DEBUG);
  ax::set_log_level(before);
}

TEST(CppApi, TensorViewsAndSpans) {
  static_assert(ax::dtype_of<float>().code == kDLFloat && ax::dtype_of<float>().bits == 32, "float");
  static_assert(ax::dtype_of<double>().bits == 64, "double");
  static_assert(ax::dtype_of<int8_t>().code == kDLInt && ax::dtype_of<int8_t>().bits == 8, "int8");
  static_assert(ax::dtype_of<uint16_t>().code == kDLUInt && ax::dtype_of<uint16_t>().bits == 16, "uint16");
  static_assert(ax::dtype_of<int64_t>().lanes == 1, "lanes");
  std::vector<float> data(6);
  std::vector<int64_t> shape{2, 3};
  DLTensor t = ax::tensor_view(data.data(), shape);
  EXPECT_EQ(t.data, data.data());
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(t.shape, shape.data());
  EXPECT_EQ(t.strides, nullptr);
  EXPECT_EQ(t.device.device_type, kDLCPU);
  const std::vector<float>& cdata = data;
  EXPECT_EQ(ax::tensor_view(cdata.data(), shape).data, data.data());

  ax::TensorSpan one(t);
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(one.data(), &t);
  std::vector<DLTensor> v{t, t, t};
  EXPECT_EQ(ax::TensorSpan(v).size(), 3u);
  std::array<DLTensor, 2> a{{t, t}};
  EXPECT_EQ(ax::ConstTensorSpan(a).size(), 2u);
  DLTensor c[4] = {t, t, t, t};
  EXPECT_EQ(ax::TensorSpan(c).size(), 4u);
  const ax::ConstTensorSpan from_mutable = ax::TensorSpan(v);
  EXPECT_EQ(from_mutable.data(), v.data());
  size_t n = 0;
  for (const DLTensor& e : from_mutable) n += e.ndim == 2;
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(ax::ConstTensorSpan().size(), 0u);
}

// --- packages -----------------------------------------------------------------

TEST(CppApi, PackageOpensAndDescribesItself) {
  ax::Package pkg(pkg_path("mlp"));
  ASSERT_TRUE(pkg);
  const aotrun_package_info info = pkg.info();
  EXPECT_STREQ(info.format, "aotrun-dir");
  EXPECT_EQ(info.num_inputs, 1u);
  EXPECT_EQ(info.num_outputs, 1u);
  EXPECT_EQ(info.hashes_verified, 1);
  const std::vector<aotrun_tensor_info> in = pkg.inputs(), out = pkg.outputs();
  ASSERT_EQ(in.size(), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_STREQ(in[0].name, "x");
  EXPECT_STREQ(pkg.input(0).name, "x");
  EXPECT_STREQ(out[0].name, "y");
  ASSERT_EQ(out[0].ndim, 2);
  EXPECT_EQ(out[0].shape[1], 64);
  const std::vector<aotrun_symbol_info> symbols = pkg.symbols();
  EXPECT_EQ(symbols.size(), info.num_symbols);
  bool found_single_threaded = false;
  for (const aotrun_symbol_info& s : symbols) {
    found_single_threaded |= std::string(s.name) == "aotrun_pkg_container_run_single_threaded" && s.found == 1;
  }
  EXPECT_TRUE(found_single_threaded);
  EXPECT_TRUE(pkg.mode_available(AOTRUN_MODE_GRAPH));
  const char* reason = nullptr;
  EXPECT_TRUE(pkg.mode_available(AOTRUN_MODE_SINGLE_THREADED, &reason));
  EXPECT_STREQ(reason, "");

  ax::Package old(pkg_path("mlp_abi10"));
  EXPECT_FALSE(old.mode_available(AOTRUN_MODE_SINGLE_THREADED, &reason));
  EXPECT_NE(std::string(reason).find("aotrun_pkg_container_run_single_threaded"), std::string::npos) << reason;

  ax::Package bare(bare_so("noop"));
  EXPECT_STREQ(bare.info().format, "aotrun-so");
}

TEST(CppApi, OpenFailuresAreErrorsWithTheCodeAndMessageOfTheCCall) {
  auto c_open = [](const std::string& path, const aotrun_package_options* o = nullptr) {
    aotrun_package* p = nullptr;
    Outcome c = outcome(aotrun_package_open(path.c_str(), o, &p));
    aotrun_package_close(p);
    return c;
  };
  struct Case {
    std::string path;
    aotrun_code code;
  };
  for (const Case& c :
       {Case{pkg_path("no_such_package"), AOTRUN_ERR_NOT_FOUND}, Case{bare_so("future_major"), AOTRUN_ERR_ABI_MISMATCH},
        Case{bare_so("missing_symbols"), AOTRUN_ERR_MISSING_SYMBOL},
        Case{pkg_path("mlp_bad_hash"), AOTRUN_ERR_INTEGRITY},
        Case{pkg_path("mlp_bad_manifest"), AOTRUN_ERR_BAD_PACKAGE}}) {
    SCOPED_TRACE(c.path);
    const ax::Error e = thrown_by([&] { ax::Package p(c.path); });
    EXPECT_EQ(e.code(), c.code) << e.what();
    EXPECT_SAME_FAILURE(e, c_open(c.path));
  }
  // An empty path is the C API's INVALID_ARGUMENT or NOT_FOUND, the same either way.
  EXPECT_SAME_FAILURE(thrown_by([] { ax::Package p(""); }), c_open(""));
}

TEST(CppApi, PackageOptionsAreAppliedAndValidated) {
  // Hash checking off opens the package whose manifest hash is wrong.
  EXPECT_THROW(ax::Package(pkg_path("mlp_bad_hash")), ax::Error);
  ax::Package unchecked(pkg_path("mlp_bad_hash"), ax::PackageOptions().verify_hashes(false));
  EXPECT_EQ(unchecked.info().hashes_verified, 0);

  // A pin that does not match is INTEGRITY, as through C.
  const std::string zeros(64, '0');
  ax::PackageOptions pinned;
  pinned.expected_sha256(zeros).allow_untrusted_files(false);
  aotrun_package* raw = nullptr;
  Outcome c = outcome(aotrun_package_open(pkg_path("mlp").c_str(), pinned.get(), &raw));
  EXPECT_SAME_FAILURE(thrown_by([&] { ax::Package p(pkg_path("mlp"), pinned); }), c);
  EXPECT_EQ(c.code, AOTRUN_ERR_INTEGRITY);
  pinned.expected_sha256(nullptr);  // cleared: opens again
  EXPECT_TRUE(ax::Package(pkg_path("mlp"), pinned));

  // Setters validate their argument and throw the C setter's error.
  ax::PackageOptions o;
  aotrun_package_options* co = nullptr;
  ASSERT_EQ(aotrun_package_options_create(&co), nullptr);
  EXPECT_SAME_FAILURE(thrown_by([&] { o.expected_sha256("abc"); }),
                      outcome(aotrun_package_options_set_expected_sha256(co, "abc")));
  EXPECT_SAME_FAILURE(thrown_by([&] { o.pt2_model("a/b"); }), outcome(aotrun_package_options_set_pt2_model(co, "a/b")));
  EXPECT_SAME_FAILURE(thrown_by([&] { o.libtorch(""); }), outcome(aotrun_package_options_set_libtorch(co, "")));
  aotrun_package_options_free(co);
  // Valid values chain.
  o.pt2_model("model").pt2_model(nullptr).libtorch(std::string("/nonexistent/torch/lib")).libtorch(nullptr);
}

// --- ownership ------------------------------------------------------------------

TEST(CppApi, MovesTransferOwnershipAndLeaveSafeEmptyObjects) {
  ax::Package a(pkg_path("counting"));
  aotrun_package* handle = a.get();
  ax::Package b(std::move(a));
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.get(), handle);
  ax::Package c;
  c = std::move(b);
  EXPECT_EQ(c.get(), handle);
  EXPECT_EQ(b.get(), nullptr);
  ax::Package& alias = c;
  c = std::move(alias);  // self-move keeps the handle
  EXPECT_EQ(c.get(), handle);
  // Assigning over an owner releases its old handle (LeakSanitizer checks).
  ax::Package d(pkg_path("noop"));
  d = std::move(c);
  EXPECT_EQ(d.get(), handle);

  ax::Runner r1(d, ax::RunnerOptions().num_models(2));
  ax::Runner r2 = std::move(r1);
  ax::Runner r3(nullptr);
  std::swap(r2, r3);
  EXPECT_FALSE(r2);
  EXPECT_TRUE(r3);
  EXPECT_EQ(r3.stats().num_models, 2);

  // The package may go first: the runner keeps it loaded.
  d.reset();
  Tensor x({2, 4}, 1.f), y({2, 4});
  r3.run(x.dl, y.dl);
  EXPECT_EQ(y.data[0], 2.f);

  // release() hands the handle over; the C call frees it.
  ax::Stream s(AOTRUN_STREAM_WORKER);
  aotrun_stream* raw = s.release();
  EXPECT_FALSE(s);
  aotrun_stream_free(raw);
  // Adopting a handle created through C.
  aotrun_runner_options* ro = nullptr;
  ASSERT_EQ(aotrun_runner_options_create(&ro), nullptr);
  ax::RunnerOptions adopted(ro);
  adopted.mode(AOTRUN_MODE_SINGLE_THREADED);
  EXPECT_EQ(adopted.get(), ro);

  // Empty objects: destroying is fine, calls that can fail throw the C API's
  // INVALID_ARGUMENT, the others give the C API's NULL answers.
  ax::Package empty_pkg;
  ax::Runner empty_runner;
  ax::Event empty_event;
  ax::Stream empty_stream;
  ax::Graph empty_graph;
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  EXPECT_SAME_FAILURE(thrown_by([&] { empty_pkg.info(); }), outcome(aotrun_package_get_info(nullptr, &info)));
  EXPECT_EQ(thrown_by([&] { empty_runner.run(x.dl, y.dl); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(thrown_by([&] { empty_runner.stats(); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(thrown_by([&] { empty_event.wait(); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(thrown_by([&] { empty_stream.synchronize(); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(thrown_by([&] { empty_graph.launch(empty_stream); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(empty_pkg.mode_available(AOTRUN_MODE_THREADED));
  EXPECT_EQ(empty_runner.mode(), AOTRUN_MODE_THREADED);
  EXPECT_FALSE(empty_event.is_ready());
  EXPECT_FALSE(empty_stream.is_capturing());
  EXPECT_EQ(empty_graph.num_nodes(), 0u);
  ax::RunnerOptions moved_options;
  ax::RunnerOptions taker = std::move(moved_options);
  EXPECT_EQ(thrown_by([&] { moved_options.mode(AOTRUN_MODE_GRAPH); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
}

namespace {
int g_deleted = 0;
void count_delete(DLManagedTensor* t) {
  ++g_deleted;
  delete t;
}
DLManagedTensor* new_managed() {
  auto* t = new DLManagedTensor{};
  t->deleter = count_delete;
  return t;
}
}  // namespace

TEST(CppApi, ManagedTensorCallsTheDeleterExactlyOnce) {
  g_deleted = 0;
  {
    ax::ManagedTensor a(new_managed());
    ax::ManagedTensor b(std::move(a));
    EXPECT_FALSE(a);
    ax::ManagedTensor c(new_managed());
    c = std::move(b);  // c's first tensor is deleted here
    EXPECT_EQ(g_deleted, 1);
    DLManagedTensor* raw = c.release();
    EXPECT_FALSE(c);
    c.reset(raw);
    ax::ManagedTensor no_deleter(new DLManagedTensor{});  // a NULL deleter is not called
    delete no_deleter.release();
  }
  EXPECT_EQ(g_deleted, 2);
}

// --- runners ---------------------------------------------------------------------

TEST(CppApi, RunnerRunsInEveryMode) {
  ax::Package pkg(pkg_path("counting"));
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(ax::mode_name(m));
    ax::Runner r(pkg, ax::RunnerOptions().mode(m).num_models(2).strict(true).max_inflight(4));
    EXPECT_EQ(r.mode(), m);
    for (float v : {1.f, 5.f, -3.f}) {
      Tensor x({3, 4}, v), y({3, 4});
      r.run(x.dl, y.dl);
      EXPECT_EQ(y.data, std::vector<float>(12, v + 1.f));
    }
    const aotrun_runner_stats st = r.stats();
    EXPECT_EQ(st.runs, 3u);
    EXPECT_EQ(st.requested_mode, m);
    EXPECT_EQ(st.max_inflight, 4);
    EXPECT_STREQ(st.fallback_reason, "");
  }
  ax::Runner defaults(pkg);
  EXPECT_EQ(defaults.mode(), AOTRUN_MODE_THREADED);
  EXPECT_EQ(defaults.stats().num_models, 1);
}

TEST(CppApi, AcceptsAnswersTheShapeQueryWithoutData) {
  ax::Package pkg(pkg_path("mlp"));  // [batch, 256] float32 -> [batch, 64]
  ax::Runner r(pkg);
  std::vector<int64_t> dims;
  std::string why = "unchanged";
  EXPECT_TRUE(r.accepts({DLDataType{kDLFloat, 32, 1}}, {{5, 256}}, 2, &dims, &why));
  EXPECT_EQ(dims, (std::vector<int64_t>{5, 64}));
  EXPECT_EQ(why, "unchanged");
  // A refused shape and a refused dtype: false and the message, no throw.
  EXPECT_FALSE(r.accepts({DLDataType{kDLFloat, 32, 1}}, {{5, 255}}, 2, &dims, &why));
  EXPECT_NE(why.find("255"), std::string::npos) << why;
  EXPECT_FALSE(r.accepts({DLDataType{kDLInt, 64, 1}}, {{5, 256}}, 2, nullptr, &why));
  EXPECT_NE(why.find("dtype"), std::string::npos) << why;
  EXPECT_FALSE(r.accepts({}, {}, 2));  // no inputs for a model of one
}

TEST(CppApi, RunAllocHandsOverOutputsEqualToRun) {
  ax::Package pkg(pkg_path("mlp"));
  ax::Runner r(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  Tensor x({5, 256}), y({5, 64});
  x.randomize(7);
  const std::vector<int64_t> shapes = r.output_shapes(x.dl, 2);
  EXPECT_EQ(shapes, (std::vector<int64_t>{5, 64}));
  r.run(x.dl, y.dl);
  std::vector<ax::ManagedTensor> out = r.run_alloc(x.dl, 1);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0]);
  EXPECT_EQ(out[0].dl().ndim, 2);
  EXPECT_EQ(out[0].dl().shape[0], 5);
  EXPECT_EQ(out[0].numel(), 5 * 64);
  EXPECT_EQ(std::vector<float>(out[0].data<float>(), out[0].data<float>() + out[0].numel()), y.data);
  // A wrong output count hands nothing over and throws the C error.
  std::vector<DLManagedTensor*> raw(2, nullptr);
  EXPECT_SAME_FAILURE(thrown_by([&] { r.run_alloc(x.dl, 2); }),
                      outcome(aotrun_runner_run_alloc(r.get(), &x.dl, 1, raw.data(), 2)));
}

TEST(CppApi, RunFailuresAreErrorsAndTheRunnerStaysUsable) {
  ax::Package pkg(pkg_path("counting"));
  ax::Runner r(pkg);
  Tensor x({2, 4}), y({2, 4}), bad({2, 5});
  EXPECT_SAME_FAILURE(thrown_by([&] { r.run(bad.dl, y.dl); }),
                      outcome(aotrun_runner_run(r.get(), &bad.dl, 1, &y.dl, 1)));
  EXPECT_SAME_FAILURE(thrown_by([&] { r.run(ax::ConstTensorSpan(), y.dl); }),
                      outcome(aotrun_runner_run(r.get(), nullptr, 0, &y.dl, 1)));
  r.run(x.dl, y.dl);

  // The package's own failure: fault_sync fails every 7th call with PACKAGE.
  ax::Package faulty(pkg_path("fault_sync"));
  ax::Runner f(faulty, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  for (int i = 1; i <= 6; ++i) f.run(x.dl, y.dl);
  const ax::Error e = thrown_by([&] { f.run(x.dl, y.dl); });
  EXPECT_EQ(e.code(), AOTRUN_ERR_PACKAGE);
  EXPECT_NE(std::string(e.what()).find("injected failure on run 7"), std::string::npos) << e.what();
  f.run(x.dl, y.dl);
  EXPECT_EQ(f.stats().failures, 1u);

  // Creation failures: strict on a 1.0 package, a bad option value.
  ax::Package old(pkg_path("noop_abi10"));
  ax::RunnerOptions strict;
  strict.mode(AOTRUN_MODE_GRAPH).strict(true);
  aotrun_runner* raw = nullptr;
  EXPECT_SAME_FAILURE(thrown_by([&] { ax::Runner r2(old, strict); }),
                      outcome(aotrun_runner_create(old.get(), strict.get(), &raw)));
  EXPECT_EQ(thrown_by([] { ax::RunnerOptions().num_models(0); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(thrown_by([] { ax::RunnerOptions().device(DLDevice{kDLCPU, 3}); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  // No CUDA runner on a CPU runner's stream call.
  EXPECT_EQ(thrown_by([&] { r.run_on_cuda_stream(nullptr, x.dl, y.dl); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
}

TEST(CppApi, GraphModeOptionsAndControls) {
  ax::Package pkg(pkg_path("mlp"));
  ax::Runner r(pkg, ax::RunnerOptions()
                        .mode(AOTRUN_MODE_GRAPH)
                        .graph_warmup_runs(0)
                        .graph_cache_limit(4)
                        .graph_frozen(true)
                        .add_capture_shapes({{2, 256}}));
  EXPECT_EQ(r.stats().graph_captures, 1u);  // captured at creation
  Tensor x({2, 256}), y({2, 64}), x3({3, 256}), y3({3, 64});
  x.randomize(3);
  x3.randomize(4);
  r.run(x.dl, y.dl);
  r.run(x3.dl, y3.dl);  // frozen: not captured, runs eagerly
  aotrun_runner_stats st = r.stats();
  EXPECT_EQ(st.graph_replays, 1u);
  EXPECT_EQ(st.eager_frozen, 1u);
  r.evict_graphs();
  EXPECT_EQ(r.stats().graphs_cached, 0u);
  r.freeze_graphs();
  EXPECT_EQ(thrown_by([] { ax::RunnerOptions().graph_cache_limit(0); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
}

// --- asynchronous runs ------------------------------------------------------------

TEST(CppApi, AsyncRunsCompleteAndReportThroughTheirEvents) {
  ax::Package pkg(pkg_path("counting"));
  ax::Runner r(pkg, ax::RunnerOptions().num_models(2).max_inflight(4));
  std::vector<Tensor> xs, ys;
  xs.reserve(8);
  ys.reserve(8);
  for (int i = 0; i < 8; ++i) {
    xs.emplace_back(std::vector<int64_t>{1, 4}, static_cast<float>(i));
    ys.emplace_back(std::vector<int64_t>{1, 4});
  }
  std::vector<ax::Event> events;
  std::atomic<int> callbacks{0}, ok_callbacks{0};
  for (size_t i = 0; i < xs.size(); ++i) {
    events.push_back(r.run_async(xs[i].dl, ys[i].dl));
    events.back().on_complete([&](aotrun_code code, const char* message) {
      ++callbacks;
      if (code == AOTRUN_OK && std::string(message).empty()) ++ok_callbacks;
    });
  }
  for (ax::Event& e : events) e.wait();
  r.wait_all();  // callbacks have returned
  EXPECT_EQ(callbacks.load(), 8);
  EXPECT_EQ(ok_callbacks.load(), 8);
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_TRUE(events[i].is_ready());
    EXPECT_TRUE(events[i].wait_timeout(std::chrono::nanoseconds(0)));
    EXPECT_EQ(ys[i].data[0], static_cast<float>(i) + 1.f);
  }
  // A second callback is refused, as in C.
  EXPECT_EQ(thrown_by([&] { events[0].on_complete([](aotrun_code, const char*) {}); }).code(),
            AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r.stats().async_completed, 8u);

  // A callback on an event dropped at once still runs (its state is freed by
  // the one call; LeakSanitizer checks).
  {
    ax::Event dropped = r.run_async(xs[0].dl, ys[0].dl);
    dropped.on_complete([&, keep = std::vector<int>(100)](aotrun_code, const char*) { ++callbacks; });
  }
  r.wait_all();
  EXPECT_EQ(callbacks.load(), 9);
}

TEST(CppApi, AsyncFailuresAreThrownByWait) {
  ax::Package pkg(pkg_path("fault_async"));
  ax::Runner r(pkg, ax::RunnerOptions().max_inflight(3));
  Tensor x({1, 4}), y({1, 4});
  std::vector<ax::Event> events;
  for (int i = 0; i < 7; ++i) events.push_back(r.run_async(x.dl, y.dl));
  r.wait_all();
  for (int i = 0; i < 6; ++i) events[static_cast<size_t>(i)].wait();
  const ax::Error e = thrown_by([&] { events[6].wait(); });
  EXPECT_EQ(e.code(), AOTRUN_ERR_PACKAGE);
  EXPECT_NE(std::string(e.what()).find("injected failure on run 7"), std::string::npos) << e.what();
  // wait_timeout throws the run's failure too (not TIMEOUT).
  EXPECT_EQ(thrown_by([&] { events[6].wait_timeout(std::chrono::seconds(1)); }).code(), AOTRUN_ERR_PACKAGE);
  // Argument errors are thrown at submission; no slot is taken.
  Tensor bad({1, 5});
  EXPECT_EQ(thrown_by([&] { r.run_async(bad.dl, y.dl); }).code(), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r.stats().inflight, 0u);
}

TEST(CppApi, FullWindowIsAValueNotAnException) {
  SpinUs spin(200000);  // 0.2 s per run
  ax::Package pkg(pkg_path("counting"));
  ax::Runner r(pkg, ax::RunnerOptions().num_models(1).max_inflight(1));
  Tensor x({1, 4}), y({1, 4}), x2({1, 4}), y2({1, 4});
  ax::Event first = r.run_async(x.dl, y.dl);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first.wait_timeout(std::chrono::microseconds(10)));  // still running: false, no throw
  ax::Event refused = r.try_run_async(x2.dl, y2.dl);
  EXPECT_FALSE(refused);
  ax::Event timed_out = r.run_async_timeout(x2.dl, y2.dl, std::chrono::nanoseconds(0));
  EXPECT_FALSE(timed_out);
  const aotrun_runner_stats st = r.stats();
  EXPECT_GE(st.would_block, 1u);
  first.wait();
  ax::Event second = r.run_async_timeout(x2.dl, y2.dl, std::chrono::seconds(30));
  ASSERT_TRUE(second);
  second.wait();
  EXPECT_EQ(y2.data[0], 1.f);
}

// --- streams and graphs ------------------------------------------------------------

TEST(CppApi, CapturedRunReplaysLikeEager) {
  ax::Package pkg(pkg_path("mlp"));
  ax::Runner st(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  ax::Runner ref(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  ax::Stream s(AOTRUN_STREAM_INLINE);
  Tensor x({4, 256}), y({4, 64}), expect({4, 64});
  x.randomize(1);
  st.run_on_stream(s, x.dl, y.dl);
  s.begin_capture(AOTRUN_CAPTURE_GLOBAL);
  EXPECT_TRUE(s.is_capturing());
  st.run_on_stream(s, x.dl, y.dl);
  ax::Graph g = s.end_capture();
  EXPECT_FALSE(s.is_capturing());
  ASSERT_TRUE(g);
  EXPECT_GT(g.num_nodes(), 0u);
  for (uint32_t seed = 2; seed < 5; ++seed) {
    x.randomize(seed);
    std::fill(y.data.begin(), y.data.end(), 0.f);
    g.launch(s);
    ref.run(x.dl, expect.dl);
    ASSERT_EQ(y.data, expect.data) << "seed " << seed;
  }
  // Launching into a capturing stream: CAPTURE_UNSUPPORTED.
  s.begin_capture(AOTRUN_CAPTURE_GLOBAL);
  EXPECT_EQ(thrown_by([&] { g.launch(s); }).code(), AOTRUN_ERR_CAPTURE_UNSUPPORTED);
  ax::Graph discarded = s.end_capture();
  // Ending a capture that is not open: the C API's INVALID_ARGUMENT.
  aotrun_graph* raw = nullptr;
  EXPECT_SAME_FAILURE(thrown_by([&] { s.end_capture(); }), outcome(aotrun_stream_end_capture(s.get(), &raw)));
}

TEST(CppApi, ProhibitedCallUnderCaptureInvalidatesIt) {
  ax::Package pkg(pkg_path("mlp"));
  ax::Runner r(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_THREADED).num_models(1));
  ax::Stream s(AOTRUN_STREAM_INLINE);
  Tensor x({4, 256}), y({4, 64});
  r.run_on_stream(s, x.dl, y.dl);  // the instance now has a pending event
  s.begin_capture(AOTRUN_CAPTURE_GLOBAL);
  const ax::Error e = thrown_by([&] { r.run_on_stream(s, x.dl, y.dl); });
  EXPECT_EQ(e.code(), AOTRUN_ERR_CAPTURE_UNSUPPORTED);
  EXPECT_NE(std::string(e.what()).find("operation not permitted when stream is capturing"), std::string::npos);
  EXPECT_EQ(thrown_by([&] { s.end_capture(); }).code(), AOTRUN_ERR_CAPTURE_INVALIDATED);
  r.run_on_stream(s, x.dl, y.dl);  // not poisoned
}

TEST(CppApi, WorkerStreamFailureIsThrownBySynchronize) {
  ax::Package pkg(pkg_path("fault_async"));
  ax::Runner r(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
  ax::Stream s(AOTRUN_STREAM_WORKER);
  Tensor x({1, 4}), y({1, 4});
  for (int i = 0; i < 7; ++i) r.run_on_stream(s, x.dl, y.dl);
  const ax::Error e = thrown_by([&] { s.synchronize(); });
  EXPECT_EQ(e.code(), AOTRUN_ERR_PACKAGE);
  EXPECT_NE(std::string(e.what()).find("injected failure"), std::string::npos) << e.what();
  s.synchronize();  // reported once
}

// --- logging ------------------------------------------------------------------------

namespace {
void record(void* user, aotrun_log_level level, const char* message) {
  static_cast<std::vector<std::pair<aotrun_log_level, std::string>>*>(user)->emplace_back(level, message);
}
}  // namespace

TEST(CppApi, LogCallbackReceivesTheFallbackWarning) {
  std::vector<std::pair<aotrun_log_level, std::string>> messages;
  ax::set_log_callback(record, &messages);
  {
    ax::Package pkg(pkg_path("noop_abi10"));
    ax::Runner r(pkg, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    EXPECT_EQ(r.mode(), AOTRUN_MODE_THREADED);
  }
  ax::set_log_callback(nullptr, nullptr);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].first, AOTRUN_LOG_WARN);
  EXPECT_NE(messages[0].second.find("aotrun_pkg_container_run_single_threaded"), std::string::npos);
}
