#include "package/pt2/loading/pin_dependencies.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>

namespace aotrun::pt2 {

void pin_dependencies(void* handle) noexcept {
  link_map* lm = nullptr;
  if (handle == nullptr || ::dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == nullptr || lm->l_ld == nullptr) return;
  // The names are offsets into the string table. glibc rebases DT_STRTAB in
  // the loaded dynamic section where that section is writable (x86-64,
  // aarch64) and leaves it an unrelocated address elsewhere: an address
  // below the load base is unrelocated.
  uintptr_t strtab = 0;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) strtab = static_cast<uintptr_t>(d->d_un.d_ptr);
  }
  if (strtab == 0) return;
  if (strtab < lm->l_addr) strtab += lm->l_addr;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    const char* name = reinterpret_cast<const char*>(strtab + d->d_un.d_val);
    // RTLD_NOLOAD: only the copy already loaded (matched by the name the
    // model used); RTLD_NODELETE sticks to it, so the dlclose that drops
    // this extra reference unloads nothing.
    if (void* dep = ::dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) ::dlclose(dep);
  }
}

}  // namespace aotrun::pt2
