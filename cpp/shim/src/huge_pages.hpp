// Transparent huge pages for a model's constants (issue #41). A frozen
// weight read in place (panels_over) stays in the memory AOTInductor's
// load_constants copied it into: one malloc'd blob per model, faulted in
// 4 KiB page by page. A call streams every weight once, so at ordinary
// sizes (tens of MB) each page costs a TLB miss per call, and under a
// hypervisor a miss walks two page tables.
//
// While a blob hook is set (aotrun_shim_set_blob_hook: a loader's window
// around the container's creation, in which every blob tensor is a
// constant), the shim notes the span the constants cover. When the window
// closes, that span's whole 2 MiB pages are asked to become huge pages
// (madvise MADV_HUGEPAGE, then MADV_COLLAPSE, which copies them into huge
// pages at once: about 1 ms per 5 MB). A kernel or host without
// transparent huge pages refuses, and nothing changes.
//
// Sooner where it can: load_constants copies the constants into the blob
// one after another, each wrapped right after its copy, so when the first
// is the start of a block glibc's malloc mapped on its own (the blob), the
// rest of that block is advised at once and faults in as huge pages as it
// is written: a 4 KiB fault each cost ResNet-18's open about 40 ms on an
// Intel host under KVM.
#pragma once

#include <cstddef>

namespace aotrun::shim {

// Whether this thread's windows may slide constants in place
// (aotrun_shim_set_constant_slides; off until set).
void set_slides_allowed(bool allowed) noexcept;

// Where the constant of `nbytes` at `p`, about to be made on this thread in
// the current window, is to live: `p`, or `p` slid down in place to the
// 64-byte boundary below it. AOTInductor's blob is glibc's, 16 bytes into
// its own mapping, so each of its constants starts 16 bytes past a cache
// line; a frozen weight read there straddles two lines in every load
// (mkldnn_blob.hpp), and a copy elsewhere costs open a second set of pages
// (the copy, and the original faulted in 4 KiB pages to be released:
// frozen ResNet-18's metadata container 13 ms slid in place against 43
// copied, medians of 8 opens right after an ORT session on a Zen 5 VM).
// A constant slides when slides are allowed, it lies in the block glibc
// mapped for the blob (one of at least 256 KiB, found as
// note_constant_span finds it, below) once the window has met a frozen
// (`frozen`: mkldnn-layout) constant, and the constant made just before it
// is its neighbour below in the block (ending less than 64 bytes below
// `p`, so that nothing else lies between) whose bytes no longer reach the
// boundary: it slid too, or was copied out. So a frozen model's blob moves
// down 16 bytes constant by constant as load_constants fills it, in order
// (the constants before its first frozen one, and that one, stay or are
// copied; so is a frozen one not wholly inside the whole 2 MiB pages of a
// block advised for huge pages, which a call would read in 4 KiB pages
// there). The bytes move with memmove; nothing else is touched. Does not
// throw.
void* slide_constant(void* p, size_t nbytes, bool frozen) noexcept;
// Whether slide_constant slid the window's last constant from `p` to `now`.
bool slid_from(const void* p, const void* now) noexcept;

// Notes a constant of `nbytes` at `p` made on this thread in the current
// window; the first of a mapped block also has the block advised (above:
// one read of /proc/self/maps). Does not throw.
void note_constant_span(const void* p, size_t nbytes) noexcept;

// A constant of `nbytes` at `p` made on this thread in the current window
// whose bytes the shim copied elsewhere (mkldnn_blob.hpp: a misaligned
// frozen weight): the whole 4 KiB pages inside [p, p + nbytes) go back to
// the system (MADV_DONTNEED; they read as zeros if anything looked, which
// nothing does), so the copy does not double the model's memory. The window
// then asks for no huge pages at its close (collapsing its span would fault
// those pages in again); the copies are in huge pages of their own
// (packed_memory.hpp). The first such constant in a block advised ahead
// (note_constant_span) has the block's 2 MiB pages after it advised back
// (MADV_NOHUGEPAGE): what load_constants copies there next is mostly more
// of them, and huge pages zeroed for bytes about to be released cost open
// twice the huge pages (frozen ResNet-18: 92 faulted, 48 after). Does not
// throw. In a window whose constants slide (slide_constant), the original
// stays instead (the block keeps its huge pages) and its bytes are free for
// the next constant to slide over.
void release_moved_constant(const void* p, size_t nbytes) noexcept;

// Whether a window's constants get their huge pages while the model loads
// (above), or later, from khugepaged in the background: its span is only
// advised (MADV_HUGEPAGE) at the window's close, and load_constants fills
// the blob 4 KiB at a time. Later on a host that takes free memory back (a
// virtio balloon with free page reporting: a huge page can only come from
// a free 2 MiB block, which such a host has taken, and faults in again
// there: frozen ResNet-18's open 146 against 52 ms later, 2.5 s after the
// last process, on a Zen 5 VM, its calls the same: docs/PERFORMANCE.md
// section 37); now elsewhere (a 4 KiB fault each cost ResNet-18's open
// about 40 ms on an Intel host under KVM). AOTRUN_SHIM_CONSTANT_HUGE_PAGES
// = now | later chooses; read once.
bool constant_huge_pages_now() noexcept;

// Closes this thread's window: when the constants noted form one block
// (their span at most twice their bytes, so nothing else of size lies
// between them) of at least 4 MiB and none was moved out of it, asks for
// huge pages over its whole 2 MiB pages. Then forgets them. Failures are
// ignored (a hint only).
void close_constant_window() noexcept;

}  // namespace aotrun::shim
