// What an AOTInductor model library needs from this process, checked before
// dlopen. dlopen of a model that needs more than the process has fails on the
// first missing symbol ("undefined symbol: aoti_torch_..."), or succeeds and
// the process dies later: SIGILL in the first kernel when the model was
// compiled for vector instructions this CPU lacks. Here every missing piece
// is named at once, with what to do about it.
#pragma once

#include <string>
#include <vector>

#include "linkinfo/cpu_features.hpp"
#include "package/pt2/provider/torch_runtime.hpp"

namespace aotrun::pt2 {

// Throws, naming the package `name` and the model library `so`:
//  - LOAD_FAILED when the model calls aoti_* functions of libtorch's C shim
//    that the libtorch in use does not export (a package exported by a newer
//    torch than that libtorch), each one named;
//  - LOAD_FAILED when it needs symbol versions (GLIBCXX_3.4.32, CXXABI_1.3.15,
//    GLIBC_2.38, ...) that the libraries this process has already loaded do
//    not define, each named with the newest one the library has (and the
//    torch release that first exports each missing shim function);
//  - UNSUPPORTED when `cpu_isa` (the archive's AOTI_CPU_ISA, "" = unknown)
//    names vector extensions this CPU lacks.
void check_model_requirements(const std::string& so, const std::string& name, const TorchShim& shim,
                              const std::string& cpu_isa);

using aotrun::missing_cpu_features;  // linkinfo/cpu_features.hpp

}  // namespace aotrun::pt2
