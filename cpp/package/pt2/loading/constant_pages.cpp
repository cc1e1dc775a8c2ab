// AotiLibrary::find_constant_pages and release_constant_pages, and
// ConstantPagesScope (aoti_library.hpp).
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "package/pt2/loading/aoti_library.hpp"

namespace aotrun::pt2 {
namespace {

struct Lookup {
  uintptr_t begin, end;
  bool found = false;
  bool read_only = false;
};

// Finds the loaded segment holding [begin, end) and whether it is
// read-only and backed by the file over that whole range (no .bss part).
int find_segment(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<Lookup*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (q->begin < lo || q->end > lo + ph.p_memsz) continue;
    q->found = true;
    q->read_only = (ph.p_flags & PF_W) == 0 && q->end <= lo + ph.p_filesz;
    return 1;
  }
  return 0;
}

}  // namespace

void AotiLibrary::find_constant_pages() {
  if (constants_start_ == nullptr || constants_end_ <= constants_start_) return;
  Lookup q{reinterpret_cast<uintptr_t>(constants_start_), reinterpret_cast<uintptr_t>(constants_end_)};
  dl_iterate_phdr(&find_segment, &q);
  if (!q.found || !q.read_only) return;
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const uintptr_t page = static_cast<uintptr_t>(page_size);
  const uintptr_t begin = (q.begin + page - 1) / page * page, end = q.end / page * page;  // whole pages inside
  if (end <= begin) return;
  pages_begin_ = begin;
  pages_end_ = end;
}

void AotiLibrary::release_constant_pages() const {
  if (pages_end_ > pages_begin_) {
    (void)madvise(reinterpret_cast<void*>(pages_begin_), pages_end_ - pages_begin_, MADV_DONTNEED);
  }
}

ConstantPagesScope::ConstantPagesScope(const TorchShim& shim, const AotiLibrary& lib, bool slides) {
  if (shim.set_blob_hook == nullptr || !lib.has_constant_pages()) return;
  if (slides && shim.set_constant_slides != nullptr) {
    slides_ = shim.set_constant_slides;
    slides_(1);
  }
  set_ = shim.set_blob_hook;
  set_([](void* l) { static_cast<const AotiLibrary*>(l)->release_constant_pages(); },
       const_cast<void*>(static_cast<const void*>(&lib)));
}

ConstantPagesScope::~ConstantPagesScope() {
  if (set_ != nullptr) set_(nullptr, nullptr);
  if (slides_ != nullptr) slides_(0);
}

}  // namespace aotrun::pt2
