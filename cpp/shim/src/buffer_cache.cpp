#include "buffer_cache.hpp"

#include <cstdlib>
#include <cstring>

#include "thread_object.hpp"

namespace aotrun::shim {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

bool reuse_enabled() {
  static const bool on = [] {
    if (kSanitized) return false;
    const char* env = std::getenv("AOTRUN_SHIM_BUFFER_CACHE");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return on;
}

void* BufferCache::take(size_t rounded) {
  // Newest first: the block freed last is the likeliest in cache.
  for (size_t i = count_; i-- > 0;) {
    if (sizes_[i] != rounded) continue;
    void* block = blocks_[i];
    std::memmove(sizes_ + i, sizes_ + i + 1, (count_ - i - 1) * sizeof(sizes_[0]));
    std::memmove(blocks_ + i, blocks_ + i + 1, (count_ - i - 1) * sizeof(blocks_[0]));
    --count_;
    bytes_ -= rounded;
    return block;
  }
  return nullptr;
}

void BufferCache::give(void* block, size_t rounded) {
  if (block == nullptr) return;
  if (rounded > kCacheBlockBytes) {
    std::free(block);
    return;
  }
  while (count_ > 0 && (count_ == kCacheBlocks || bytes_ + rounded > kCacheBytes)) drop_oldest();
  sizes_[count_] = rounded;
  blocks_[count_] = block;
  ++count_;
  bytes_ += rounded;
}

void BufferCache::drop_oldest() {
  std::free(blocks_[0]);
  bytes_ -= sizes_[0];
  --count_;
  std::memmove(sizes_, sizes_ + 1, count_ * sizeof(sizes_[0]));
  std::memmove(blocks_, blocks_ + 1, count_ * sizeof(blocks_[0]));
}

void BufferCache::clear() {
  while (count_ > 0) drop_oldest();
}

void* allocate_block(size_t nbytes) {
  const size_t rounded = rounded_block_bytes(nbytes);
  if (rounded < nbytes) return nullptr;  // wrapped around
  if (reuse_enabled()) {
    if (BufferCache* cache = thread_object<BufferCache>()) {
      if (void* block = cache->take(rounded)) return block;
    }
  }
  return std::aligned_alloc(64, rounded);
}

void release_block(void* block, size_t nbytes) {
  if (block == nullptr) return;
  if (reuse_enabled()) {
    if (BufferCache* cache = thread_object<BufferCache>()) {
      cache->give(block, rounded_block_bytes(nbytes));
      return;
    }
  }
  std::free(block);
}

}  // namespace aotrun::shim
