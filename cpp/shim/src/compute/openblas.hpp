// OpenBLAS, loaded the first time a kernel needs it: float64 GEMM and the
// LAPACK routines of the linear-algebra ops (OpenBLAS carries LAPACK). Only
// such models need it (float32 GEMM is oneDNN's), so it is not a link
// dependency of the shim: a float32 model's process never maps its 36 MB,
// and never starts its worker threads, which on a small machine spin in
// sched_yield for the first ~0.1 s after the library loads, taking a core
// from the model's own start-up.
#pragma once

#include <string>

namespace aotrun::shim::kernels {

// The address of `symbol` in OpenBLAS (Debian's libopenblas.so.0, or the
// library $AOTRUN_SHIM_OPENBLAS names). One load per library name for the
// process; never unloaded. Throws ShimError saying what `needed_for` needs
// and how to provide it when the library or the symbol is missing.
void* openblas_symbol(const char* symbol, const std::string& needed_for);

}  // namespace aotrun::shim::kernels
