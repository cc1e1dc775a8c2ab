// Failures: exceptions, injected faults, host statuses passing through, and
// the threaded run's event use (the capture bug it reproduces on purpose).
#include <cstdlib>
#include <thread>

#include "counting_api.h"
#include "fixture.h"

namespace aotrun {
namespace test {
namespace {

class SmallPackageTest : public ::testing::Test {
 protected:
  SmallPackageTest() : host_(make_direct_host()) {}

  std::unique_ptr<PackageLib> open(const char* file) {
    auto lib = std::make_unique<PackageLib>(package_path(file));
    aotrun_test_direct_host_set_last_error_fn(host_.get(), lib->last_error);
    return lib;
  }
  aotrun_pkg_create_args args(int32_t num_models) {
    return create_args(aotrun_test_direct_host_services(host_.get()), num_models);
  }
  int32_t run_once(PackageLib& lib, aotrun_pkg_container* c, aotrun_pkg_container_run_fn fn, float value = 1.0f,
                   std::vector<float>* out = nullptr) {
    FloatTensor x({2, 4}, value), y({2, 4}, -1.0f);
    const auto ra = run_args(&x.dl(), 1, &y.dl(), 1);
    const int32_t st = fn(c, &ra);
    (void)lib;
    if (out) *out = y.values();
    return st;
  }

  DirectHost host_;
};

TEST_F(SmallPackageTest, ThrowingForwardBecomesStatus) {
  auto lib = open("libthrowing.so");
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  for (int i = 0; i < 3; ++i) {  // the instance returns to the pool each time
    EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_ERR_RUNTIME);
    EXPECT_NE(message(*lib).find("throwing: forward failed"), std::string::npos) << message(*lib);
    EXPECT_EQ(run_once(*lib, c.get(), lib->run_single_threaded), AOTRUN_PKG_ERR_RUNTIME);
    EXPECT_NE(message(*lib).find("throwing: forward failed"), std::string::npos) << message(*lib);
  }
}

TEST_F(SmallPackageTest, FaultSyncFailsEverySeventhRun) {
  unsetenv("AOTRUN_TEST_FAULT_EVERY");
  auto lib = open("libfault_sync.so");
  ContainerHandle c(*lib, must_create(*lib, args(2)));
  for (int run = 1; run <= 15; ++run) {
    std::vector<float> y;
    const int32_t st = run_once(*lib, c.get(), lib->run, static_cast<float>(run), &y);
    if (run % 7 == 0) {
      EXPECT_EQ(st, AOTRUN_PKG_ERR_RUNTIME) << "run " << run;
      EXPECT_EQ(message(*lib), "fault: injected failure on run " + std::to_string(run));
    } else {
      ASSERT_EQ(st, AOTRUN_PKG_OK) << "run " << run << ": " << message(*lib);
      EXPECT_EQ(y, std::vector<float>(8, static_cast<float>(run)));  // y = x
    }
  }
}

TEST_F(SmallPackageTest, FaultAsyncFailsInTheLaunchedWork) {
  setenv("AOTRUN_TEST_FAULT_EVERY", "3", 1);  // read at create
  auto lib = open("libfault_async.so");
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  unsetenv("AOTRUN_TEST_FAULT_EVERY");
  for (int run = 1; run <= 7; ++run) {
    // run() only enqueues: it succeeds; the failure is recorded on the stream.
    ASSERT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
    char msg[256];
    const int32_t st = aotrun_test_direct_host_take_stream_error(host_.get(), msg, sizeof(msg));
    if (run % 3 == 0) {
      EXPECT_EQ(st, AOTRUN_PKG_ERR_RUNTIME) << "run " << run;
      EXPECT_EQ(std::string(msg), "fault: injected failure on run " + std::to_string(run));
    } else {
      EXPECT_EQ(st, AOTRUN_PKG_OK) << "run " << run << ": " << msg;
    }
  }
}

TEST_F(SmallPackageTest, FaultEnvironmentIsValidated) {
  setenv("AOTRUN_TEST_FAULT_EVERY", "often", 1);
  auto lib = open("libfault_async.so");
  aotrun_pkg_container* c = nullptr;
  const auto a = args(1);
  EXPECT_EQ(lib->create(&c, &a), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message(*lib).find("AOTRUN_TEST_FAULT_EVERY='often'"), std::string::npos);
  unsetenv("AOTRUN_TEST_FAULT_EVERY");
}

// With one instance, the second threaded run finds it pending and queries its
// event. Under capture that query fails with 900: the status must come out
// unchanged. run_single_threaded uses no events and is unaffected.
TEST_F(SmallPackageTest, ThreadedRunPassesCaptureStatusThrough) {
  auto lib = open("libnoop.so");
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  aotrun_test_direct_host_fail_event_query(host_.get(), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  EXPECT_NE(message(*lib).find("capturing"), std::string::npos) << message(*lib);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run_single_threaded), AOTRUN_PKG_OK) << message(*lib);
  aotrun_test_direct_host_counters n;
  aotrun_test_direct_host_counters_get(host_.get(), &n);
  EXPECT_EQ(n.event_queries, 1);
  EXPECT_EQ(n.event_records, 1);  // single-threaded recorded nothing

