#include "kernels/onednn.hpp"

namespace aotrun::shim::kernels::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // lives as long as the process
  return *e;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(cpu_engine());
  return s;
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
