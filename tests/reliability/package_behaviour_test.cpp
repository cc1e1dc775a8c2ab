// Packages that break the package ABI's rules (tests/reliability/packages/
// misbehave.c, one library per broken rule) or fail at run time. The host
// must refuse them at open, or fail the call, with the documented code and a
// message naming the package and what it did; a runner stays usable after a
// failed run.
#include "rel_util.hpp"

using rel::open_fails;
using namespace aotrun_test;

namespace {

std::string rel_so(const std::string& mode) { return bare_so("rel_" + mode); }

}  // namespace

TEST(PackageBehaviour, BrokenSpecsAreRefusedAtOpen) {
  struct Case {
    const char* mode;
    aotrun_code code;
    const char* needle;
  };
  for (const Case& c : {
           Case{"spec_short", AOTRUN_ERR_BAD_PACKAGE, "filled 8 bytes of a tensor spec; ABI 1.0 needs"},
           Case{"spec_rank", AOTRUN_ERR_BAD_PACKAGE, "reports an invalid rank for input 0"},
           Case{"spec_null_shape", AOTRUN_ERR_BAD_PACKAGE, "reports an invalid rank for input 0"},
           Case{"many_tensors", AOTRUN_ERR_BAD_PACKAGE, "reports 1048576 tensors"},
           Case{"specs_fail", AOTRUN_ERR_PACKAGE, "get_num_inputs failed (status 3): misbehave: cannot count inputs"},
           Case{"create_null", AOTRUN_ERR_PACKAGE, "creating the metadata container"},
           Case{"create_fails", AOTRUN_ERR_PACKAGE, "misbehave: cannot create a container"},
       }) {
    SCOPED_TRACE(c.mode);
    rel::Outcome o = open_fails(rel_so(c.mode));
    REL_EXPECT_OUTCOME(o, c.code, c.needle);
    EXPECT_TRUE(rel::contains(o.message, std::string("rel_") + c.mode)) << "package not named: " << o.message;
  }
}

TEST(PackageBehaviour, NegativeOutputDimsFailEveryPath) {
  Package pkg(rel_so("neg_output_dim"));
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  ASSERT_NE(r.get(), nullptr);
  Tensor x({2, 4}), y({2, 4});
  int64_t shapes[2] = {0, 0};
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(r.get(), &x.dl, 1, shapes, 2)), AOTRUN_ERR_PACKAGE,
                     "package 'rel_neg_output_dim' reported a negative output dimension");
  REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_PACKAGE, "negative output dimension");
  DLManagedTensor* out = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_alloc(r.get(), &x.dl, 1, &out, 1)), AOTRUN_ERR_PACKAGE,
                     "negative output dimension");
  EXPECT_EQ(out, nullptr);
  aotrun_event* ev = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev)), AOTRUN_ERR_PACKAGE,
                     "negative output dimension");
  EXPECT_EQ(ev, nullptr);
  EXPECT_EQ(r.stats().inflight, 0u);
}

TEST(PackageBehaviour, FailingRunsSurfaceWithTheirCodeAndMessage) {
  struct Case {
    const char* mode;
    aotrun_code code;
    const char* needle;
  };
  for (const Case& c : {
           Case{"run_runtime", AOTRUN_ERR_PACKAGE, "failed (status 3): misbehave: run failed on purpose"},
           Case{"run_invalid", AOTRUN_ERR_INVALID_ARGUMENT, "misbehave: input rejected by the package"},
           Case{"run_no_message", AOTRUN_ERR_PACKAGE, "(the package gave no message)"},
       }) {
    SCOPED_TRACE(c.mode);
    Package pkg(rel_so(c.mode));
    ASSERT_NE(pkg.get(), nullptr);
    for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED}) {
      Runner r(pkg, RunnerOptions().mode(m));
      ASSERT_NE(r.get(), nullptr);
      Tensor x({1, 4}), y({1, 4});
      for (int i = 0; i < 3; ++i) REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), c.code, c.needle);
      aotrun_event* ev = nullptr;
      AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev));
      REL_EXPECT_OUTCOME(outcome(aotrun_event_wait(ev)), c.code, c.needle);
      aotrun_event_free(ev);
      auto st = r.stats();
      EXPECT_EQ(st.runs, 0u);
      EXPECT_EQ(st.failures, 4u);
      EXPECT_EQ(st.async_failed, 1u);
      EXPECT_EQ(st.inflight, 0u);
    }
  }
}

TEST(PackageBehaviour, FailureInLaunchedWorkSurfacesOnTheEvent) {
  // fault_async: run() succeeds, the launched work fails on every 7th
  // execution; the failure must reach whoever waits for that run.
  Package pkg(pkg_path("fault_async"));
  Runner r(pkg, RunnerOptions());
  Tensor x({1, 4}, 2.f), y({1, 4});
  int failed = 0;
  for (int i = 1; i <= 14; ++i) {
    aotrun_event* ev = nullptr;
    AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev));
    rel::Outcome o = outcome(aotrun_event_wait(ev));
    aotrun_event_free(ev);
    if (i % 7 == 0) {
      REL_EXPECT_OUTCOME(o, AOTRUN_ERR_PACKAGE, "fault: injected failure on run " + std::to_string(i));
      ++failed;
    } else {
      EXPECT_EQ(o.code, AOTRUN_OK) << o.message;
    }
  }
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(r.stats().async_failed, 2u);
}

