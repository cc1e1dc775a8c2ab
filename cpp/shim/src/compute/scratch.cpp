#include "compute/scratch.hpp"

#include <cstdlib>
#include <new>

namespace aotrun::shim::kernels {

Scratch::~Scratch() { std::free(data_); }

void* Scratch::bytes(size_t n) {
  if (n <= size_ && data_ != nullptr) return data_;
  // Rounded up to whole 64-byte lines, as aligned_alloc requires; at least one.
  const size_t rounded = (n == 0 ? 64 : (n + 63) / 64 * 64);
  void* grown = std::aligned_alloc(64, rounded);
  if (grown == nullptr) throw std::bad_alloc();
  std::free(data_);
  data_ = grown;
  size_ = rounded;
  return data_;
}

}  // namespace aotrun::shim::kernels
