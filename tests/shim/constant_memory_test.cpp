// Where a model's frozen (mkldnn-layout) constants live (mkldnn_blob.hpp,
// huge_pages.hpp). AOTInductor copies its constants into one malloc'd blob,
// 16-byte aligned, and wraps each while aotrun's loader has a blob hook set:
// a misaligned blocked weight made in such a window moves into aligned
// memory of the shim's, with the same bytes, and the original's whole pages
// are handed back; outside a window, or already aligned, or with
// AOTRUN_SHIM_ALIGN_CONSTANTS=0 (the align_off. copies of these tests), it
// stays where it is. Every form computes the same linear.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "aotrun_shim/shim.h"
#include "blocked_layout.hpp"
#include "smaps.hpp"

namespace {

using aotrun_shim_test::Blocked;
using aotrun_shim_test::smaps_kb;
using aotrun_shim_test::thp_mode;

constexpr int32_t kF32 = 6;
constexpr int64_t kOut = 128, kIn = 1024;  // 512 KiB of weight: whole pages inside

bool aligning_off() {
  const char* env = std::getenv("AOTRUN_SHIM_ALIGN_CONSTANTS");
  return env != nullptr && std::strcmp(env, "0") == 0;
}

// Why a test of glibc's own mapped blocks with constants that move cannot
// run here (null when it can): under a sanitizer, whose allocator replaces
// glibc's malloc, or with moves turned off.
const char* glibc_blocks_unavailable() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return "the sanitizer's allocator replaces glibc's malloc, whose mapped blocks this is about";
#endif
  return aligning_off() ? "AOTRUN_SHIM_ALIGN_CONSTANTS=0: nothing moves" : nullptr;
}

// The frozen linear weight [kOut, kIn] in AB16b64a, as torch's oneDNN
// packs it for AVX2 and AVX-512 CPUs.
const Blocked& layout() {
  static const Blocked b({kOut, kIn}, {0, 1}, {{16, 1}, {64, 0}});
  return b;
}

std::vector<float> weight_values() {
  std::vector<float> w(static_cast<size_t>(kOut * kIn));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 64.0f;
  return w;
}

// Anonymous pages holding the blocked bytes at `offset` from a page start,
// as a model's blob holds a constant (released pages then read as zeros).
struct Blob {
  char* base = nullptr;
  size_t bytes = 0;
  float* at = nullptr;
  Blob(const std::vector<float>& blocked, size_t offset) {
    bytes = blocked.size() * sizeof(float) + offset + 8192;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    base = static_cast<char*>(p);
    at = reinterpret_cast<float*>(base + offset);
    std::memcpy(at, blocked.data(), blocked.size() * sizeof(float));
  }
  ~Blob() {
    if (base != nullptr) munmap(base, bytes);
  }
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;
};

AtenTensorHandle mkldnn_constant(float* data, const std::vector<uint8_t>& metadata) {
  const int64_t sizes[] = {kOut, kIn}, strides[] = {1, 0};
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(aoti_torch_create_tensor_from_blob_v2(data, 2, sizes, strides, 0, kF32, aoti_torch_device_type_cpu(), 0, &h,
                                                  aoti_torch_layout__mkldnn(), metadata.data(),
                                                  static_cast<int64_t>(metadata.size())),
            AOTI_TORCH_SUCCESS);
  return h;
}

// x @ W^T for 3 rows of x through the frozen linear, against a loop in double.
void expect_linear_right(AtenTensorHandle w, const std::vector<float>& plain, const char* what) {
  std::vector<float> x(3 * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 13 % 29) - 14) / 16.0f;
  const int64_t xs[] = {3, kIn}, xst[] = {kIn, 1};
  AtenTensorHandle xh = nullptr, out = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(x.data(), 2, xs, xst, 0, kF32, 0, 0, &xh), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_cpu__linear_pointwise(xh, w, nullptr, "none", nullptr, 0, nullptr, &out), AOTI_TORCH_SUCCESS)
      << what;
  void* p = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(out, &p), AOTI_TORCH_SUCCESS);
  const float* got = static_cast<const float*>(p);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < kOut; ++j) {
      double want = 0;
      for (int64_t k = 0; k < kIn; ++k) want += static_cast<double>(x[i * kIn + k]) * plain[j * kIn + k];
      ASSERT_NEAR(got[i * kOut + j], want, 1e-3 + 1e-5 * std::fabs(want)) << what << ": row " << i << " col " << j;
    }
  EXPECT_EQ(aoti_torch_delete_tensor_object(out), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(aoti_torch_delete_tensor_object(xh), AOTI_TORCH_SUCCESS);
}

