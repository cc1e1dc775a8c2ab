// The widest vector extension the shim's own hand-vectorised kernels may
// use on this CPU: AVX-512 (F), AVX2 with FMA, or none. Each kernel with
// ISA variants (softmax_row*.cpp, head_products*.cpp) compiles one file per
// ISA and picks by this, once.
//
// AOTRUN_SHIM_MAX_ISA=avx2 or =scalar caps the choice, so that an AVX-512
// machine also proves the narrower paths (issue #41: every test passes on
// every x86 host); read once, at the first call.
#pragma once

namespace aotrun::shim::kernels {

enum class VectorIsa { kScalar, kAvx2, kAvx512 };

VectorIsa vector_isa();

}  // namespace aotrun::shim::kernels
