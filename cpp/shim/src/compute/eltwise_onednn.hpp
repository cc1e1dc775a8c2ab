// The fused ops' transcendental activations (gelu with erf or tanh, tanh,
// sigmoid, swish) on oneDNN's eltwise primitive: what libtorch's fused ops
// run them with (as oneDNN post-ops), vectorised for the CPU at hand.
// libm's scalar erff was a quarter of a frozen ViT's call, and oneDNN's
// gelu_erf is five times as fast as Sleef's 1-ulp erff (docs/PERFORMANCE.md
// section 16).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {

// The oneDNN eltwise algorithm (and its alpha; beta is 0) computing one of
// the activations above, or false for other kinds. Also what a fused
// convolution's post-ops use for them (convolution_onednn.cpp).
bool eltwise_algorithm(const Unary& u, dnnl::algorithm* alg, float* alpha);

// t = u(t) in place for a dense float32 t and one of the activations above,
// on the calling thread's OpenMP team; false, having done nothing, for other
// kinds or a t that is not dense (the caller applies u element by element).
// Throws ShimError when oneDNN fails.
bool eltwise_in_place(const Unary& u, const Tensor& t);

}  // namespace aotrun::shim::kernels
