// A compiled AOTInductor model (the .so inside a .pt2), dlopen'd with its C
// entry points resolved (torch/csrc/inductor/aoti_runtime/interface.h).
// Probing follows aotrun's own rules: every missing required entry point is
// named in one MISSING_SYMBOL error; optional ones (RunSingleThreaded, added
// in 2025) are looked up and their absence only changes what runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/dl_handle.hpp"
#include "package/package_code.hpp"
#include "package/pt2/provider/torch_runtime.hpp"

namespace aotrun::pt2 {

struct AotiContainerOpaque;
using AotiContainerHandle = AotiContainerOpaque*;

// AOTInductorConstantMapEntry: one constant of the C-safe update forms.
struct AotiConstantEntry {
  const char* name;
  AtenTensorHandle handle;
};

struct AotiFunctions {
  using Create = int32_t (*)(AotiContainerHandle*, size_t num_models, bool is_cpu, const char* cubin_dir);
  using CreateWithDevice = int32_t (*)(AotiContainerHandle*, size_t num_models, const char* device,
                                       const char* cubin_dir);
  using Delete = int32_t (*)(AotiContainerHandle);
  // Input handles are stolen, the arrays borrowed; output handles are new
  // and belong to the caller.
  using Run = int32_t (*)(AotiContainerHandle, AtenTensorHandle* inputs, size_t num_inputs, AtenTensorHandle* outputs,
                          size_t num_outputs, void* stream, void* proxy_executor);
  using GetCount = int32_t (*)(AotiContainerHandle, size_t*);
  using GetName = int32_t (*)(AotiContainerHandle, size_t, const char**);

  Create create = nullptr;
  CreateWithDevice create_with_device = nullptr;
  Delete destroy = nullptr;
  Run run = nullptr;
  Run run_single_threaded = nullptr;  // probed
  GetCount num_inputs = nullptr;
  GetCount num_outputs = nullptr;
  GetName input_name = nullptr;   // probed
  GetName output_name = nullptr;  // probed
  // Probed (torch 2.8+): the message of the last failure on this thread.
  int32_t (*last_error)(const char** message) = nullptr;
  // Constants, probed (newer releases): how many, each one's size and
  // whether constant folding makes it (then it is in no blob), and the
  // loader of an external blob (archives with package_constants_on_disk_format
  // "binary_blob"), which takes a container despite its name.
  GetCount num_constants = nullptr;
  int32_t (*constant_data_size)(AotiContainerHandle, size_t, size_t*) = nullptr;
  int32_t (*constant_from_folded)(AotiContainerHandle, size_t, bool*) = nullptr;
  int32_t (*update_constants_from_blob)(AotiContainerHandle, const uint8_t*) = nullptr;
  // Listing constants (every release from 2.6): name, original FQN, torch
  // dtype code, ConstantType.
  GetName constant_name = nullptr;
  GetName constant_original_fqn = nullptr;
  int32_t (*constant_dtype)(AotiContainerHandle, size_t, int32_t*) = nullptr;
  int32_t (*constant_type)(AotiContainerHandle, size_t, int32_t*) = nullptr;
  // Replacing constants (constant_update.hpp says which release has which).
  // The *Pairs forms take a C array; the others a std::unordered_map<
  // std::string, AtenTensorHandle>* (only usable where the model's C++ ABI
  // is provably ours).
  using UpdatePairs = int32_t (*)(AotiContainerHandle, const AotiConstantEntry*, size_t, bool use_inactive,
                                  bool validate_full_update);
  using UpdateMap = int32_t (*)(AotiContainerHandle, void* map, bool use_inactive, bool validate_full_update);
  UpdatePairs update_user_managed_pairs = nullptr;  // 2.10+
  UpdatePairs update_pairs = nullptr;               // 2.13+ (copies)
  UpdateMap update_user_managed_map = nullptr;      // 2.8+
  UpdateMap update_map = nullptr;                   // every release (copies)
  int32_t (*run_constant_folding)(AotiContainerHandle, bool use_inactive, void* stream, void* proxy) = nullptr;
  // Probed (every release from 2.6): the pytree specs of the call torch.export
  // recorded (call_spec.hpp), as JSON strings owned by the container.
  using GetCallSpec = int32_t (*)(AotiContainerHandle, const char** in_spec, const char** out_spec);
  GetCallSpec call_spec = nullptr;
  // Probed (torch 2.13+): the container's constants as it holds them, name
  // and handle (both owned by the container; the array valid until the next
  // call), of the active buffer or the inactive one.
  using ExtractConstants = int32_t (*)(AotiContainerHandle, const AotiConstantEntry** entries, size_t* count,
                                       bool use_inactive);
  ExtractConstants extract_constants = nullptr;
};

// The library is dlclosed when this object goes. It is held by
// shared_ptr by everything that may still call into the model: the .pt2
// bridge (the package), each of its containers and each launch context (a
// graph the caller captured may hold one past its runner and package), so
// it goes with the last of them and no code of it can run after. What the
// model leaves behind does not outlive it: the bridge copies every output
// the model allocates into the caller's tensors and frees it within the run,
// input views and replacement constants are the shim's tensors over memory
// aotrun owns, and nothing the model makes is registered with the shim or
// libtorch (AOTInductor's C shim takes no callbacks). Two things used to
// keep every model mapped whatever aotrun did: its STB_GNU_UNIQUE symbols
// (unique_symbols.hpp, fixed before dlopen) and the thread_local
// destructors each calling thread registered for it (model_thread_exit.hpp,
// fixed by load()). Its dependencies stay loaded (pin_dependencies.hpp).
class AotiLibrary {
 public:
  // dlopen (RTLD_NOW | RTLD_LOCAL: the shim resolves through the model's
  // DT_NEEDED libtorch_cpu.so, which torch_shim() loaded), then resolution.
  // Throws Error LOAD_FAILED or MISSING_SYMBOL.
  explicit AotiLibrary(const std::string& path);
  // The constructor, shared, and declared the owner of the destructors the
  // model's thread_locals register (model_thread_exit.hpp).
  static std::shared_ptr<const AotiLibrary> load(const std::string& path);
  ~AotiLibrary();  // dlclose, under the lock that orders loads and unloads
  AotiLibrary(const AotiLibrary&) = delete;
  AotiLibrary& operator=(const AotiLibrary&) = delete;