void* data_ptr(AtenTensorHandle h) {
  void* p = nullptr;
  EXPECT_EQ(aoti_torch_get_data_ptr(h, &p), AOTI_TORCH_SUCCESS);
  return p;
}

TEST(ShimConstantMemory, MisalignedFrozenWeightMovesToAlignedMemoryInALoadWindow) {
  const std::vector<float> plain = weight_values(), blocked = layout().pack(plain);
  const std::vector<uint8_t> metadata = layout().metadata();
  const size_t blocked_bytes = blocked.size() * sizeof(float);
  Blob blob(blocked, 16);  // where glibc's malloc puts a mapped block's data
  ASSERT_NE(blob.base, nullptr);
  int calls = 0;
  aotrun_shim_set_blob_hook([](void* c) { ++*static_cast<int*>(c); }, &calls);
  AtenTensorHandle w = mkldnn_constant(blob.at, metadata);
  aotrun_shim_set_blob_hook(nullptr, nullptr);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(calls, 1);
  const auto* source = static_cast<const float*>(data_ptr(w));
  const size_t middle = blocked.size() / 2;  // on a page wholly inside the constant
  if (aligning_off()) {
    EXPECT_EQ(source, blob.at) << "AOTRUN_SHIM_ALIGN_CONSTANTS=0: the blob stays where the model put it";
    EXPECT_EQ(blob.at[middle], blocked[middle]);
  } else {
    EXPECT_NE(source, blob.at) << "a misaligned blob in a load window moves";
    EXPECT_EQ(reinterpret_cast<uintptr_t>(source) % 64, 0u) << "its new place is 64-byte aligned";
    EXPECT_EQ(std::memcmp(source, blocked.data(), blocked_bytes), 0) << "the blocked bytes moved unchanged";
    EXPECT_EQ(blob.at[middle], 0.0f) << "the original's whole pages were handed back";
    EXPECT_EQ(blob.at[0], blocked[0]) << "the partial first page (another constant's, too) is left alone";
  }
  expect_linear_right(w, plain, "moved constant");
  // The plain values, unpacked from wherever the blob now is.
  const int64_t sizes[] = {kOut, kIn}, strides[] = {kIn, 1};
  AtenTensorHandle dense = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, strides, kF32, 0, 0, &dense), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_copy_(dense, w, 0), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(std::memcmp(data_ptr(dense), plain.data(), plain.size() * sizeof(float)), 0);
  EXPECT_EQ(aoti_torch_delete_tensor_object(dense), AOTI_TORCH_SUCCESS);
  EXPECT_EQ(aoti_torch_delete_tensor_object(w), AOTI_TORCH_SUCCESS);
}

// No window (a tensor made over memory the shim cannot know to be a
// constant's), or a blob already aligned: read where it is, untouched.
TEST(ShimConstantMemory, BlobOutsideAWindowOrAlignedStaysInPlace) {
  const std::vector<float> plain = weight_values(), blocked = layout().pack(plain);
  const std::vector<uint8_t> metadata = layout().metadata();
  const size_t middle = blocked.size() / 2;
  {
    Blob blob(blocked, 16);
    ASSERT_NE(blob.base, nullptr);
    AtenTensorHandle w = mkldnn_constant(blob.at, metadata);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(data_ptr(w), blob.at) << "no blob hook set: not a model's constant";
    EXPECT_EQ(blob.at[middle], blocked[middle]);
    expect_linear_right(w, plain, "outside a window");
    EXPECT_EQ(aoti_torch_delete_tensor_object(w), AOTI_TORCH_SUCCESS);
  }
  {
    Blob blob(blocked, 64);
    ASSERT_NE(blob.base, nullptr);
    aotrun_shim_set_blob_hook([](void*) {}, nullptr);
    AtenTensorHandle w = mkldnn_constant(blob.at, metadata);
    aotrun_shim_set_blob_hook(nullptr, nullptr);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(data_ptr(w), blob.at) << "already 64-byte aligned: read in place";
    EXPECT_EQ(blob.at[middle], blocked[middle]);
    expect_linear_right(w, plain, "aligned in a window");
    EXPECT_EQ(aoti_torch_delete_tensor_object(w), AOTI_TORCH_SUCCESS);
  }
}

