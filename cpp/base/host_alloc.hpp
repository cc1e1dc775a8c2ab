// The one place aotrun takes raw host memory for buffers: the CPU host alloc
// service, allocations recorded by a capture, graph-mode static buffers. A
// single path, so that sizes are checked once and a test can make any of them
// fail by replacing the global aligned operator new.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aotrun {

// No block is larger than this (no C++ object can be; allocators refuse
// more, and sanitizer allocators abort instead of returning NULL).
constexpr size_t kMaxAllocBytes = static_cast<size_t>(PTRDIFF_MAX);

// At least `bytes` bytes aligned to `align` (a power of two): `bytes` is
// rounded up to a multiple of `align`, and 0 counts as `align` so every call
// returns a distinct block. NULL when the rounding overflows, the rounded
// size exceeds kMaxAllocBytes or memory is exhausted; never throws.
// Implemented with ::operator new(size, std::align_val_t, std::nothrow).
void* aligned_alloc_bytes(size_t bytes, size_t align) noexcept;

// Releases a block of aligned_alloc_bytes made with the same `align`. NULL is
// a no-op.
void aligned_free(void* p, size_t align) noexcept;

}  // namespace aotrun
