// torch.fft's kernels (fft.cpp, since aotrun-shim 1.4): each returns a new
// tensor laid out as libtorch's CPU (MKL) path lays it out, or throws
// ShimError naming `op` and the argument. dim: dim_len dims (negative ones
// wrapped; none repeated); normalization 0 none, 1 1/sqrt(n), 2 1/n.
#pragma once

#include <cstdint>

#include "tensor.hpp"

namespace aotrun::shim::kernels {

// Real float32/float64 -> complex64/complex128 over dims; the last dim keeps
// its first n/2 + 1 bins when onesided.
Tensor fft_r2c(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, bool onesided,
               const char* op);
// Complex -> complex over dims (none: a copy), forward or backward (unscaled
// but for normalization).
Tensor fft_c2c(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, bool forward,
               const char* op);
// Complex (the last dim holding last_dim_size / 2 + 1 bins) -> real with
// last_dim_size points along the last dim: a backward c2c over the other
// dims, then the Hermitian c2r.
Tensor fft_c2r(const Tensor& self, const int64_t* dim, int64_t dim_len, int64_t normalization, int64_t last_dim_size,
               const char* op);
// |self|: complex64/complex128 -> float32/float64, real dtypes -> their own.
Tensor abs(const Tensor& self, const char* op);
// Views sharing self's storage: complex [..] <-> real [.., 2].
Tensor view_as_real(const Tensor& self, const char* op);
Tensor view_as_complex(const Tensor& self, const char* op);

}  // namespace aotrun::shim::kernels