// AOTInductor's blob as glibc maps it (16 bytes into its own mapping, so
// every constant in it is 16 bytes off a 64-byte line): a plain constant
// first, which has the rest of the block advised for huge pages
// (huge_pages.hpp), then a blocked weight, which moves out. What is copied
// into the block after it then faults in as 4 KiB pages: it would mostly
// be released again.
TEST(ShimConstantMemory, AfterAMovedConstantTheBlockFillsWithoutHugePages) {
  if (const char* why = glibc_blocks_unavailable()) GTEST_SKIP() << why;
  const std::string mode = thp_mode();
  if (mode.find("[madvise]") == std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are not 'madvise' here ('" << mode << "')";
  }
  const std::vector<float> plain = weight_values(), blocked = layout().pack(plain);
  const std::vector<uint8_t> metadata = layout().metadata();
  const size_t blocked_bytes = blocked.size() * sizeof(float);
  constexpr size_t kBlock = size_t(24) << 20, kFirst = size_t(64) << 10;
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // a block of its own, whatever this process freed before
  char* const blob = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(blob, nullptr);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(blob) % 64, 16u) << "glibc's mapped block header is 16 bytes";
  std::vector<AtenTensorHandle> made;
  int calls = 0;
  aotrun_shim_set_blob_hook([](void* c) { ++*static_cast<int*>(c); }, &calls);
  std::memset(blob, 1, kFirst);
  const int64_t sz[] = {static_cast<int64_t>(kFirst / 4)}, st[] = {1};
  AtenTensorHandle first = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(blob, 1, sz, st, 0, kF32, 0, 0, &first), AOTI_TORCH_SUCCESS);
  made.push_back(first);
  float* const weight = reinterpret_cast<float*>(blob + kFirst);
  std::memcpy(weight, blocked.data(), blocked_bytes);
  AtenTensorHandle w = mkldnn_constant(weight, metadata);
  ASSERT_NE(w, nullptr);
  made.push_back(w);
  EXPECT_NE(data_ptr(w), static_cast<void*>(weight)) << "the blocked weight moved";
  char* const rest = blob + (size_t(8) << 20);  // past the weight, whole 2 MiB pages to the end
  const size_t rest_bytes = kBlock - (size_t(10) << 20);
  std::memset(rest, 2, rest_bytes);  // load_constants copying the constants after it
  EXPECT_EQ(smaps_kb(rest, rest_bytes, "AnonHugePages"), 0)
      << "the block after a moved constant still faulted in huge pages";
  aotrun_shim_set_blob_hook(nullptr, nullptr);
  EXPECT_EQ(calls, 2);
  expect_linear_right(w, plain, "moved out of a mapped block");
  for (AtenTensorHandle h : made) EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
  std::free(blob);
}

// load_constants as a frozen model's blob is filled: constants back to back
// from 16 bytes into glibc's own mapping, a plain one (a bias) before each
// blocked weight. The calls a loader makes: constant by constant, the bytes
// copied in, then the tensor made over them.
struct LoadedBlob {
  static constexpr size_t kBlock = size_t(24) << 20, kFiller = size_t(3) << 20, kBias = 512;
  char* blob = nullptr;
  size_t used = 0;
  std::vector<AtenTensorHandle> made;
  std::vector<float> plain = weight_values(), blocked = layout().pack(plain);
  std::vector<uint8_t> metadata = layout().metadata();

