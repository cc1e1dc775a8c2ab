#include "package/pt2/constants/model_constant_update.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "linkinfo/elf_symbols.hpp"
#include "package/pt2/provider/tensor_convert.hpp"
#include "package/pt2/specs/input_layout.hpp"
#include "base/checked_math.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

// AOTInductorModelContainer::update_constant_buffer(const std::unordered_map<...>&, ...)
constexpr const char* kUpdateMethod = "_ZN5torch12aot_inductor25AOTInductorModelContainer22update_constant_buffer";
constexpr const char* kCxx11Map = "St13unordered_mapINSt7__cxx1112basic_string";
constexpr const char* kOldMap = "St13unordered_mapISs";

// This build's side of the ABI proof: libstdc++ with the C++11 string.
#if defined(__GLIBCXX__) && defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI
constexpr bool kOurMapIsCxx11 = true;
#else
constexpr bool kOurMapIsCxx11 = false;
#endif

// "" when the library's map is provably ours, else why not.
std::string map_abi_mismatch(const std::string& so) {
  if (!kOurMapIsCxx11) return "aotrun is not built with libstdc++'s C++11 std::string";
  ElfDynamicSymbols syms;
  try {
    syms = read_elf_dynamic_symbols(so, kUpdateMethod);
  } catch (const Error& e) {
    return std::string("its symbols cannot be read (") + e.what() + ")";
  }
  bool cxx11 = false, old = false;
  for (const auto& s : syms.defined) {
    cxx11 = cxx11 || s.find(kCxx11Map) != std::string::npos;
    old = old || s.find(kOldMap) != std::string::npos;
  }
  if (old) return "the model's library uses the pre-C++11 std::string ABI (torch 2.6 and older)";
  if (!cxx11) return "the model's library does not show which std::unordered_map it was built with";
  return "";
}

std::string dims(const int64_t* d, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

bool compact(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride, int64_t offset) {
  uint64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && static_cast<uint64_t>(stride[d]) != step) return false;
    step = saturating_mul<uint64_t>(step, static_cast<uint64_t>(shape[d]));
  }
  return offset == 0;
}

}  // namespace