  // Capture over: the instance is still pending and is reclaimed normally.
  aotrun_test_direct_host_fail_event_query(host_.get(), AOTRUN_PKG_OK);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
}

TEST_F(SmallPackageTest, ThreadedRunWaitsOnTheOldestPendingInstance) {
  auto lib = open("libnoop.so");
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  aotrun_test_direct_host_fail_event_query(host_.get(), AOTRUN_PKG_NOT_READY);
  ASSERT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK);
  ASSERT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
  aotrun_test_direct_host_counters n;
  aotrun_test_direct_host_counters_get(host_.get(), &n);
  EXPECT_EQ(n.event_queries, 1);
  EXPECT_EQ(n.event_syncs, 1);

  aotrun_test_direct_host_fail_event_sync(host_.get(), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  aotrun_test_direct_host_fail_event_sync(host_.get(), AOTRUN_PKG_OK);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
}

TEST_F(SmallPackageTest, FailedPreviousWorkDoesNotPoisonTheInstance) {
  auto lib = open("libnoop.so");
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  ASSERT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK);
  // The event reports that the work before it failed (the earlier run's waiter
  // got that failure): the instance is reclaimed, this run succeeds.
  aotrun_test_direct_host_fail_event_query(host_.get(), AOTRUN_PKG_ERR_RUNTIME);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
}

TEST_F(SmallPackageTest, HostFailuresPassThroughAndReleaseTheInstance) {
  auto lib = open("libnoop.so");
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  aotrun_test_direct_host_fail_launch(host_.get(), AOTRUN_PKG_ERR_CAPTURE_INVALIDATED);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_ERR_CAPTURE_INVALIDATED);
  EXPECT_NE(message(*lib).find("host launch failed with status 901"), std::string::npos) << message(*lib);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run_single_threaded), AOTRUN_PKG_ERR_CAPTURE_INVALIDATED);
  aotrun_test_direct_host_fail_launch(host_.get(), AOTRUN_PKG_OK);
  EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK) << message(*lib);
  aotrun_test_direct_host_counters n;
  aotrun_test_direct_host_counters_get(host_.get(), &n);
  EXPECT_EQ(n.event_queries, 0);  // the failed run returned its instance to the pool
}

TEST_F(SmallPackageTest, CountingComputesAndCountsInsideThePackage) {
  auto lib = open("libcounting.so");
  auto reset = reinterpret_cast<aotrun_test_counting_reset_fn>(lib->symbol(AOTRUN_TEST_COUNTING_SYM_RESET));
  auto max_inflight =
      reinterpret_cast<aotrun_test_counting_max_inflight_fn>(lib->symbol(AOTRUN_TEST_COUNTING_SYM_MAX_INFLIGHT));
  auto completed = reinterpret_cast<aotrun_test_counting_completed_fn>(lib->symbol(AOTRUN_TEST_COUNTING_SYM_COMPLETED));
  ASSERT_TRUE(reset && max_inflight && completed);
  reset();
  ContainerHandle c(*lib, must_create(*lib, args(1)));
  std::vector<float> y;
  ASSERT_EQ(run_once(*lib, c.get(), lib->run, 2.5f, &y), AOTRUN_PKG_OK) << message(*lib);
  EXPECT_EQ(y, std::vector<float>(8, 3.5f));
  ASSERT_EQ(run_once(*lib, c.get(), lib->run_single_threaded, -1.0f, &y), AOTRUN_PKG_OK);
  EXPECT_EQ(y, std::vector<float>(8, 0.0f));
  EXPECT_EQ(completed(), 2);
  EXPECT_EQ(max_inflight(), 1);

  // Four threads, one instance: the inline host executes the work while the
  // instance is taken, so executions never overlap (the others wait on the
  // container's condition variable).
  reset();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        if (run_once(*lib, c.get(), lib->run, static_cast<float>(t)) != AOTRUN_PKG_OK) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  EXPECT_EQ(completed(), 100);
  EXPECT_EQ(max_inflight(), 1);
}

TEST_F(SmallPackageTest, CountingSeesOverlapWithSeveralInstances) {
  setenv("AOTRUN_TEST_SPIN_US", "2000", 1);
  auto lib = open("libcounting.so");
  auto reset = reinterpret_cast<aotrun_test_counting_reset_fn>(lib->symbol(AOTRUN_TEST_COUNTING_SYM_RESET));
  auto max_inflight =
      reinterpret_cast<aotrun_test_counting_max_inflight_fn>(lib->symbol(AOTRUN_TEST_COUNTING_SYM_MAX_INFLIGHT));
  ContainerHandle c(*lib, must_create(*lib, args(4)));
  unsetenv("AOTRUN_TEST_SPIN_US");
  reset();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) EXPECT_EQ(run_once(*lib, c.get(), lib->run), AOTRUN_PKG_OK);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GE(max_inflight(), 1);
  EXPECT_LE(max_inflight(), 4);  // never more executions than instances
}

}  // namespace
}  // namespace test
}  // namespace aotrun
