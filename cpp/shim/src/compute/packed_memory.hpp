// Memory for packed copies of constant weights (issue #41): panel_gemm's
// panels and oneDNN's packed GEMM operands, made once per weight and then
// read whole by every call. At ordinary sizes (tens of MB) each 4 KiB page
// of them costs a TLB miss per call, two page-table walks under a
// hypervisor; huge_pages.hpp gives the constants AOTInductor loads huge
// pages, and this does the same for what the shim packs from them.
//
// Copies of at least kPackedArenaMin bytes are carved, one after another,
// from 2 MiB-aligned anonymous mappings of at least 8 MiB marked
// MADV_HUGEPAGE: a kernel with transparent huge pages ("always" or
// "madvise") backs them with 2 MiB pages as they are first written. Only
// what is written is resident (at most one partly used 2 MiB page per
// mapping more than the copies themselves). A mapping is returned to the
// system when the last copy in it is freed (a constant set swapped out, a
// model unloaded). Smaller copies come from the heap. Any thread may
// allocate and free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace aotrun::shim::kernels {

// Below this a copy comes from the heap: it cannot fill a 2 MiB page.
constexpr size_t kPackedArenaMin = size_t(256) << 10;

// Room for `floats` floats (at least one), 64-byte aligned, their values
// unspecified; freed when the last copy of the result goes. Throws
// std::bad_alloc when memory runs out.
std::shared_ptr<float> packed_floats(int64_t floats);

}  // namespace aotrun::shim::kernels
