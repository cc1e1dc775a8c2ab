// pooling_runs_impl.hpp's runs for AVX-512 (compiled with -mavx512f; called
// only where the CPU has it: pooling_runs.cpp).
#include "pooling_runs_impl.hpp"
#include "pooling_runs.hpp"

namespace aotrun::shim::kernels::pooling {

Runs runs_avx512() { return {add_f32, max_seq_f32, max_at_f32}; }

}  // namespace aotrun::shim::kernels::pooling
