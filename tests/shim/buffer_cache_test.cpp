// The memory behind CPU tensors the shim allocates (buffer_cache.hpp)
// and the handles' own objects (handle_pool.hpp): a call's buffers are the
// previous call's, live tensors never share memory, a recycled handle
// carries nothing of its last life over, and tensors may be freed on any
// thread, before or after the thread that made them exits.
//
// The counts come from this executable's own aligned_alloc, which the
// shim's calls bind to (the executable comes first in symbol lookup); not
// under a sanitizer, whose runtime owns the allocator (and under
// AddressSanitizer the cache is off).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "aotrun_shim/shim.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AOTRUN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AOTRUN_TEST_SANITIZED 1
#endif
#endif

namespace {
std::atomic<long> g_aligned_allocs{0};
}

#ifndef AOTRUN_TEST_SANITIZED
extern "C" void* __libc_memalign(size_t alignment, size_t size);
extern "C" void* aligned_alloc(size_t alignment, size_t size) {
  g_aligned_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, size);
}
#endif

namespace {

constexpr int32_t kFloat = 6, kCpu = 0;

AtenTensorHandle empty_floats(int64_t n) {
  AtenTensorHandle h = nullptr;
  const int64_t stride = 1;
  EXPECT_EQ(aoti_torch_empty_strided(1, &n, &stride, kFloat, kCpu, 0, &h), AOTI_TORCH_SUCCESS);
  return h;
}

float* floats_of(AtenTensorHandle h) {
  void* p = nullptr;
  EXPECT_EQ(aoti_torch_get_data_ptr(h, &p), AOTI_TORCH_SUCCESS);
  return static_cast<float*>(p);
}

void free_tensor(AtenTensorHandle h) { EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS); }

// One "call" of a model: buffers of these sizes made, written, all freed.
void one_call(const std::vector<int64_t>& sizes) {
  std::vector<AtenTensorHandle> live;
  for (int64_t n : sizes) {
    live.push_back(empty_floats(n));
    float* p = floats_of(live.back());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
  }
  for (AtenTensorHandle h : live) free_tensor(h);
}

// Floats per buffer of a "call": up to 256 KiB each, which are kept
// (buffer_cache.hpp's kCacheBlockBytes), and two larger ones, which are not.
const std::vector<int64_t> kCallSizes = {300, 60000, 1, 4096, 60000, 65536, 300, 17, 70000, 250000};
constexpr long kLargerBuffers = 2;

TEST(ShimBufferCache, ACallOfTheSameSizesAgainTakesNoNewMemory) {
#ifdef AOTRUN_TEST_SANITIZED
  GTEST_SKIP() << "counts allocations through this executable's aligned_alloc, which a sanitizer's runtime owns";
#else
  const char* env = std::getenv("AOTRUN_SHIM_BUFFER_CACHE");
  const bool off = env != nullptr && std::strcmp(env, "0") == 0;
  one_call(kCallSizes);
  const long before = g_aligned_allocs.load();
  one_call(kCallSizes);
  one_call(kCallSizes);
  const long made = g_aligned_allocs.load() - before;
  if (off) {
    EXPECT_EQ(made, 2 * static_cast<long>(kCallSizes.size())) << "AOTRUN_SHIM_BUFFER_CACHE=0: every buffer is new";
  } else {
    EXPECT_EQ(made, 2 * kLargerBuffers) << "the second and third calls' buffers of up to 256 KiB should be the first's";
  }
#endif
}

TEST(ShimBufferCache, LiveTensorsNeverShareMemory) {
  for (int round = 0; round < 3; ++round) {  // the later rounds from kept blocks
    std::vector<AtenTensorHandle> live;
    for (int i = 0; i < 40; ++i) {
      live.push_back(empty_floats(1000 + (i % 3)));
      float* p = floats_of(live.back());
      for (int j = 0; j < 1000; ++j) p[j] = static_cast<float>(i * 10000 + j);
    }
    for (int i = 0; i < 40; ++i) {
      const float* p = floats_of(live[i]);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
      for (int j = 0; j < 1000; j += 97) ASSERT_EQ(p[j], static_cast<float>(i * 10000 + j)) << i << " " << j;
    }
    for (AtenTensorHandle h : live) free_tensor(h);
  }
}

