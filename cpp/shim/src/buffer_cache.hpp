// The memory of CPU tensors the shim allocates (aoti_torch_empty_strided's
// and the kernels' outputs), kept by the thread that frees it for the
// next allocation of the same size.
//
// Why: AOTInductor's generated code allocates every intermediate buffer of
// a call anew and frees it before the call returns, the same sizes in the
// same order call after call. Through glibc each such buffer above its
// per-thread cache's 1 KiB took malloc's slow path and its free
// consolidated the fast bins: glibc's allocator had 7.4% of frozen BERT's
// samples, 4.6% in those slow paths, and 2-3% of frozen MobileNetV3's and
// GPT-2's, on a Zen 5 core (docs/PERFORMANCE.md section 34). Kept here, a
// call's buffers are the previous call's.
//
// A block is kept under its size rounded up to 64 bytes, found again only
// by that exact size: a model of fixed shapes hits every time, and one
// whose shapes change (tokens) misses and pushes the oldest blocks out. At
// most kCacheBlocks blocks and kCacheBytes bytes per thread, and only
// blocks of up to kCacheBlockBytes: a convolution net's larger activations
// stay with glibc, which carves each from memory the last one freed
// whatever its size, where blocks kept by exact size spread a call over
// more memory (frozen MobileNetV3, batch 3: 15% slower and 5.6 MB more
// RSS with every block kept; as fast as before with blocks up to 256 KiB).
// A thread's blocks are freed when it exits.
//
// Off (every block straight to and from the C library) under AddressSanitizer,
// whose use-after-free checks a reused block would hide, and when the
// environment sets AOTRUN_SHIM_BUFFER_CACHE=0.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aotrun::shim {

constexpr size_t kCacheBlocks = 64;
constexpr size_t kCacheBytes = size_t{16} << 20;
constexpr size_t kCacheBlockBytes = size_t{256} << 10;

// Blocks of freed memory, each with the size it was allocated for: one
// thread's cache. Not thread-safe: one object per thread.
class BufferCache {
 public:
  BufferCache() = default;
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;
  // Frees every block kept.
  ~BufferCache() { clear(); }

  // A kept block of exactly `rounded` bytes (removed from the cache), or
  // null.
  void* take(size_t rounded);
  // Keeps `block` (allocated for `rounded` bytes by allocate_block) for a
  // later take(); pushes out the oldest blocks to make room, or frees
  // `block` itself when it is larger than kCacheBlockBytes.
  void give(void* block, size_t rounded);
  // Frees every block kept.
  void clear();

 private:
  void drop_oldest();
  // Oldest first.
  size_t sizes_[kCacheBlocks] = {};
  void* blocks_[kCacheBlocks] = {};
  size_t count_ = 0;
  size_t bytes_ = 0;
};

// Whether freed memory and handles are kept for reuse (this cache and
// handle_pool.hpp): not under AddressSanitizer, nor with
// AOTRUN_SHIM_BUFFER_CACHE=0 in the environment (read once).
bool reuse_enabled();

// `nbytes` rounded up to the 64 bytes a block is allocated and kept by.
inline size_t rounded_block_bytes(size_t nbytes) { return (nbytes + 63) / 64 * 64; }

// Memory for `nbytes` (> 0) bytes, 64-byte aligned, its contents
// unspecified: a block this thread kept, or a new one. Null when memory runs
// out.
void* allocate_block(size_t nbytes);
// Gives back memory from allocate_block(nbytes), from any thread: kept by
// this one, or freed. Null is ignored.
void release_block(void* block, size_t nbytes);

}  // namespace aotrun::shim
