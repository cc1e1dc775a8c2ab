// What a CUDA AOTInductor model (.pt2 with AOTI_DEVICE_KEY "cuda") needs
// before any of it is extracted or loaded: a libtorch built with CUDA and a
// usable CUDA device. Checked at open, so a machine that cannot run the model
// says why at once, and nothing of the archive is left behind.
#pragma once

#include <string>

namespace aotrun::pt2 {

// The directory of the libtorch a .pt2 would use: the one already loaded in
// this process, else `hint` (the package option 'libtorch': libtorch_cpu.so
// or its directory), else $AOTRUN_LIBTORCH. "" when none is named. Sets
// *loaded when a libtorch is already in the process.
std::string libtorch_dir(const std::string& hint, bool* loaded);

// Throws Error: LOAD_FAILED when that libtorch has no libtorch_cuda.so (or
// none is named), saying how to provide one; DEVICE when CUDA device
// `device_id` is not usable (no driver, no device), with CUDA's reason.
// `package` names the package in the messages.
void require_cuda_runtime(const std::string& package, const std::string& hint, int device_id);

}  // namespace aotrun::pt2