TEST(ShimBufferCache, RecycledHandlesCarryNothingOver) {
  for (int round = 0; round < 3; ++round) {
    // A bfloat16 tensor and an offset, transposed view of it, deleted.
    AtenTensorHandle wide = nullptr, view = nullptr;
    const int64_t sizes[2] = {4, 5}, strides[2] = {5, 1};
    ASSERT_EQ(aoti_torch_empty_strided(2, sizes, strides, /*bfloat16*/ 15, kCpu, 0, &wide), AOTI_TORCH_SUCCESS);
    const int64_t vsizes[2] = {2, 2}, vstrides[2] = {1, 4};
    ASSERT_EQ(aoti_torch__reinterpret_tensor(wide, 2, vsizes, vstrides, 3, &view), AOTI_TORCH_SUCCESS);
    free_tensor(view);
    free_tensor(wide);
    // Then a plain float vector and a view of it: nothing of the above.
    AtenTensorHandle flat = empty_floats(7);
    AtenTensorHandle again = nullptr;
    const int64_t n = 7, one = 1;
    ASSERT_EQ(aoti_torch__reinterpret_tensor(flat, 1, &n, &one, 0, &again), AOTI_TORCH_SUCCESS);
    for (AtenTensorHandle h : {flat, again}) {
      int64_t dim = -1, offset = -1;
      int64_t *sz = nullptr, *st = nullptr;
      int32_t dtype = -1, device = -1;
      ASSERT_EQ(aoti_torch_get_dim(h, &dim), AOTI_TORCH_SUCCESS);
      ASSERT_EQ(aoti_torch_get_sizes(h, &sz), AOTI_TORCH_SUCCESS);
      ASSERT_EQ(aoti_torch_get_strides(h, &st), AOTI_TORCH_SUCCESS);
      ASSERT_EQ(aoti_torch_get_storage_offset(h, &offset), AOTI_TORCH_SUCCESS);
      ASSERT_EQ(aoti_torch_get_dtype(h, &dtype), AOTI_TORCH_SUCCESS);
      ASSERT_EQ(aoti_torch_get_device_type(h, &device), AOTI_TORCH_SUCCESS);
      EXPECT_EQ(dim, 1);
      EXPECT_EQ(sz[0], 7);
      EXPECT_EQ(st[0], 1);
      EXPECT_EQ(offset, 0);
      EXPECT_EQ(dtype, kFloat);
      EXPECT_EQ(device, kCpu);
    }
    EXPECT_EQ(floats_of(again), floats_of(flat));
    free_tensor(again);
    free_tensor(flat);
  }
}

TEST(ShimBufferCache, TensorsFreedOnOtherThreadsBeforeAndAfterTheirMakersExit) {
  // Made on a thread that then exits; freed here.
  AtenTensorHandle made_there = nullptr;
  std::thread([&] { made_there = empty_floats(5000); }).join();
  ASSERT_NE(made_there, nullptr);
  floats_of(made_there)[4999] = 1.0f;
  free_tensor(made_there);

  // Made here; freed on threads that keep the block, and exit with it kept.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    AtenTensorHandle h = empty_floats(5000 + t);
    threads.emplace_back([h] {
      free_tensor(h);
      one_call(kCallSizes);
    });
  }
  for (auto& t : threads) t.join();

  // Many sizes, more than a thread keeps: the oldest go.
  std::thread([] {
    for (int64_t n = 1; n < 400; ++n) one_call({n * 64, n * 1000});
    one_call(kCallSizes);
  }).join();
}

}  // namespace
