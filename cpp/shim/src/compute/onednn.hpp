// oneDNN (Debian's libdnnl) for the shim's kernels: the CPU engine, a
// stream per thread, memory descriptors of shim tensors, and a bounded cache
// of built primitives. Building a primitive (choosing an implementation,
// generating its code) costs tens of microseconds; a model calls the same
// convolution with the same shapes on every run, so each shape is built once
// per process and reused from every thread.
//
// What makes that reuse valid (issue #40): a primitive is immutable and may
// run concurrently only when it owns no hidden state, and oneDNN 2.x's
// default ("library") scratchpad is hidden state: implementations marked as
// using the global scratchpad (the GEMM-based convolution, x64:gemm:jit)
// take their temporary buffer from a thread-local one that oneDNN grows
// while *creating* the primitive on the creating thread. Run on another
// thread, the same primitive reads that thread's buffer, which is smaller or
// absent: a segfault inside dnnl_primitive_execute. So every primitive of
// the shim is built with user_scratchpad() and executed with the calling
// thread's own buffer (scratchpad_for), and a primitive is keyed by the
// OpenMP team size it was built for (team_size()): oneDNN sizes its
// per-thread work at creation.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <initializer_list>
#include <vector>

namespace aotrun::shim::kernels::onednn {

const dnnl::engine& cpu_engine();
// This thread's stream on cpu_engine() (in-order, runs on the caller's thread
// and its OpenMP team).
dnnl::stream& thread_stream();

// Attributes that make a primitive take its scratchpad from the caller
// (DNNL_ARG_SCRATCHPAD) instead of oneDNN's thread-local global one.
dnnl::primitive_attr user_scratchpad();

// A scratchpad for `desc` (a primitive descriptor's scratchpad_desc()) in
// this thread's buffer, grown as needed and kept for the thread's life. Valid
// until the next call on this thread; a zero-sized desc gives an empty
// memory that oneDNN accepts.
dnnl::memory scratchpad_for(const dnnl::memory::desc& desc);
// The same buffer as a pointer (null for a zero-sized desc), for a memory
// object the caller keeps and points at it per call.
void* scratchpad_room(const dnnl::memory::desc& desc);

// One argument of execute(): DNNL_ARG_* and its memory.
struct Arg {
  int arg;
  const dnnl::memory* memory;
};

// Runs `p` on `s` with `args` through oneDNN's C API. The C++ wrapper's
// execute() takes an std::unordered_map, a heap allocation per argument per
// call: a few thousand per call of a convolution net (docs/PERFORMANCE.md
// section 34). Throws dnnl::error as that execute() does.
void execute(const dnnl::primitive& p, dnnl::stream& s, std::initializer_list<Arg> args);

// The OpenMP team a primitive built now is sized for (omp_get_max_threads()
// on this thread): part of every cache key.
int64_t team_size();

// Whether oneDNN's effective ISA includes AVX-512 core (its brgemm-based
// and avx512_core kernels are then available to it); DNNL_MAX_CPU_ISA caps
// the answer. Any thread; computed once.
bool runs_avx512_core();

// Whether libtorch's CPU convolutions take their oneDNN path for bfloat16
// (float16) inputs on this host, as ATen's mkldnn_bf16_device_check
// (mkldnn_fp16_device_check) decides: oneDNN's effective ISA includes
// AVX-512 core (and, for float16, the CPU has AVX512-FP16). Some output
// layouts depend on that path. DNNL_MAX_CPU_ISA caps the answer as it caps
// libtorch's own oneDNN. Any thread; computed once.
bool host_takes_bf16();
bool host_takes_f16();

// The f32 descriptor of a view with these sizes and strides (in elements).
dnnl::memory::desc f32_desc(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

// A key of integers (shapes, strides, parameters) for PrimitiveCache.
struct Key {
  std::vector<int64_t> v;
  bool operator==(const Key& o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key& k) const noexcept;
};

// Least-recently-used map from Key to shared_ptr<V>, safe from any thread.
// Entries handed out stay valid after eviction (shared ownership).
template <typename V>
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity) : capacity_(capacity) {}
  // The entry for `key`, built by `make` (outside the lock) on a miss. Two
  // threads missing at once may both build; the first one stored wins.
  std::shared_ptr<V> get(const Key& key, const std::function<std::shared_ptr<V>()>& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        order_.splice(order_.begin(), order_, it->second.pos);
        return it->second.value;
      }
    }
    std::shared_ptr<V> built = make();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second.value;
    order_.push_front(key);
    map_.emplace(key, Slot{built, order_.begin()});
    if (map_.size() > capacity_) {
      map_.erase(order_.back());
      order_.pop_back();
    }
    return built;
  }

 private:
  struct Slot {
    std::shared_ptr<V> value;
    typename std::list<Key>::iterator pos;
  };
  size_t capacity_;
  std::mutex mu_;
  std::list<Key> order_;  // most recent first
  std::unordered_map<Key, Slot, KeyHash> map_;
};

}  // namespace aotrun::shim::kernels::onednn