TEST(PackageBehaviour, ContainerCreateOutOfMemoryAtRunnerCreate) {
  Package pkg(rel_so("create_oom"));
  ASSERT_NE(pkg.get(), nullptr);  // the metadata container (0 models) works
  aotrun_runner* r = reinterpret_cast<aotrun_runner*>(0x1);
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_create(pkg.get(), nullptr, &r)), AOTRUN_ERR_OUT_OF_MEMORY,
                     "misbehave: out of memory for the model instances");
  EXPECT_EQ(r, reinterpret_cast<aotrun_runner*>(0x1));
}

// Core bug (finding F5): run_alloc sizes its buffers as numel * element
// bytes in 64 bits; an output shape of [2^62, 4] float32 "needs" 2^66 mod
// 2^64 = 0 bytes, so a 256-byte buffer is handed over labelled [2^62, 4].
// Whatever the package reported, an output that cannot be allocated must fail
// (OUT_OF_MEMORY or PACKAGE), never come back as a tensor of that shape.
TEST(PackageBehaviour, HugeOutputShapeIsNotHandedOverUnbacked) {
  Package pkg(rel_so("huge_output"));
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  Tensor x({1, 4});
  DLManagedTensor* out = nullptr;
  rel::Outcome o = outcome(aotrun_runner_run_alloc(r.get(), &x.dl, 1, &out, 1));
  if (out != nullptr) {
    ADD_FAILURE() << "run_alloc returned a tensor of shape [" << out->dl_tensor.shape[0] << ", "
                  << out->dl_tensor.shape[1] << "] (status " << aotrun_code_name(o.code) << ")";
    out->deleter(out);
    return;
  }
  EXPECT_TRUE(o.code == AOTRUN_ERR_OUT_OF_MEMORY || o.code == AOTRUN_ERR_PACKAGE)
      << aotrun_code_name(o.code) << ": " << o.message;
}

TEST(PackageBehaviour, LoaderRefusalsOfForeignLibraries) {
  // Rows covered in tests/core/loader_test.cpp as well; repeated here with
  // the out-parameter check of rel::open_fails.
  rel::Outcome missing = open_fails(bare_so("missing_symbols"));
  REL_EXPECT_OUTCOME(missing, AOTRUN_ERR_MISSING_SYMBOL, "lacks required entry points");
  EXPECT_TRUE(rel::contains(missing.message, "aotrun_pkg_container_destroy")) << missing.message;
  EXPECT_TRUE(rel::contains(missing.message, "aotrun_pkg_container_get_output_shapes")) << missing.message;
  REL_EXPECT_OUTCOME(open_fails(bare_so("future_major")), AOTRUN_ERR_ABI_MISMATCH, "was built for package ABI 2.0");
  // An ELF file that is not a shared object (an executable) and a directory
  // without a manifest.
  REL_EXPECT_OUTCOME(open_fails("/bin/sh"), AOTRUN_ERR_LOAD_FAILED, "");
  rel::ScratchDir empty("emptydir");
  REL_EXPECT_OUTCOME(open_fails(empty.path()), AOTRUN_ERR_NOT_FOUND, "has no readable manifest.json");
}

// A package whose get_output_shapes contradicts its own output spec is at
// fault: PACKAGE naming the output and both shapes, on every path, and the
// caller's spec-conforming tensor is not blamed.
TEST(PackageBehaviour, OutputShapesContradictingTheSpecBlameThePackage) {
  Package pkg(rel_so("contradict_shape"));
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  ASSERT_NE(r.get(), nullptr);
  Tensor x({2, 4}), y({2, 4});
  const char* needle = "reported shape [2, 5] for output 'y', which contradicts its declared shape [-1, 4]";
  int64_t shapes[2] = {0, 0};
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_get_output_shapes(r.get(), &x.dl, 1, shapes, 2)), AOTRUN_ERR_PACKAGE,
                     needle);
  REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_PACKAGE, needle);
  DLManagedTensor* out = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_alloc(r.get(), &x.dl, 1, &out, 1)), AOTRUN_ERR_PACKAGE, needle);
  EXPECT_EQ(out, nullptr);
  aotrun_event* ev = nullptr;
  REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev)), AOTRUN_ERR_PACKAGE, needle);
  EXPECT_EQ(ev, nullptr);
}

// Spec values no tensor could match are refused at open.
TEST(PackageBehaviour, ImpossibleSpecValuesAreRefusedAtOpen) {
  rel::Outcome o = rel::open_fails(rel_so("spec_bad_dim"));
  REL_EXPECT_OUTCOME(o, AOTRUN_ERR_BAD_PACKAGE, "declares input 0 ('x') with shape [-7, 4]: dim 0 is negative");
  o = rel::open_fails(rel_so("spec_bad_dtype"));
  REL_EXPECT_OUTCOME(o, AOTRUN_ERR_BAD_PACKAGE, "declares output 0 ('y') with dtype code 2, 0 bits, 1 lanes");
}
