// Size arithmetic that wraps. A package asking the host's alloc service for
// a size near SIZE_MAX must get OUT_OF_MEMORY and NULL, not a zero-byte
// block (tests/reliability/packages/sizes.c checks every answer); a caller's
// byte_offset must not carry a tensor past the end of the address space; the
// SDK's checks must not let a wrapped element count pass for "empty". Plus
// white-box tests of cpp/base/checked_math.hpp, which every size goes through.
#include <cstdint>
#include <limits>

#include "rel_util.hpp"

#include "aotrun/sdk/shape.hpp"
#include "aotrun/sdk/signature.hpp"
#include "aotrun/sdk/tensor.hpp"
#include "base/checked_math.hpp"

using namespace aotrun_test;

namespace {

constexpr size_t kSizeMax = std::numeric_limits<size_t>::max();

}  // namespace

TEST(CheckedMath, AddMulAndRoundUpReportOverflow) {
  size_t s = 0;
  EXPECT_TRUE(aotrun::checked_add<size_t>(kSizeMax - 1, 1, &s));
  EXPECT_EQ(s, kSizeMax);
  EXPECT_FALSE(aotrun::checked_add<size_t>(kSizeMax, 1, &s));
  EXPECT_TRUE(aotrun::checked_mul<size_t>(size_t(1) << 31, size_t(1) << 32, &s));
  EXPECT_FALSE(aotrun::checked_mul<size_t>(size_t(1) << 32, size_t(1) << 32, &s));
  int64_t i = 0;
  EXPECT_FALSE(aotrun::checked_mul<int64_t>(INT64_C(1) << 62, 2, &i));  // signed: 2^63 does not fit
  EXPECT_TRUE(aotrun::checked_mul<int64_t>(INT64_C(1) << 62, -2, &i));
  EXPECT_EQ(i, INT64_MIN);

  // Rounding to 256: the wrap the host alloc service had.
  EXPECT_TRUE(aotrun::checked_round_up(0, 256, &s));
  EXPECT_EQ(s, 0u);
  EXPECT_TRUE(aotrun::checked_round_up(1, 256, &s));
  EXPECT_EQ(s, 256u);
  EXPECT_TRUE(aotrun::checked_round_up(kSizeMax - 255, 256, &s));
  EXPECT_EQ(s, kSizeMax - 255);
  for (size_t big : {kSizeMax, kSizeMax - 100, kSizeMax - 254}) {
    SCOPED_TRACE(big);
    EXPECT_FALSE(aotrun::checked_round_up(big, 256, &s));
  }
  EXPECT_FALSE(aotrun::checked_round_up(10, 3, &s));  // not a power of two
  EXPECT_FALSE(aotrun::checked_round_up(10, 0, &s));

  EXPECT_EQ(aotrun::saturating_mul<uint64_t>(uint64_t(1) << 40, uint64_t(1) << 40), UINT64_MAX);
  EXPECT_EQ(aotrun::saturating_add<uint64_t>(UINT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(aotrun::saturating_mul<uint64_t>(3, 4), 12u);
}

TEST(CheckedMath, NumelOfShapes) {
  uint64_t n = 0;
  const int64_t ok[] = {2, 3, 4};
  EXPECT_TRUE(aotrun::checked_numel(ok, 3, &n));
  EXPECT_EQ(n, 24u);
  EXPECT_TRUE(aotrun::checked_numel(ok, 0, &n));  // a scalar
  EXPECT_EQ(n, 1u);
  const int64_t wraps[] = {INT64_C(1) << 32, INT64_C(1) << 32};  // 2^64 would read as 0, "empty"
  EXPECT_FALSE(aotrun::checked_numel(wraps, 2, &n));
  const int64_t empty[] = {INT64_C(1) << 40, 0, INT64_C(1) << 40};
  EXPECT_TRUE(aotrun::checked_numel(empty, 3, &n));
  EXPECT_EQ(n, 0u);
  const int64_t negative[] = {2, -1};
  EXPECT_FALSE(aotrun::checked_numel(negative, 2, &n));
}

TEST(HostAlloc, SizesThatWrapWhenRoundedGetOutOfMemoryAndNull) {
  LogCapture logs;
  Package pkg(bare_so("rel_sizes"));
  ASSERT_NE(pkg.get(), nullptr);
  Tensor x({2, 4}), y({2, 4});
  for (aotrun_mode m : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    SCOPED_TRACE(m);
    Runner r(pkg, RunnerOptions().mode(m));
    ASSERT_NE(r.get(), nullptr);
    // Graph mode: warm-up, capture (allocations then belong to the graph), replay.
    for (int i = 0; i < 3; ++i) AOTRUN_EXPECT_OK(run_vec(r.get(), x, y));
    aotrun_event* ev = nullptr;
    AOTRUN_ASSERT_OK(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev));
    AOTRUN_EXPECT_OK(aotrun_event_wait(ev));
    aotrun_event_free(ev);
    if (m == AOTRUN_MODE_GRAPH) {
      EXPECT_EQ(r.stats().graph_captures, 1u);
    }
  }
  // The refusal names the size.
  EXPECT_GE(logs.count_containing("package 'rel_sizes': alloc of 18446744073709551615 bytes failed: the size "
                                  "overflows when rounded up to 256-byte blocks"),
            1u);
  EXPECT_GE(logs.count_containing("alloc of 18446744073709551515 bytes failed"), 1u);
  EXPECT_GE(logs.count_containing("alloc of 9223372036854775808 bytes failed"), 1u);
}

TEST(CallerTensors, ByteOffsetPastTheEndOfTheAddressSpaceIsRefused) {
  Package pkg(bare_so("rel_sizes_noop"));  // its runs do nothing: never touch tensor data
  ASSERT_NE(pkg.get(), nullptr);
  Runner r(pkg, RunnerOptions());
  ASSERT_NE(r.get(), nullptr);
  const uint64_t huge_offset = UINT64_MAX - 15;  // + 32 bytes of data wraps
  {
    Tensor x({2, 4}), y({2, 4});
    x.dl.byte_offset = huge_offset;
    REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT,
                       "input 0 ('x') has byte_offset 18446744073709551600, which with its 32 bytes runs past the "
                       "end of the address space");
    aotrun_event* ev = nullptr;
    REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_async(r.get(), &x.dl, 1, &y.dl, 1, &ev)), AOTRUN_ERR_INVALID_ARGUMENT,
                       "input 0 ('x') has byte_offset");
    EXPECT_EQ(ev, nullptr);
    DLManagedTensor* out = nullptr;
    REL_EXPECT_OUTCOME(outcome(aotrun_runner_run_alloc(r.get(), &x.dl, 1, &out, 1)), AOTRUN_ERR_INVALID_ARGUMENT,
                       "input 0 ('x') has byte_offset");
    EXPECT_EQ(out, nullptr);
  }
  {
    Tensor x({2, 4}), y({2, 4});
    y.dl.byte_offset = huge_offset;
    REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT, "output 0 ('y') has byte_offset");
  }
  {
    // A data pointer near the top of the address space with a small offset
    // (never dereferenced: refused before the package is called).
    Tensor x({2, 4}), y({2, 4});
    x.dl.data = reinterpret_cast<void*>(UINTPTR_MAX - 63);
    x.dl.byte_offset = 64;
    REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT,
                       "input 0 ('x') has byte_offset 64");
  }
  {
    // Still accepted: an offset inside a real buffer, and an empty tensor
    // with NULL data (the offset is never applied).
    Tensor x({4, 4}), y({2, 4});
    x.shape[0] = 2;
    x.rebind();
    x.dl.byte_offset = 8 * sizeof(float);
    AOTRUN_EXPECT_OK(run_vec(r.get(), x, y));
    Tensor e({0, 4}), ey({0, 4});
    e.dl.data = nullptr;
    ey.dl.data = nullptr;
    e.dl.byte_offset = huge_offset;
    AOTRUN_EXPECT_OK(run_vec(r.get(), e, ey));
  }
  {
    // Shapes whose element count x item size or stride product overflows
    // stay refused (RELIABILITY.md rows 15 and 17).
    Tensor x({2, 4}), y({2, 4});
    int64_t shape[2] = {INT64_C(1) << 62, 4};
    x.dl.shape = shape;
    x.dl.data = nullptr;
    REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT, "too large to address");
    int64_t shape2[2] = {INT64_C(1) << 61, 4}, strides[2] = {4, 1};
    x.dl.shape = shape2;
    x.dl.strides = strides;
    REL_EXPECT_OUTCOME(outcome(run_vec(r.get(), x, y)), AOTRUN_ERR_INVALID_ARGUMENT, "too large to address");
  }
  EXPECT_EQ(r.stats().inflight, 0u);
}