  const AotiFunctions& fn() const { return fn_; }
  const std::vector<SymbolReport>& symbols() const { return symbols_; }
  // "<what> failed: <AOTInductor's message>", or a pointer to stderr where
  // the model has no AOTInductorGetLastError (it prints there instead).
  std::string failure(const char* what) const;
  const std::string& path() const { return path_; }
  // Bytes of the constants blob linked into the library
  // (_binary_constants_bin_end - _start); -1 when it exports no such symbols.
  int64_t in_library_constant_bytes() const { return in_library_constant_bytes_; }
  // The first 8 bytes of that blob, read as the size of weights kept
  // elsewhere (the mmap'd-weights layouts store the size there); 0 if absent.
  uint64_t in_library_size_stub() const { return size_stub_; }
  // While and after a container is created: AOTInductor's CPU and CUDA
  // runtimes copy that blob into memory of their own, constant by constant,
  // when a container loads its constants, and read it again only when
  // another container is created, so its pages are handed back to the
  // kernel (madvise MADV_DONTNEED: a model's weights would otherwise count
  // twice in the process's resident memory). Only where the blob lies in a
  // read-only segment of the library, which nothing can have written: a
  // later read, also one by a copy under way on another thread, faults the
  // same bytes back in from the file. Does nothing otherwise, or when
  // madvise fails. Any thread; cheap enough to call after every constant
  // (the pages are found once, at load). constant_pages.cpp.
  void release_constant_pages() const;
  // Whether release_constant_pages has pages to hand back.
  bool has_constant_pages() const { return pages_end_ > pages_begin_; }

  static constexpr const char* kRun = "AOTInductorModelContainerRun";
  static constexpr const char* kRunSingleThreaded = "AOTInductorModelContainerRunSingleThreaded";

 private:
  std::string path_;
  DlHandle handle_;  // dlclose'd with this object
  int64_t in_library_constant_bytes_ = -1;
  const uint8_t* constants_start_ = nullptr;  // the blob, when linked in
  const uint8_t* constants_end_ = nullptr;
  // The whole pages of the blob release_constant_pages hands back; empty
  // when it may not (find_constant_pages, at load).
  uintptr_t pages_begin_ = 0, pages_end_ = 0;
  void find_constant_pages();
  uint64_t size_stub_ = 0;
  AotiFunctions fn_;
  std::vector<SymbolReport> symbols_;
};

// While it lives, aotrun's shim (TorchShim::set_blob_hook) runs `lib`'s
// release_constant_pages on this thread after each tensor it makes over
// caller memory: at a container's creation, after each constant
// AOTInductor has copied out of the library. Does nothing with libtorch
// (no such hook) or a library without its constants inside. This thread
// only; `shim` and `lib` must outlive it. constant_pages.cpp.
// With `slides`, the shim may also slide the constants into alignment in
// place (TorchShim::set_constant_slides): only when nothing will write the
// model's blob after its constants are made (no copying constant update).
class ConstantPagesScope {
 public:
  ConstantPagesScope(const TorchShim& shim, const AotiLibrary& lib, bool slides);
  ~ConstantPagesScope();
  ConstantPagesScope(const ConstantPagesScope&) = delete;
  ConstantPagesScope& operator=(const ConstantPagesScope&) = delete;

 private:
  TorchShim::SetBlobHook set_ = nullptr;
  TorchShim::SetConstantSlides slides_ = nullptr;
};

}  // namespace aotrun::pt2