  LoadedBlob() {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);  // a block of its own, whatever this process freed before
    blob = static_cast<char*>(std::malloc(kBlock));
  }
  ~LoadedBlob() {
    for (AtenTensorHandle h : made) EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
    std::free(blob);
  }
  // A plain float constant of `bytes`, its values i * 0.5 + seed.
  std::pair<AtenTensorHandle, char*> plain_constant(size_t bytes, float seed) {
    char* at = blob + used;
    const int64_t n = static_cast<int64_t>(bytes / 4), sz[] = {n}, st[] = {1};
    for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(at)[i] = static_cast<float>(i) * 0.5f + seed;
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(aoti_torch_create_tensor_from_blob(at, 1, sz, st, 0, kF32, 0, 0, &h), AOTI_TORCH_SUCCESS);
    made.push_back(h);
    used += bytes;
    return {h, at};
  }
  std::pair<AtenTensorHandle, char*> weight() {
    char* at = blob + used;
    std::memcpy(at, blocked.data(), blocked.size() * sizeof(float));
    AtenTensorHandle h = mkldnn_constant(reinterpret_cast<float*>(at), metadata);
    made.push_back(h);
    used += blocked.size() * sizeof(float);
    return {h, at};
  }
};

void expect_plain_values(AtenTensorHandle h, size_t bytes, float seed, const char* what) {
  const float* v = static_cast<const float*>(data_ptr(h));
  for (size_t i = 0; i < bytes / 4; ++i) {
    ASSERT_EQ(v[i], static_cast<float>(i) * 0.5f + seed) << what << ": element " << i;
  }
}

