// Replacing a .pt2 model's constants in a container it just created, before
// anything runs it. AOTInductor's entry points for it differ per release
// (nm -D of the corpus's model libraries):
//
//   UpdateUserManagedConstantBufferPairs  2.10+  C array, no copy   (preferred)
//   UpdateConstantBufferPairs             2.13+  C array, copies
//   UpdateUserManagedConstantBuffer       2.8+   std::unordered_map*, no copy
//   UpdateConstantBuffer                  2.6+   std::unordered_map*, copies
//
// The map forms take a std::unordered_map<std::string, AtenTensorHandle>*
// across the library boundary, so they are used only when the model's
// library provably has this process's C++ ABI: libstdc++ with the C++11
// std::string (its exported update_constant_buffer is mangled with
// std::__cxx11::basic_string), as aotrun is built. torch 2.6's packages use
// the pre-C++11 string: no form is usable there.
#pragma once

#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "package/pt2/loading/aoti_library.hpp"
#include "package/pt2/constants/constant_list.hpp"

namespace aotrun::pt2 {

enum class UpdateForm { UserManagedPairs, UserManagedMap, CopyPairs, CopyMap, None };

struct UpdatePlan {
  UpdateForm form = UpdateForm::None;
  std::string entry_point;  // the function used, for messages
  std::string why_none;     // when form == None: what the model lacks
  // Whether the container keeps using the tensors handed to it (then the
  // caller keeps them, and their memory, alive until the container is gone).
  bool keeps_tensors() const { return form == UpdateForm::UserManagedPairs || form == UpdateForm::UserManagedMap; }
};

// Checks the host's replacement constants against the model's list and makes
// one tensor handle for each (appended to `made`, which the caller deletes
// once the container no longer uses them): over the host's row-major data
// (no copy), or, for a constant the model keeps with its dims permuted
// (channels-last), a tensor of the shim's laid out so and filled from it.
// Throws Error INVALID_ARGUMENT naming the constant (unknown or duplicate
// name, a folded constant, another dtype, shape or size, not CPU, not
// compact), UNSUPPORTED (the model's own layout of it overlaps, has gaps or
// an offset, or is unknown because the archive carries no source) or
// OUT_OF_MEMORY (the laid-out tensor could not be made).
std::vector<AotiConstantEntry> wrap_replacements(const TorchShim& shim, const std::vector<Pt2Constant>& list,
                                                 const aotrun_pkg_constant* given, size_t count,
                                                 std::vector<AtenTensorHandle>* made);

// Chooses the newest usable form of `lib` (read from its file at `so`).
UpdatePlan plan_constant_updates(const AotiLibrary& lib, const std::string& so);

// Where the model's kernels read its constants. Every tensor handed to a
// model as a constant (the host's replacements, views of an external weights
// file) is host memory; a CUDA model's kernels cannot read that, so its
// constants are copied to the device first.
struct ConstantPlacement {
  const TorchShim* shim = nullptr;
  bool cuda = false;
  // Receives the device tensors made for a CUDA model; the caller deletes
  // them with the host's once the container no longer uses them.
  std::vector<AtenTensorHandle>* kept = nullptr;
};
// Replaces the named constants of the active buffer of `h` with `entries`
// (others keep their values), then re-runs constant folding when
// `refold`. For a CUDA model (placement.cuda) each entry is first copied
// into a device tensor of its shape, strides and dtype, allocated from the
// memory pool the calling thread has in use (the container's), and the model
// gets those. Throws Error UNSUPPORTED (plan.form None), DEVICE (allocating
// or copying a constant to the device failed: the constant named) or PACKAGE
// (the model refused: AOTInductor's message).
void apply_constant_updates(const AotiLibrary& lib, AotiContainerHandle h, const UpdatePlan& plan,
                            const std::vector<AotiConstantEntry>& entries, bool refold,
                            const ConstantPlacement& placement);

}  // namespace aotrun::pt2