std::vector<AotiConstantEntry> wrap_replacements(const TorchShim& shim, const std::vector<Pt2Constant>& list,
                                                 const aotrun_pkg_constant* given, size_t count,
                                                 std::vector<AtenTensorHandle>* made) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < list.size(); ++i) index.emplace(list[i].info.name, i);
  std::vector<bool> used(list.size(), false);
  std::vector<AotiConstantEntry> out;
  out.reserve(count);
  made->reserve(made->size() + count);  // no throw between making a handle and keeping it
  for (size_t k = 0; k < count; ++k) {
    const aotrun_pkg_constant& g = given[k];
    if (g.name == nullptr) fail(Code::InvalidArgument, "replacement constant " + std::to_string(k) + " has no name");
    const std::string what = "replacement constant '" + std::string(g.name) + "'";
    const auto it = index.find(g.name);
    if (it == index.end()) fail(Code::InvalidArgument, what + ": the model has no constant of that name");
    const Pt2Constant& c = list[it->second];
    if (used[it->second]) fail(Code::InvalidArgument, what + " is given twice");
    used[it->second] = true;
    if (c.info.folded) {
      fail(Code::InvalidArgument, what + " is computed by constant folding from other constants; replace those");
    }
    if (c.packed) {
      // The model reads its bytes as oneDNN's blocked layout (a frozen
      // export), which a row-major replacement is not: refused, never read
      // as the wrong layout (issue #38).
      fail(Code::Unsupported, what +
                                  ": the model keeps it packed in oneDNN's blocked layout (exported with "
                                  "freezing), and aotrun does not pack replacements; export the model with the new "
                                  "weights instead");
    }
    const DLTensor& t = g.tensor;
    if (t.device.device_type != kDLCPU) fail(Code::InvalidArgument, what + " is not in CPU memory");
    if (t.dtype.code != c.info.dtype.code || t.dtype.bits != c.info.dtype.bits || t.dtype.lanes != c.info.dtype.lanes) {
      fail(Code::InvalidArgument, what + " has another dtype than the model's");
    }
    if (t.ndim < 0 || t.ndim > 32 || (t.ndim > 0 && t.shape == nullptr)) {
      fail(Code::InvalidArgument, what + " has an invalid rank");
    }
    if (!c.info.shape_known) {
      fail(Code::Unsupported, what +
                                  ": the model's shape and layout of it are unknown (the archive carries no "
                                  "model source stating them), so a replacement cannot be laid out for it");
    }
    const std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    if (shape != c.info.shape) {
      fail(Code::InvalidArgument, what + " has shape " + dims(t.shape, shape.size()) + ", the model's is " +
                                      dims(c.info.shape.data(), c.info.shape.size()));
    }
    // The model's kernels read the constant with its own strides: a
    // row-major replacement of one it keeps otherwise (channels-last) is
    // laid out that way first, in a tensor of its own.
    const bool row_major = compact(c.info.shape, c.stride, c.storage_offset);
    const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();  // nothing to place
    if (!row_major && !empty &&
        (c.storage_offset != 0 || !dense_permutation(shape.data(), c.stride.data(), shape.size()))) {
      fail(Code::Unsupported, what + ": the model keeps it with strides " + dims(c.stride.data(), c.stride.size()) +
                                  " and storage offset " + std::to_string(c.storage_offset) +
                                  ", whose elements overlap, leave gaps or start past the storage's beginning; "
                                  "a replacement cannot be laid out so");
    }
    if (!row_major && shim.empty_strided == nullptr) {
      fail(Code::Unsupported, what + ": the model keeps it with strides " + dims(c.stride.data(), c.stride.size()) +
                                  ", and the shim in use cannot make a tensor laid out so (aoti_torch_empty_strided)");
    }
    if (t.strides != nullptr) {
      std::vector<int64_t> st(t.strides, t.strides + t.ndim);
      if (!compact(shape, st, 0)) fail(Code::InvalidArgument, what + " is not compact row-major");
    }
    // The model's bytes for it may run past its extent (AOTInductor rounds
    // each constant's data_size up to 64 bytes); its kernels read the extent,
    // and a copying update copies the replacement's own storage (the
    // extent) into the model's slot.
    uint64_t bytes = 0;
    if (!storage_extent(c.info.shape, c.stride, 0, element_bytes(c.info.dtype), &bytes) ||
        (c.size_known && bytes > c.info.nbytes)) {
      fail(Code::InvalidArgument,
           what + ": its size differs from the model's (" + std::to_string(c.info.nbytes) + " bytes)");
    }
    if (t.data == nullptr && bytes > 0) fail(Code::InvalidArgument, what + " has no data");
    DLTensor view = t;
    view.data = static_cast<char*>(t.data) + t.byte_offset;
    view.byte_offset = 0;
    view.strides = nullptr;
    AtenTensorHandle h = nullptr;
    if (row_major) {
      std::string why;
      if (!wrap_input(shim, view, &h, &why)) fail(Code::InvalidArgument, what + ": " + why);
    } else {  // a tensor of the model's strides, filled as the bridge converts inputs
      void* laid = nullptr;
      if (shim.empty_strided(static_cast<int64_t>(shape.size()), shape.data(), c.stride.data(), c.torch_dtype,
                             shim.device_type_cpu, 0, &h) != 0 ||
          shim.get_data_ptr(h, &laid) != 0) {
        const std::string error = shim_error(shim);
        if (h != nullptr) (void)shim.delete_tensor_object(h);
        fail(Code::OutOfMemory, what + ": making a tensor with the model's strides " +
                                    dims(c.stride.data(), c.stride.size()) + " failed" + error);
      }
      to_strided(static_cast<char*>(laid), static_cast<const char*>(view.data), shape.data(), c.stride.data(),
                 static_cast<int>(shape.size()), element_bytes(c.info.dtype));
    }
    made->push_back(h);
    out.push_back({c.info.name.c_str(), h});  // the list outlives the call; `index` does not
  }
  return out;
}