// With slides allowed (aotrun_shim_set_constant_slides), once the window
// meets a blocked weight each constant after it moves down 16 bytes in
// place to a 64-byte boundary: the blob is read aligned where it is, and
// only the first weight (after a bias that stayed) is copied out. Every
// constant keeps its values and the weights compute the same linear.
TEST(ShimConstantMemory, WithSlidesAFrozenBlobIsAlignedInPlace) {
  if (const char* why = glibc_blocks_unavailable()) GTEST_SKIP() << why;
  LoadedBlob b;
  ASSERT_NE(b.blob, nullptr);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(b.blob) % 64, 16u) << "glibc's mapped block header is 16 bytes";
  aotrun_shim_set_constant_slides(1);
  aotrun_shim_set_blob_hook([](void*) {}, nullptr);
  // Past the block's first 2 MiB boundary: what follows is in its huge pages.
  auto [filler, filler_at] = b.plain_constant(LoadedBlob::kFiller, 1.0f);
  auto [w1, w1_at] = b.weight();
  auto [b2, b2_at] = b.plain_constant(LoadedBlob::kBias, 2.0f);
  auto [w2, w2_at] = b.weight();
  auto [b3, b3_at] = b.plain_constant(LoadedBlob::kBias, 3.0f);
  auto [w3, w3_at] = b.weight();
  // Memory outside the block (another constant's, or the caller's): never
  // written; a misaligned weight there is copied.
  Blob other(b.blocked, 16);
  ASSERT_NE(other.at, nullptr);
  AtenTensorHandle outside = mkldnn_constant(other.at, b.metadata);
  b.made.push_back(outside);
  // A caller's tensors in a block of their own that glibc mapped too (a
  // replacement constant): left where they are, even where the second
  // could slide over the first's padding.
  char* const caller = static_cast<char*>(std::malloc(size_t(2) << 20));
  ASSERT_NE(caller, nullptr);
  float* const c1 = reinterpret_cast<float*>(caller);
  float* const c2 = reinterpret_cast<float*>(caller + 576);  // 56 bytes after c1's 520
  for (int i = 0; i < 130; ++i) c1[i] = c2[i] = static_cast<float>(i);
  const int64_t csz[] = {130}, cst[] = {1};
  AtenTensorHandle h1 = nullptr, h2 = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(c1, 1, csz, cst, 0, kF32, 0, 0, &h1), AOTI_TORCH_SUCCESS);
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(c2, 1, csz, cst, 0, kF32, 0, 0, &h2), AOTI_TORCH_SUCCESS);
  b.made.push_back(h1);
  b.made.push_back(h2);
  aotrun_shim_set_blob_hook(nullptr, nullptr);
  aotrun_shim_set_constant_slides(0);
  EXPECT_EQ(data_ptr(h1), static_cast<void*>(c1));
  EXPECT_EQ(data_ptr(h2), static_cast<void*>(c2)) << "a caller's memory outside the model's blob was written";
  EXPECT_EQ(c2[129], 129.0f);

  EXPECT_EQ(data_ptr(filler), static_cast<void*>(filler_at)) << "a constant before the first weight stays";
  EXPECT_NE(data_ptr(w1), static_cast<void*>(w1_at)) << "the first weight, after a bias that stayed, is copied";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data_ptr(w1)) % 64, 0u);
  EXPECT_EQ(data_ptr(b2), static_cast<void*>(b2_at - 16)) << "the bias after it slid over the copied weight's bytes";
  EXPECT_EQ(data_ptr(w2), static_cast<void*>(w2_at - 16)) << "the next weight slid to its 64-byte boundary";
  EXPECT_EQ(data_ptr(b3), static_cast<void*>(b3_at - 16));
  EXPECT_EQ(data_ptr(w3), static_cast<void*>(w3_at - 16));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data_ptr(w3)) % 64, 0u);
  expect_plain_values(filler, LoadedBlob::kFiller, 1.0f, "filler");
  expect_plain_values(b2, LoadedBlob::kBias, 2.0f, "bias 2");
  expect_plain_values(b3, LoadedBlob::kBias, 3.0f, "bias 3");
  expect_linear_right(w1, b.plain, "copied weight");
  expect_linear_right(w2, b.plain, "slid weight");
  expect_linear_right(w3, b.plain, "last slid weight");
  EXPECT_NE(data_ptr(outside), static_cast<void*>(other.at));
  EXPECT_NE(data_ptr(outside), static_cast<void*>(reinterpret_cast<char*>(other.at) - 16));
  expect_linear_right(outside, b.plain, "weight outside the block");
  for (AtenTensorHandle h : {h1, h2}) EXPECT_EQ(aoti_torch_delete_tensor_object(h), AOTI_TORCH_SUCCESS);
  b.made.resize(b.made.size() - 2);
  std::free(caller);
}

// Without the caller's permission (the default: a copying constant update
// would write a new value over its slid neighbour) nothing slides: each
// misaligned weight is copied, every plain constant stays.
TEST(ShimConstantMemory, WithoutSlidesEveryFrozenWeightIsCopied) {
  if (const char* why = glibc_blocks_unavailable()) GTEST_SKIP() << why;
  LoadedBlob b;
  ASSERT_NE(b.blob, nullptr);
  aotrun_shim_set_blob_hook([](void*) {}, nullptr);
  (void)b.plain_constant(LoadedBlob::kFiller, 1.0f);
  AtenTensorHandle w1 = b.weight().first;
  auto [b2, b2_at] = b.plain_constant(LoadedBlob::kBias, 2.0f);
  AtenTensorHandle w2 = b.weight().first;
  aotrun_shim_set_blob_hook(nullptr, nullptr);
  EXPECT_EQ(data_ptr(b2), static_cast<void*>(b2_at));
  for (AtenTensorHandle w : {w1, w2}) {
    const auto p = reinterpret_cast<uintptr_t>(data_ptr(w));
    EXPECT_TRUE(p % 64 == 0 && (p < reinterpret_cast<uintptr_t>(b.blob) ||
                                p >= reinterpret_cast<uintptr_t>(b.blob) + LoadedBlob::kBlock))
        << "a weight is copied out of the blob";
  }
  expect_plain_values(b2, LoadedBlob::kBias, 2.0f, "bias 2");
  expect_linear_right(w2, b.plain, "copied weight");
}

}  // namespace
