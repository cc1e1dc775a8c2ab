// Telling aotrun's shim which of a container's constants are parameters,
// which nothing writes once the container exists, so that its kernels keep
// what they derive from them (a linear's weight packed for the GEMM, a
// convolution's weight in oneDNN's layout) instead of deriving it on every
// call. That is what a frozen export gets from its read-only constants; an
// ordinary export's parameters live in memory AOTInductor copied them into,
// which is writable, so only the runtime can say nothing writes it.
//
// Why it holds: a container's constants never change after create() (an
// update builds a new container, with new tensors), the replacements aotrun
// hands over are its own copies or read-only mappings, and a model writes
// only its buffers (kv caches, running statistics), never its parameters.
// So only constants of ConstantType Parameter are declared; buffers, tensor
// constants and folded constants are not.
#pragma once

#include <cstddef>

#include <vector>

#include "package/pt2/constants/constant_list.hpp"
#include "package/pt2/loading/aoti_library.hpp"
#include "package/pt2/provider/torch_runtime.hpp"

namespace aotrun::pt2 {

// Declares the parameters of container `h`'s active constants to the shim
// (TorchShim::declare_constant); `list` is the model's constants as
// read_constants read them (which are parameters). Does nothing where the
// provider is not aotrun's shim, where the model cannot list its constants
// with their handles (AOTInductorModelContainerExtractConstantsMapEntries:
// torch 2.13+), or for a CUDA container. Best effort:
// a constant the model or the shim will not say anything about is left
// undeclared (kernels then derive per call, as before); never throws.
// Call once, after the container's constants are final and before it runs.
// Returns how many the shim accepted.
size_t declare_parameters(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim,
                          const std::vector<Pt2Constant>& list, bool cuda);

}  // namespace aotrun::pt2
