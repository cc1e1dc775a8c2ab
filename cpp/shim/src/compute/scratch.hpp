// A thread's scratch memory for a kernel's per-call temporaries (an
// unfolded input, a reordered weight, one head's scores): it grows to the
// largest size asked for, keeps it, and is never initialised.
//
// Why not a thread_local std::vector resized per call: resize() zeroes
// every element it adds, and kernels ask for different sizes call after
// call (each convolution of a net its own weight), so a vector shrunk by one
// call was zero-filled again up to the next one's size: a memset of up to
// the largest size on every such call (0.8% of unfrozen ResNet-18's time on
// a Zen 5 core, in `std::vector::_M_default_append`; docs/PERFORMANCE.md
// section 33), for memory every caller writes before it reads.
//
// One object per buffer a kernel holds at the same time; not shared
// between threads (declare it thread_local inside the kernel, or inside
// the OpenMP region for a worker's own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace aotrun::shim::kernels {

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();

  // Room for `count` elements of T, 64-byte aligned, their values
  // unspecified (what an earlier call left, or nothing written yet). Valid
  // until the next call on this object, which may move it (the old
  // contents are not kept). Throws std::bad_alloc when memory runs out.
  template <class T>
  T* room(int64_t count) {
    const size_t n = count < 0 ? 0 : static_cast<size_t>(count);
    if (n > kMaxBytes / sizeof(T)) throw std::bad_alloc();  // no size that wraps around
    return static_cast<T*>(bytes(n * sizeof(T)));
  }
  float* floats(int64_t count) { return room<float>(count); }

 private:
  static constexpr size_t kMaxBytes = SIZE_MAX / 2;
  void* bytes(size_t n);

  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace aotrun::shim::kernels