UpdatePlan plan_constant_updates(const AotiLibrary& lib, const std::string& so) {
  const AotiFunctions& f = lib.fn();
  UpdatePlan p;
  if (f.update_user_managed_pairs != nullptr) {
    p.form = UpdateForm::UserManagedPairs;
    p.entry_point = "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs";
    return p;
  }
  if (f.update_pairs != nullptr) {
    p.form = UpdateForm::CopyPairs;
    p.entry_point = "AOTInductorModelContainerUpdateConstantBufferPairs";
    return p;
  }
  if (f.update_user_managed_map == nullptr && f.update_map == nullptr) {
    p.why_none = "the model exports no AOTInductorModelContainerUpdate*ConstantBuffer* entry point";
    return p;
  }
  const std::string mismatch = map_abi_mismatch(so);
  if (!mismatch.empty()) {
    p.why_none =
        "the model takes new constants only as a std::unordered_map (AOTInductorModelContainerUpdate"
        "[UserManaged]ConstantBuffer; the C-safe *Pairs forms came with torch 2.10), and " +
        mismatch + ", so no map aotrun builds can be handed to it safely";
    return p;
  }
  if (f.update_user_managed_map != nullptr) {
    p.form = UpdateForm::UserManagedMap;
    p.entry_point = "AOTInductorModelContainerUpdateUserManagedConstantBuffer";
  } else {
    p.form = UpdateForm::CopyMap;
    p.entry_point = "AOTInductorModelContainerUpdateConstantBuffer";
  }
  return p;
}

namespace {

// A copy of each host constant in device memory, same shape, strides and
// dtype (a view's storage offset is not kept: the model reads from the data
// pointer). The shim's copy from host memory returns once the copy is done,
// so the host's tensor may go as soon as this returns.
std::vector<AotiConstantEntry> on_device(const ConstantPlacement& p, const std::vector<AotiConstantEntry>& entries) {
  std::vector<AotiConstantEntry> out;
  out.reserve(entries.size());
  p.kept->reserve(p.kept->size() + entries.size());  // no throw between making a handle and keeping it
  for (const auto& e : entries) {
    AtenTensorHandle dev = nullptr;
    std::string why;
    if (!copy_to_cuda(*p.shim, e.handle, &dev, &why)) {
      fail(Code::Device, "placing constant '" + std::string(e.name) + "' on the device: " + why);
    }
    p.kept->push_back(dev);
    out.push_back({e.name, dev});
  }
  return out;
}

}  // namespace

void apply_constant_updates(const AotiLibrary& lib, AotiContainerHandle h, const UpdatePlan& plan,
                            const std::vector<AotiConstantEntry>& given, bool refold,
                            const ConstantPlacement& placement) {
  const AotiFunctions& f = lib.fn();
  if (plan.form == UpdateForm::None) {
    fail(Code::Unsupported, "replacing the constants of this model is not possible: " + plan.why_none);
  }
  const std::vector<AotiConstantEntry> entries = placement.cuda ? on_device(placement, given) : given;
  if (!entries.empty()) {
    // Active buffer (the container is new and idle), partial update: the
    // constants not named keep their values.
    int32_t rc = 0;
    if (plan.form == UpdateForm::UserManagedPairs || plan.form == UpdateForm::CopyPairs) {
      const auto fn = plan.form == UpdateForm::UserManagedPairs ? f.update_user_managed_pairs : f.update_pairs;
      rc = fn(h, entries.data(), entries.size(), false, false);
    } else {
      std::unordered_map<std::string, AtenTensorHandle> map;
      map.reserve(entries.size());
      for (const auto& e : entries) map.emplace(e.name, e.handle);
      const auto fn = plan.form == UpdateForm::UserManagedMap ? f.update_user_managed_map : f.update_map;
      rc = fn(h, &map, false, false);
    }
    if (rc != 0) fail(Code::Package, lib.failure(plan.entry_point.c_str()));
  }
  // Folded constants are computed from the others: recompute them now rather
  // than on the first run.
  if (refold && f.run_constant_folding != nullptr && f.run_constant_folding(h, false, nullptr, nullptr) != 0) {
    fail(Code::Package, lib.failure("AOTInductorModelContainerRunConstantFolding"));
  }
}

}  // namespace aotrun::pt2