TEST(SdkSizeMath, ElementCountsAndStridesDoNotWrap) {
  namespace sdk = aotrun::sdk;
  const sdk::TensorSpec spec("x", sdk::dtype::float32(), {sdk::kDynamic, 4});
  const DLDevice cpu{kDLCPU, 0};
  int64_t shape[2] = {INT64_C(1) << 62, 4};  // 2^64 elements: wraps to 0, "empty"
  DLTensor t{};
  t.device = cpu;
  t.ndim = 2;
  t.dtype = sdk::dtype::float32();
  t.shape = shape;
  t.data = nullptr;
  try {
    sdk::check_run_tensor("input", 0, spec, t, cpu);
    ADD_FAILURE() << "a NULL tensor of 2^64 elements passed the SDK's checks";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.status(), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(rel::contains(e.what(), "too large to address")) << e.what();
  }
  int64_t n = 0;
  EXPECT_FALSE(sdk::checked_numel(t, &n));
  EXPECT_THROW(sdk::numel(t), sdk::Error);
  EXPECT_THROW(sdk::Shape(shape, 2).numel(), sdk::Error);

  // Elements fit int64 but bytes do not: a model computing numel * 4 wraps.
  int64_t shape2[2] = {INT64_C(1) << 60, 4};  // 2^62 elements, 2^64 bytes
  t.shape = shape2;
  float dummy = 0;
  t.data = &dummy;
  EXPECT_THROW(sdk::check_run_tensor("input", 0, spec, t, cpu), sdk::Error);

  // Strides of [2, 2^62, 4]: the expected stride of dim 0 is 2^64, which
  // wraps to 0 in a plain product and would match a stride of 0.
  int64_t shape3[3] = {2, INT64_C(1) << 62, 4}, strides3[3] = {0, 4, 1};
  DLTensor s{};
  s.ndim = 3;
  s.shape = shape3;
  s.strides = strides3;
  EXPECT_FALSE(sdk::is_compact(s));

  // Unchanged: ordinary and empty tensors.
  int64_t ok[2] = {3, 4}, empty[3] = {INT64_C(1) << 62, 0, INT64_C(1) << 62};
  t.shape = ok;
  EXPECT_NO_THROW(sdk::check_run_tensor("input", 0, spec, t, cpu));
  EXPECT_EQ(sdk::numel(t), 12);
  EXPECT_EQ(sdk::Shape(empty, 3).numel(), 0);
  s.shape = empty;
  EXPECT_TRUE(sdk::is_compact(s));
}
