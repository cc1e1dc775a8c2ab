// A PyTorch AOTInductor package (.pt2) as an aotrun package: the package ABI
// (abi/include/aotrun/package_abi.h, 1.1) implemented over AOTInductor's
// container interface, so that the runner's modes, the async window, graph
// capture and the fallback rules apply to .pt2 files unchanged.
//
//   aotrun_pkg_container_run                  -> AOTInductorModelContainerRun
//   aotrun_pkg_container_run_single_threaded  -> AOTInductorModelContainerRunSingleThreaded
//                                                (absent in packages from torch
//                                                releases before it: single_threaded
//                                                and graph modes fall back)
//
// Both are launched onto the stream the host passes, like any CPU package, so
// a capture records the model call and a replay repeats it with the same
// buffers. The threaded run is refused while its stream is capturing
// (AOTInductor's threaded container tracks instances with events, exactly
// what the original CUDA-graph report tripped over).
//
// Specs: input names from the model; dtypes and shapes from the input checks
// Inductor generates into the model's sources (wrapper_specs.hpp); output
// dtypes and ranks from one run on zero inputs at open; output shapes per
// input-shape key from one such run the first time the key is seen (the
// model does not declare them). A package whose sources carry no checks
// (older torch) has unknown specs: inputs are checked for device and layout
// only, and outputs after the run against the tensors given.
#pragma once

#include <memory>
#include <string>

#include <dlpack/dlpack.h>

#include "package/package_code.hpp"
#include "package/package_options.hpp"

namespace aotrun::pt2 {

// Opens model `options.model` of the archive at `path`: extracts it into a
// private directory (removed when the returned code goes away), loads
// libtorch's shim and the model library, reads the specs. Throws Error with
// the codes listed in pt2_archive.hpp, torch_runtime.hpp and aoti_library.hpp.
// `display_name` names the package in messages.
// *device (when given) receives the device the model was compiled for
// (CPU, or CUDA device 0: AOTI_DEVICE_KEY "cuda", run on aotrun's shim).
std::unique_ptr<PackageCode> open_pt2(const std::string& path, const std::string& display_name,
                                      const Pt2Options& options, DLDevice* device = nullptr);

// What open_pt2 would choose as the model's C shim provider now, loading
// nothing: the archive is read, the model library extracted and its imports
// read, the provider rule run (provider_choice.hpp, preview_provider). The
// trust and pin checks are not made (nothing is loaded). Throws what open_pt2
// throws for an archive or model it cannot read, and INVALID_ARGUMENT for a
// bad provider setting; a provider open would refuse is an answer, not an
// error.
ProviderPreview preview_pt2(const std::string& path, const std::string& display_name, const Pt2Options& options);

}  // namespace aotrun::pt2
