// packed_memory.hpp: a bump allocator over 2 MiB-aligned mappings, each
// unmapped when the last copy carved from it is freed.
#include "compute/packed_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

namespace aotrun::shim::kernels {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kMapping = size_t(8) << 20;
constexpr size_t kAlign = 64;

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

struct Mapping {
  char* base = nullptr;
  size_t size = 0;
  size_t used = 0;  // bytes carved from base (a multiple of kAlign)
  size_t live = 0;  // copies carved and not yet freed
};

// The mapping new copies are carved from; guarded by mu. Never destroyed:
// copies may be freed from static destructors at exit.
struct Arena {
  std::mutex mu;
  Mapping* current = nullptr;
};
Arena& arena() {
  static Arena* const a = new Arena;
  return *a;
}

// A 2 MiB-aligned mapping of `bytes` (a multiple of 2 MiB): a larger one
// is made and its ends trimmed, since mmap aligns only to pages.
Mapping* map_aligned(size_t bytes) {
  void* raw = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  char* const start = static_cast<char*>(raw);
  char* const base = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(start), kHugePage));
  if (base > start) (void)munmap(start, static_cast<size_t>(base - start));
  char* const tail = base + bytes;
  if (start + bytes + kHugePage > tail) (void)munmap(tail, static_cast<size_t>(start + bytes + kHugePage - tail));
  // A hint: refused where transparent huge pages are off, and then the
  // mapping is ordinary memory.
  (void)madvise(base, bytes, MADV_HUGEPAGE);
  auto* m = new (std::nothrow) Mapping{base, bytes, 0, 0};
  if (m == nullptr) {
    (void)munmap(base, bytes);
    throw std::bad_alloc();
  }
  return m;
}

void unmap(Mapping* m) noexcept {
  (void)munmap(m->base, m->size);
  delete m;
}

void release(Mapping* m) noexcept {
  Arena& a = arena();
  std::lock_guard<std::mutex> lock(a.mu);
  if (--m->live != 0) return;
  if (a.current == m) a.current = nullptr;
  unmap(m);
}

}  // namespace

std::shared_ptr<float> packed_floats(int64_t floats) {
  if (floats > static_cast<int64_t>(SIZE_MAX / 2 / sizeof(float))) throw std::bad_alloc();  // no size wraps round
  const size_t bytes = round_up(static_cast<size_t>(std::max<int64_t>(floats, 1)) * sizeof(float), kAlign);
  if (bytes < kPackedArenaMin) {
    auto* p = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
    if (p == nullptr) throw std::bad_alloc();
    return std::shared_ptr<float>(p, [](float* f) { std::free(f); });
  }
  Arena& a = arena();
  Mapping* m = nullptr;
  char* at = nullptr;
  {
    std::lock_guard<std::mutex> lock(a.mu);
    if (a.current == nullptr || a.current->size - a.current->used < bytes) {
      // The old mapping (it holds copies: one with none is unmapped at
      // once) keeps its unused tail, never touched and so not resident,
      // until its last copy goes.
      a.current = map_aligned(std::max(kMapping, round_up(bytes, kHugePage)));
    }
    m = a.current;
    at = m->base + m->used;
    m->used += bytes;
    ++m->live;
  }
  // Should the control block's allocation throw, shared_ptr runs the
  // deleter first: the copy is released either way.
  return std::shared_ptr<float>(reinterpret_cast<float*>(at), [m](float*) { release(m); });
}

}  // namespace aotrun::shim::kernels
