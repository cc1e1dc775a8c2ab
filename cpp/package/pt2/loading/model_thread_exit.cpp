#include "package/pt2/loading/model_thread_exit.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

extern "C" int __cxa_thread_atexit_impl(void (*func)(void*), void* obj, void* dso_symbol);  // glibc 2.18+
extern "C" void* __dso_handle;  // this library's (crtbegin): never unloaded

namespace aotrun::pt2 {
namespace {

using Dtor = void (*)(void*);

// Loaded models by link map, with their owners. Leaked on purpose: threads
// may exit after static destructors ran.
struct Owners {
  std::mutex mu;
  std::vector<std::pair<const link_map*, std::weak_ptr<const void>>> all;
};
Owners& owners() {
  static Owners* o = new Owners;
  return *o;
}

std::weak_ptr<const void> owner_of(const void* dso) {
  Dl_info info{};
  link_map* lm = nullptr;
  if (::dladdr1(dso, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || lm == nullptr) return {};
  Owners& o = owners();
  std::lock_guard<std::mutex> lock(o.mu);
  for (const auto& [map, owner] : o.all) {
    if (map == lm && !owner.expired()) return owner;  // a reused link map has a fresh entry
  }
  return {};
}

struct Pending {
  Dtor func;
  void* obj;
  std::weak_ptr<const void> owner;
};

void run_pending(void* p) {
  Pending* rec = static_cast<Pending*>(p);
  // Loaded now, so never unloaded since the registration: the object in
  // this thread's TLS block and the destructor's code are both intact, and
  // `keep` holds them so for the call.
  if (std::shared_ptr<const void> keep = rec->owner.lock()) rec->func(rec->obj);
  delete rec;
}

int registrar(Dtor func, void* obj, void* dso) {
  std::weak_ptr<const void> owner = owner_of(dso);
  Pending* rec = owner.expired() ? nullptr : new (std::nothrow) Pending{func, obj, std::move(owner)};
  if (rec == nullptr) return __cxa_thread_atexit_impl(func, obj, dso);  // undeclared: glibc pins the model
  return __cxa_thread_atexit_impl(&run_pending, rec, &__dso_handle);
}

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#else
constexpr uint32_t kJumpSlot = 0, kGlobDat = 0;
#endif

struct RelroRange {
  uintptr_t base = 0, start = 0, end = 0;
};

int find_relro(dl_phdr_info* info, size_t, void* p) {
  auto* r = static_cast<RelroRange*>(p);
  if (info->dlpi_addr != r->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
      r->start = r->base + info->dlpi_phdr[i].p_vaddr;
      r->end = r->start + info->dlpi_phdr[i].p_memsz;
    }
  }
  return 1;
}

// Writes `value` into the slot at `addr`, which the loader made read-only
// where it lies in RELRO (and leaves it so).
bool write_slot(uintptr_t addr, uintptr_t value, const RelroRange& relro) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(addr & ~(page - 1));
  const bool in_relro = addr >= relro.start && addr < relro.end;
  if (in_relro && ::mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return false;
  std::memcpy(reinterpret_cast<void*>(addr), &value, sizeof value);
  if (in_relro) (void)::mprotect(start, page, PROT_READ);
  return true;
}

}  // namespace

bool redirect_thread_exit(void* handle) noexcept {
  if (kJumpSlot == 0) return false;
  link_map* lm = nullptr;
  if (handle == nullptr || ::dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == nullptr || lm->l_ld == nullptr)
    return false;
  // Addresses in the loaded dynamic section: rebased by glibc where the
  // section is writable, file addresses elsewhere (below the load base).
  auto at = [&](uintptr_t a) { return a < lm->l_addr ? a + lm->l_addr : a; };
  uintptr_t symtab = 0, strtab = 0, jmprel = 0, rela = 0;
  size_t jmprel_size = 0, rela_size = 0;
  bool rela_plt = true;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = at(d->d_un.d_ptr); break;
      case DT_STRTAB: strtab = at(d->d_un.d_ptr); break;
      case DT_JMPREL: jmprel = at(d->d_un.d_ptr); break;
      case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
      case DT_PLTREL: rela_plt = d->d_un.d_val == DT_RELA; break;
      case DT_RELA: rela = at(d->d_un.d_ptr); break;
      case DT_RELASZ: rela_size = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == 0 || strtab == 0 || !rela_plt) return false;
  RelroRange relro;
  relro.base = lm->l_addr;
  ::dl_iterate_phdr(&find_relro, &relro);
  const auto* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  bool redirected = false;
  for (auto [table, size] : {std::pair{jmprel, jmprel_size}, std::pair{rela, rela_size}}) {
    const auto* r = reinterpret_cast<const ElfW(Rela)*>(table);
    for (size_t i = 0; table != 0 && i < size / sizeof(ElfW(Rela)); ++i) {
      const uint32_t type = ELF64_R_TYPE(r[i].r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym)& s = syms[ELF64_R_SYM(r[i].r_info)];
      const char* name = reinterpret_cast<const char*>(strtab + s.st_name);
      if (s.st_shndx != SHN_UNDEF || std::strcmp(name, "__cxa_thread_atexit") != 0) continue;
      redirected |= write_slot(lm->l_addr + r[i].r_offset, reinterpret_cast<uintptr_t>(&registrar), relro);
    }
  }
  return redirected;
}

void set_thread_exit_owner(void* handle, const std::weak_ptr<const void>& owner) {
  link_map* lm = nullptr;
  if (handle == nullptr || ::dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == nullptr) return;
  Owners& o = owners();
  std::lock_guard<std::mutex> lock(o.mu);
  o.all.erase(std::remove_if(o.all.begin(), o.all.end(), [](const auto& e) { return e.second.expired(); }),
              o.all.end());
  o.all.emplace_back(lm, owner);
}

}  // namespace aotrun::pt2
