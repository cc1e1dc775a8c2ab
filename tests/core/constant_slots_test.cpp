// White-box: the runner's two constant sets and the leases runs take on them
// (runner/constants/constant_slots.hpp). Every test runs with serial leases
// on asymmetric fences (where the kernel offers them) and counted ones.
#include <gtest/gtest.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "base/asymmetric_fence.hpp"
#include "runner/constants/constant_slots.hpp"

namespace aotrun {
namespace {

bool kernel_offers_membarrier() {
  const long commands = ::syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0u, 0);
  return commands >= 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0;
}

std::unique_ptr<ConstantSet> generation(uint64_t g) {
  auto s = std::make_unique<ConstantSet>();
  s->generation = g;
  return s;
}

// Stages generation g and makes it active, as an update and a swap do.
void install_and_swap(ConstantSlots& slots, uint64_t g) {
  std::lock_guard<std::mutex> writers(slots.writer_mutex());
  slots.install_inactive(generation(g));
  ASSERT_TRUE(slots.swap());
}

// Frees the inactive set on another thread; the future says when it did.
std::future<void> free_inactive_async(ConstantSlots& slots) {
  return std::async(std::launch::async, [&slots] {
    std::lock_guard<std::mutex> writers(slots.writer_mutex());
    slots.free_inactive();
  });
}

TEST(AsymmetricFence, AvailableWhereTheKernelOffersIt) {
  if (!kernel_offers_membarrier()) GTEST_SKIP() << "this kernel (or a filter) offers no private expedited membarrier";
  EXPECT_TRUE(asymmetric_fences_available());
  EXPECT_TRUE(asymmetric_heavy_fence());
  ConstantSlots slots(generation(0));
  EXPECT_TRUE(slots.asymmetric()) << "a runner's serial leases would count themselves with atomics";
}

class SerialLease : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !asymmetric_fences_available()) GTEST_SKIP() << "no asymmetric fences in this process";
  }
  ConstantSlots slots_{generation(0), GetParam()};
};

TEST_P(SerialLease, FreeingTheInactiveSetWaitsForTheRunStillOnIt) {
  auto lease = std::make_unique<ConstantSlots::SerialLease>(slots_);
  ASSERT_EQ(lease->set().generation, 0u);
  install_and_swap(slots_, 1);
  std::future<void> freed = free_inactive_async(slots_);
  // Never ready while the lease is held: a pass cannot be a matter of timing.
  EXPECT_EQ(freed.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  EXPECT_EQ(lease->set().generation, 0u);  // still there to read
  lease.reset();
  EXPECT_EQ(freed.wait_for(std::chrono::seconds(30)), std::future_status::ready);
}

TEST_P(SerialLease, ARunAfterTheSwapDoesNotHoldTheOldSet) {
  install_and_swap(slots_, 1);
  ConstantSlots::SerialLease lease(slots_);
  EXPECT_EQ(lease.set().generation, 1u);
  std::future<void> freed = free_inactive_async(slots_);
  EXPECT_EQ(freed.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the free waited for a run on the active set";
}

TEST_P(SerialLease, NamesItsThreadToWritersInsideTheRun) {
  {
    ConstantSlots::SerialLease lease(slots_);
    EXPECT_TRUE(slots_.leased_by_this_thread());
    bool elsewhere = true;
    std::thread([&] { elsewhere = slots_.leased_by_this_thread(); }).join();
    EXPECT_FALSE(elsewhere);
  }
  EXPECT_FALSE(slots_.leased_by_this_thread());
}

// A serial run and a counted one (threaded mode, output shapes) read sets in
// a loop while a writer stages, swaps and frees 2,000 generations: each sees
// generations in order, and ASan/TSan see no read of a freed set.
TEST_P(SerialLease, StormOfSwapsAndFrees) {
  constexpr uint64_t kGenerations = 2000;
  std::atomic<bool> done{false};
  std::atomic<int> out_of_order{0};
  std::atomic<uint64_t> serial_runs{0}, counted_runs{0};
  auto reader = [&](bool serial) {
    uint64_t last = 0;
    while (!done.load()) {
      uint64_t g;
      if (serial) {
        ConstantSlots::SerialLease lease(slots_);
        g = lease.set().generation;
        ++serial_runs;
      } else {
        ConstantSlots::Lease lease(slots_);
        g = lease.set().generation;
        ++counted_runs;
      }
      if (g < last || g > kGenerations) ++out_of_order;
      last = g;
    }
  };
  std::thread serial(reader, true), counted(reader, false);
  while (serial_runs.load() == 0 || counted_runs.load() == 0) std::this_thread::yield();
  for (uint64_t g = 1; g <= kGenerations; ++g) {
    install_and_swap(slots_, g);
    if (g % 3 == 0) {
      std::lock_guard<std::mutex> writers(slots_.writer_mutex());
      EXPECT_TRUE(slots_.free_inactive());
    }
  }
  done = true;
  serial.join();
  counted.join();
  EXPECT_EQ(out_of_order.load(), 0);
  std::printf("%llu serial and %llu counted leases during the storm\n",
              static_cast<unsigned long long>(serial_runs.load()),
              static_cast<unsigned long long>(counted_runs.load()));
  std::lock_guard<std::mutex> writers(slots_.writer_mutex());
  EXPECT_EQ(slots_.active().generation, kGenerations);
}

INSTANTIATE_TEST_SUITE_P(ConstantSlots, SerialLease, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return std::string(p.param ? "AsymmetricFences" : "Counted");
                         });

}  // namespace
}  // namespace aotrun
