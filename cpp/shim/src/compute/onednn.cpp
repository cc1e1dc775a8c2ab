#include "compute/onednn.hpp"

#include <omp.h>

#include "compute/scratch.hpp"

namespace aotrun::shim::kernels::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // lives as long as the process
  return *e;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(cpu_engine());
  return s;
}

void execute(const dnnl::primitive& p, dnnl::stream& s, std::initializer_list<Arg> args) {
  constexpr size_t kMaxArgs = 8;
  dnnl_exec_arg_t c_args[kMaxArgs];
  int n = 0;
  for (const Arg& a : args) {
    if (a.memory == nullptr) continue;  // an optional argument left out
    if (n == static_cast<int>(kMaxArgs)) throw dnnl::error(dnnl_invalid_arguments, "too many primitive arguments");
    c_args[n++] = {a.arg, a.memory->get()};
  }
  const dnnl_status_t status = dnnl_primitive_execute(p.get(), s.get(), n, c_args);
  if (status != dnnl_success) throw dnnl::error(status, "could not execute a primitive");
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void* scratchpad_room(const dnnl::memory::desc& desc) {
  // Page-aligned, as oneDNN's own scratchpad is; never zero-filled
  // (scratch.hpp says why not a vector).
  constexpr size_t kAlign = 4096;
  thread_local Scratch buffer;
  const size_t bytes = desc.get_size();
  if (bytes == 0) return nullptr;
  unsigned char* const base = buffer.room<unsigned char>(static_cast<int64_t>(bytes + kAlign));
  const uintptr_t at = (reinterpret_cast<uintptr_t>(base) + kAlign - 1) & ~uintptr_t(kAlign - 1);
  return reinterpret_cast<void*>(at);
}

dnnl::memory scratchpad_for(const dnnl::memory::desc& desc) {
  return dnnl::memory(desc, cpu_engine(), scratchpad_room(desc));
}

int64_t team_size() { return omp_get_max_threads(); }

bool runs_avx512_core() {
  // The ISA values are feature masks: AVX2-VNNI (0x407) is numerically
  // above AVX-512 core (0x27) without containing it.
  static const bool yes = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;
  }();
  return yes;
}

bool host_takes_bf16() { return runs_avx512_core(); }

bool host_takes_f16() {
  static const bool yes = host_takes_bf16() && __builtin_cpu_supports("avx512fp16");
  return yes;
}

dnnl::memory::desc f32_desc(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  dnnl::memory::dims d(sizes.begin(), sizes.end()), s(strides.begin(), strides.end());
  return dnnl::memory::desc(d, dnnl::memory::data_type::f32, s);
}

size_t KeyHash::operator()(const Key& k) const noexcept {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the integers
  for (int64_t x : k.v) {
    h ^= static_cast<uint64_t>(x);
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h);
}

}  // namespace aotrun::shim::kernels::onednn
