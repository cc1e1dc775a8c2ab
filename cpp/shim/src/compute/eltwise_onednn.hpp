// The fused ops' transcendental activations (gelu with erf or tanh, tanh,
// sigmoid, swish) on oneDNN's eltwise primitive: what libtorch's fused ops
// run them with (as oneDNN post-ops), vectorised for the CPU at hand.
// libm's scalar erff was a quarter of a frozen ViT's call, and oneDNN's
// gelu_erf is five times as fast as Sleef's 1-ulp erff (docs/PERFORMANCE.md
// section 16).
#pragma once

#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {

// t = u(t) in place for a dense float32 t and one of the activations above,
// on the calling thread's OpenMP team; false, having done nothing, for other
// kinds or a t that is not dense (the caller applies u element by element).
// Throws ShimError when oneDNN fails.
bool eltwise_in_place(const Unary& u, const Tensor& t);

}  // namespace aotrun::shim::kernels
