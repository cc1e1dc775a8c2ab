// The float32 runs of the pooling kernels for the widest ISA the CPU has
// (vector_isa.hpp; AOTRUN_SHIM_MAX_ISA caps it): the same loops compiled
// three times, so every ISA gives the same bits.
#include "compute/vector_isa.hpp"
#include "pooling_runs_impl.hpp"
#include "pooling_runs.hpp"

namespace aotrun::shim::kernels::pooling {

Runs runs_avx2();
Runs runs_avx512();

const Runs& runs_f32() {
  static const Runs runs = [] {
    switch (vector_isa()) {
      case VectorIsa::kAvx512: return runs_avx512();
      case VectorIsa::kAvx2: return runs_avx2();
      default: return Runs{add_f32, max_seq_f32, max_at_f32};
    }
  }();
  return runs;
}

}  // namespace aotrun::shim::kernels::pooling
