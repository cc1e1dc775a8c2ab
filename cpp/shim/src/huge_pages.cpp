// huge_pages.hpp: a thread's window of constants, then two madvise calls.
#include "huge_pages.hpp"

#include <dirent.h>
#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older kernels answer EINVAL
#endif

namespace aotrun::shim {
namespace {

constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
constexpr uintptr_t kMinSpan = uintptr_t(4) << 20;
// The smallest block whose constants may slide (slide_constant); glibc maps
// blocks from 128 KiB on, unless its threshold has grown.
constexpr uintptr_t kMinBlock = uintptr_t(256) << 10;

// Reads the first line of the file at `path` into `out` (`n` bytes), without
// its newline; "" when unreadable. No allocation: callers are noexcept.
void first_line(const char* path, char* out, size_t n) noexcept {
  out[0] = '\0';
  if (FILE* f = std::fopen(path, "re")) {
    if (std::fgets(out, static_cast<int>(n), f) == nullptr) out[0] = '\0';
    std::fclose(f);
  }
  out[std::strcspn(out, "\r\n")] = '\0';
}

// Whether a hypervisor takes this machine's free memory back: a virtio
// balloon (device id 5) that negotiated free page reporting
// (VIRTIO_BALLOON_F_REPORTING, feature bit 5; sysfs lists the bits as 0s
// and 1s, bit 0 first).
bool host_takes_free_pages() noexcept {
  DIR* d = ::opendir("/sys/bus/virtio/devices");
  if (d == nullptr) return false;
  bool found = false;
  while (!found) {
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    if (e->d_name[0] == '.') continue;
    char path[512], device[32], features[160];
    std::snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/device", e->d_name);
    first_line(path, device, sizeof device);
    std::snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/features", e->d_name);
    first_line(path, features, sizeof features);
    found = std::strcmp(device, "0x0005") == 0 && std::strlen(features) > 5 && features[5] == '1';
  }
  ::closedir(d);
  return found;
}

}  // namespace

bool constant_huge_pages_now() noexcept {
  static const bool now = [] {
    const char* env = std::getenv("AOTRUN_SHIM_CONSTANT_HUGE_PAGES");
    if (env != nullptr && std::strcmp(env, "now") == 0) return true;
    if (env != nullptr && std::strcmp(env, "later") == 0) return false;
    return !host_takes_free_pages();
  }();
  return now;
}

namespace {

uintptr_t round_up_huge(uintptr_t v) { return (v + kHugePage - 1) / kHugePage * kHugePage; }
uintptr_t round_down_huge(uintptr_t v) { return v / kHugePage * kHugePage; }

struct Window {
  uintptr_t begin = UINTPTR_MAX, end = 0;
  uintptr_t bytes = 0;
  // The block glibc mapped for the constants (below), and whether it was
  // advised for huge pages ahead of its copies (one of kMinSpan or more).
  uintptr_t ahead_begin = 0, ahead_end = 0;
  bool ahead_huge = false;
  bool moved = false;  // a constant's pages were released (release_moved_constant)
  // Slides (slide_constant): on once a frozen constant is met in a block
  // found ahead, with this thread's permission, and only in that block
  // ([slide_begin, slide_end), advised for huge pages when slide_huge):
  // memory found later (a caller's tensor made in the window, in a block
  // of its own) is never written.
  bool sliding = false;
  uintptr_t slide_begin = 0, slide_end = 0;
  bool slide_huge = false;
  // The sliding block's whole 2 MiB pages: none (an empty range at the
  // top of memory) when it was not advised for huge pages.
  uintptr_t huge_begin() const { return slide_huge ? round_up_huge(slide_begin) : UINTPTR_MAX; }
  uintptr_t huge_end() const { return slide_huge ? round_down_huge(slide_end) : UINTPTR_MAX; }
  // The constant made last in the window: where load_constants put it
  // ([orig, orig_end)), and where its live bytes end now (orig_end when it
  // stayed, its slid end, orig when a copy holds it); `slid_to` when it slid.
  uintptr_t orig = 0, orig_end = 0, live_end = 0, slid_to = 0;
};
thread_local Window t_window;
thread_local bool t_slides_allowed = false;

// Whether an anonymous mapping (/proc/self/maps) begins 16 bytes before
// `at`, and its end.
bool anonymous_mapping_at(uintptr_t at, uintptr_t* end) noexcept {
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (f == nullptr) return false;
  char line[256];
  bool found = false, line_start = true;
  while (!found && std::fgets(line, sizeof line, f) != nullptr) {
    const bool starts = line_start;
    line_start = std::strchr(line, '\n') != nullptr;  // a long path continues in the next read
    uintptr_t a = 0, b = 0;
    unsigned long inode = 1;
    int path_at = 0;
    if (!starts || std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %lu %n", &a, &b, &inode, &path_at) < 3) {
      continue;
    }
    // Anonymous: no inode and no name ("[heap]" and "[stack]" have names).
    found = inode == 0 && (line[path_at] == '\0' || line[path_at] == '\n') && a + 16 == at;
    if (found) *end = b;
  }
  std::fclose(f);
  return found;
}

// [at, *end) when `at` is a block of at least kMinBlock that glibc's malloc
// mapped on its own, as it does AOTInductor's blob of constants: the
// mapping begins 16 bytes before it, and the word before it (the chunk's
// size field) holds the mapping's length with only the IS_MMAPPED bit (2)
// set. The kernel may have merged the mapping with its neighbours, so the
// length comes from that word, checked against the mapping's extent.
// Another allocator's block fails a check, and is then left to the
// window's close.
// The word is read in place, not through memcpy: under a sanitizer the
// bytes before a block are its allocator's (poisoned) header, and the
// read, on the page of `at` itself, cannot fault.
__attribute__((no_sanitize("address", "thread"))) bool mapped_block_at(uintptr_t at, uintptr_t* end) noexcept {
  if ((at & 4095) != 16) return false;  // spares the read of maps for every other constant
  uintptr_t vma_end = 0;
  if (!anonymous_mapping_at(at, &vma_end)) return false;
  const uint64_t word = *reinterpret_cast<const volatile uint64_t*>(at - 8);
  const uint64_t length = word & ~uint64_t(7);
  if ((word & 7) != 2 || length % 4096 != 0 || length < kMinBlock || at - 16 + length > vma_end) return false;
  *end = at - 16 + length;
  return true;
}

// A constant at `at` that opens a block of its own (the first of a model's
// blob): the block is noted, and when it is at least kMinSpan its
// remaining whole 2 MiB pages are advised now, before
// load_constants copies the rest into them, so they fault in as huge pages
// rather than 4 KiB at a time (page faults dominated a ResNet-18's open on
// an Intel host under KVM: docs/PERFORMANCE.md section 29).
void advise_ahead(Window& w, uintptr_t at) noexcept {
  if (at >= w.ahead_begin && at < w.ahead_end) return;
  uintptr_t end = 0;
  if (!mapped_block_at(at, &end)) return;
  w.ahead_begin = at;
  w.ahead_end = end;
  w.ahead_huge = end - at >= kMinSpan && constant_huge_pages_now();
  if (!w.ahead_huge) return;
  const uintptr_t from = round_up_huge(at), to = round_down_huge(end);
  if (to > from) (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
}

}  // namespace

void set_slides_allowed(bool allowed) noexcept { t_slides_allowed = allowed; }

void* slide_constant(void* p, size_t nbytes, bool frozen) noexcept {
  const auto at = reinterpret_cast<uintptr_t>(p);
  if (at == 0 || nbytes == 0) return p;
  Window& w = t_window;
  advise_ahead(w, at);
  if (!w.sliding && frozen && t_slides_allowed && !w.moved && at >= w.ahead_begin && at + nbytes <= w.ahead_end) {
    w.sliding = true;
    w.slide_begin = w.ahead_begin;
    w.slide_end = w.ahead_end;
    w.slide_huge = w.ahead_huge;
  }
  const bool in_block = w.sliding && at >= w.slide_begin && at + nbytes <= w.slide_end;
  const uintptr_t delta = at % 64, to = at - delta;
  // The bytes [to, at) are free when the constant made before this one is
  // the one just below it in the block (ending less than 64 bytes below,
  // so no other constant fits between: each starts at the blob's 16 mod
  // 64) and its live bytes end at or below `to`.
  const bool room =
      w.orig_end != 0 && w.orig >= w.slide_begin && w.orig_end <= at && at - w.orig_end < 64 && w.live_end <= to;
  // A frozen constant not wholly inside the block's whole 2 MiB pages
  // (its head and tail stay 4 KiB pages) is copied instead, into huge pages
  // of the shim's: a weight is read on every call.
  const bool huge_here = !w.slide_huge || (at >= w.huge_begin() && at + nbytes <= w.huge_end());
  const bool slide = in_block && delta != 0 && room && (!frozen || huge_here);
  w.orig = at;
  w.orig_end = at + nbytes;
  w.live_end = at + nbytes;
  w.slid_to = 0;
  if (!slide) return p;
  std::memmove(reinterpret_cast<void*>(to), p, nbytes);
  w.live_end = to + nbytes;
  w.slid_to = to;
  return reinterpret_cast<void*>(to);
}

bool slid_from(const void* p, const void* now) noexcept {
  const Window& w = t_window;
  return w.orig == reinterpret_cast<uintptr_t>(p) && w.slid_to != 0 && w.slid_to == reinterpret_cast<uintptr_t>(now);
}

void note_constant_span(const void* p, size_t nbytes) noexcept {
  const auto at = reinterpret_cast<uintptr_t>(p);
  if (at == 0 || nbytes == 0) return;
  Window& w = t_window;
  advise_ahead(w, at);
  w.begin = std::min(w.begin, at);
  w.end = std::max(w.end, at + nbytes);
  w.bytes += nbytes;
}

void release_moved_constant(const void* p, size_t nbytes) noexcept {
  const auto at = reinterpret_cast<uintptr_t>(p);
  Window& w = t_window;
  if (w.orig == at) w.live_end = at;  // its bytes are free: the next constant may slide over them
  if (w.sliding) {
    // The block's constants stay where they are, slid, in huge pages. The
    // few copied out (the first frozen one, after a plain constant that
    // stayed; those in the block's 4 KiB head and tail) give back only the
    // whole pages they have outside its huge pages: releasing part of a
    // huge page would split it.
    const uintptr_t first = (at + 4095) / 4096 * 4096, last = (at + nbytes) / 4096 * 4096;
    const uintptr_t below = std::min(last, w.huge_begin()), above = std::max(first, w.huge_end());
    if (below > first) (void)madvise(reinterpret_cast<void*>(first), below - first, MADV_DONTNEED);
    if (last > above) (void)madvise(reinterpret_cast<void*>(above), last - above, MADV_DONTNEED);
    return;
  }
  const uintptr_t begin = (at + 4095) / 4096 * 4096, end = (at + nbytes) / 4096 * 4096;
  if (!w.moved && w.ahead_huge && at >= w.ahead_begin && at < w.ahead_end) {
    // The block was advised ahead of its copies; what load_constants has
    // still to copy into it is mostly more of these, moved out and
    // released as they come: huge pages faulted in for them would be
    // zeroed for nothing, so the rest of the block goes back to 4 KiB.
    const uintptr_t from = round_up_huge(at + nbytes);
    if (w.ahead_end > from) (void)madvise(reinterpret_cast<void*>(from), w.ahead_end - from, MADV_NOHUGEPAGE);
  }
  w.moved = true;
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void close_constant_window() noexcept {
  const Window w = t_window;
  t_window = Window{};
  if (w.moved) return;
  if (w.end <= w.begin || w.end - w.begin < kMinSpan || w.end - w.begin > 2 * w.bytes) return;
  const uintptr_t begin = round_up_huge(w.begin), end = round_down_huge(w.end);
  if (end <= begin) return;
  void* start = reinterpret_cast<void*>(begin);
  // HUGEPAGE keeps them eligible (khugepaged, later faults); COLLAPSE
  // makes them huge now, since the constants are all written already.
  // Later instead, on a host that takes free memory back: khugepaged
  // collapses them in the background (constant_huge_pages_now).
  (void)madvise(start, end - begin, MADV_HUGEPAGE);
  if (constant_huge_pages_now()) (void)madvise(start, end - begin, MADV_COLLAPSE);
}

}  // namespace aotrun::shim
