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
// throw.
void release_moved_constant(const void* p, size_t nbytes) noexcept;

// Closes this thread's window: when the constants noted form one block
// (their span at most twice their bytes, so nothing else of size lies
// between them) of at least 4 MiB and none was moved out of it, asks for
// huge pages over its whole 2 MiB pages. Then forgets them. Failures are
// ignored (a hint only).
void close_constant_window() noexcept;

}  // namespace aotrun::shim
