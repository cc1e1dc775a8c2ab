#include "base/host_alloc.hpp"

#include <new>

#include "base/checked_math.hpp"

namespace aotrun {

void* aligned_alloc_bytes(size_t bytes, size_t align) noexcept {
  size_t rounded = 0;
  if (!checked_round_up(bytes == 0 ? align : bytes, align, &rounded) || rounded > kMaxAllocBytes) return nullptr;
  return ::operator new(rounded, std::align_val_t(align), std::nothrow);
}

void aligned_free(void* p, size_t align) noexcept {
  if (p != nullptr) ::operator delete(p, std::align_val_t(align));
}

}  // namespace aotrun
