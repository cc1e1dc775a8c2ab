// huge_pages.hpp: a thread's window of constants, then two madvise calls.
#include "huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older kernels answer EINVAL
#endif

namespace aotrun::shim {
namespace {

constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
constexpr uintptr_t kMinSpan = uintptr_t(4) << 20;

struct Window {
  uintptr_t begin = UINTPTR_MAX, end = 0;
  uintptr_t bytes = 0;
};
thread_local Window t_window;

}  // namespace

void note_constant_span(const void* p, size_t nbytes) noexcept {
  const auto at = reinterpret_cast<uintptr_t>(p);
  if (at == 0 || nbytes == 0) return;
  Window& w = t_window;
  w.begin = std::min(w.begin, at);
  w.end = std::max(w.end, at + nbytes);
  w.bytes += nbytes;
}

void close_constant_window() noexcept {
  const Window w = t_window;
  t_window = Window{};
  if (w.end <= w.begin || w.end - w.begin < kMinSpan || w.end - w.begin > 2 * w.bytes) return;
  const uintptr_t begin = (w.begin + kHugePage - 1) / kHugePage * kHugePage, end = w.end / kHugePage * kHugePage;
  if (end <= begin) return;
  void* start = reinterpret_cast<void*>(begin);
  // HUGEPAGE keeps them eligible (khugepaged, later faults); COLLAPSE
  // makes them huge now, since the constants are all written already.
  (void)madvise(start, end - begin, MADV_HUGEPAGE);
  (void)madvise(start, end - begin, MADV_COLLAPSE);
}

}  // namespace aotrun::shim
