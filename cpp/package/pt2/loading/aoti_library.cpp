#include "package/pt2/loading/aoti_library.hpp"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "base/error.hpp"
#include "package/pt2/loading/model_thread_exit.hpp"
#include "package/pt2/loading/pin_dependencies.hpp"

namespace aotrun::pt2 {
namespace {

// `since` is 0: AOTInductor's entry points carry no version of their own.
struct Entry {
  const char* name;
  bool required;
};

// Create and CreateWithDevice: either will do (the second replaced the first
// in 2025 releases; both are still exported). Checked separately below.
constexpr Entry kEntries[] = {
    {"AOTInductorModelContainerCreate", false},
    {"AOTInductorModelContainerCreateWithDevice", false},
    {"AOTInductorModelContainerDelete", true},
    {AotiLibrary::kRun, true},
    {AotiLibrary::kRunSingleThreaded, false},
    {"AOTInductorModelContainerGetNumInputs", true},
    {"AOTInductorModelContainerGetNumOutputs", true},
    {"AOTInductorModelContainerGetInputName", false},
    {"AOTInductorModelContainerGetOutputName", false},
    {"AOTInductorGetLastError", false},
    {"AOTInductorModelContainerGetNumConstants", false},
    {"AOTInductorModelContainerGetConstantDataSize", false},
    {"AOTInductorModelContainerGetConstantFromFolded", false},
    {"AOTInductorModelUpdateConstantsFromBlob", false},
    {"AOTInductorModelContainerGetConstantName", false},
    {"AOTInductorModelContainerGetConstantOriginalFQN", false},
    {"AOTInductorModelContainerGetConstantDtype", false},
    {"AOTInductorModelContainerGetConstantType", false},
    {"AOTInductorModelContainerUpdateUserManagedConstantBufferPairs", false},
    {"AOTInductorModelContainerUpdateConstantBufferPairs", false},
    {"AOTInductorModelContainerUpdateUserManagedConstantBuffer", false},
    {"AOTInductorModelContainerUpdateConstantBuffer", false},
    {"AOTInductorModelContainerRunConstantFolding", false},
    {"AOTInductorModelContainerGetCallSpec", false},
    {"AOTInductorModelContainerExtractConstantsMapEntries", false},
};

// Model libraries are loaded, patched (redirect_thread_exit writes their
// GOT) and unloaded one at a time. A library unloaded by one thread and the
// next one mapped at its address by another are ordered by this lock, not
// only by the dynamic loader's own (which ThreadSanitizer cannot see), so
// the patch of the new library never meets the old one's last writes.
std::mutex& loader_mutex() {
  static std::mutex* m = new std::mutex;  // never destroyed: unloads may run during exit
  return *m;
}

}  // namespace

AotiLibrary::~AotiLibrary() {
  std::lock_guard<std::mutex> lock(loader_mutex());
  handle_ = DlHandle();  // dlclose
}

AotiLibrary::AotiLibrary(const std::string& path) : path_(path) {
  std::lock_guard<std::mutex> lock(loader_mutex());
  // RTLD_LOCAL: two models must not interpose each other's weak symbols
  // (each exports its template instances); the shim resolves through the
  // model's DT_NEEDED libtorch_cpu.so (torch_runtime.cpp).
  handle_ = DlHandle::open(path, RTLD_NOW | RTLD_LOCAL, "dlopen of the AOTInductor model");
  void* slots[sizeof kEntries / sizeof kEntries[0]] = {};
  std::string missing;
  for (size_t i = 0; i < sizeof kEntries / sizeof kEntries[0]; ++i) {
    slots[i] = handle_.symbol(kEntries[i].name);
    symbols_.push_back({kEntries[i].name, kEntries[i].required, 0, slots[i] != nullptr});
    if (slots[i] == nullptr && kEntries[i].required)
      missing += (missing.empty() ? "" : ", ") + std::string(kEntries[i].name);
  }
  if (slots[0] == nullptr && slots[1] == nullptr) {
    missing = std::string("AOTInductorModelContainerCreate or AOTInductorModelContainerCreateWithDevice") +
              (missing.empty() ? "" : ", ") + missing;
  }
  if (!missing.empty())
    fail(Code::MissingSymbol, "AOTInductor model '" + path + "' lacks required entry points: " + missing);
  fn_.create = reinterpret_cast<AotiFunctions::Create>(slots[0]);
  fn_.create_with_device = reinterpret_cast<AotiFunctions::CreateWithDevice>(slots[1]);
  fn_.destroy = reinterpret_cast<AotiFunctions::Delete>(slots[2]);
  fn_.run = reinterpret_cast<AotiFunctions::Run>(slots[3]);
  fn_.run_single_threaded = reinterpret_cast<AotiFunctions::Run>(slots[4]);
  fn_.num_inputs = reinterpret_cast<AotiFunctions::GetCount>(slots[5]);
  fn_.num_outputs = reinterpret_cast<AotiFunctions::GetCount>(slots[6]);
  fn_.input_name = reinterpret_cast<AotiFunctions::GetName>(slots[7]);
  fn_.output_name = reinterpret_cast<AotiFunctions::GetName>(slots[8]);
  fn_.last_error = reinterpret_cast<int32_t (*)(const char**)>(slots[9]);
  fn_.num_constants = reinterpret_cast<AotiFunctions::GetCount>(slots[10]);
  fn_.constant_data_size = reinterpret_cast<int32_t (*)(AotiContainerHandle, size_t, size_t*)>(slots[11]);
  fn_.constant_from_folded = reinterpret_cast<int32_t (*)(AotiContainerHandle, size_t, bool*)>(slots[12]);
  fn_.update_constants_from_blob = reinterpret_cast<int32_t (*)(AotiContainerHandle, const uint8_t*)>(slots[13]);
  fn_.constant_name = reinterpret_cast<AotiFunctions::GetName>(slots[14]);
  fn_.constant_original_fqn = reinterpret_cast<AotiFunctions::GetName>(slots[15]);
  fn_.constant_dtype = reinterpret_cast<int32_t (*)(AotiContainerHandle, size_t, int32_t*)>(slots[16]);
  fn_.constant_type = reinterpret_cast<int32_t (*)(AotiContainerHandle, size_t, int32_t*)>(slots[17]);
  fn_.update_user_managed_pairs = reinterpret_cast<AotiFunctions::UpdatePairs>(slots[18]);
  fn_.update_pairs = reinterpret_cast<AotiFunctions::UpdatePairs>(slots[19]);
  fn_.update_user_managed_map = reinterpret_cast<AotiFunctions::UpdateMap>(slots[20]);
  fn_.update_map = reinterpret_cast<AotiFunctions::UpdateMap>(slots[21]);
  fn_.run_constant_folding = reinterpret_cast<int32_t (*)(AotiContainerHandle, bool, void*, void*)>(slots[22]);
  fn_.call_spec = reinterpret_cast<AotiFunctions::GetCallSpec>(slots[23]);
  fn_.extract_constants = reinterpret_cast<AotiFunctions::ExtractConstants>(slots[24]);
  // The blob inductor links into the library (objcopy's symbols for it).
  const auto* start = static_cast<const uint8_t*>(handle_.symbol("_binary_constants_bin_start"));
  const auto* end = static_cast<const uint8_t*>(handle_.symbol("_binary_constants_bin_end"));
  if (start != nullptr && end != nullptr && end >= start) {
    in_library_constant_bytes_ = end - start;
    constants_start_ = start;
    constants_end_ = end;
    if (end - start >= 8) std::memcpy(&size_stub_, start, sizeof size_stub_);
    find_constant_pages();
  }
  // Unloaded with this object (dlclose), which lives exactly as long as the
  // last thing that may run the model's code (aoti_library.hpp). What the
  // model pulled in stays.
  pin_dependencies(handle_.get());
  // Before any entry point runs: each touches the model's thread_locals.
  (void)redirect_thread_exit(handle_.get());
}

std::shared_ptr<const AotiLibrary> AotiLibrary::load(const std::string& path) {
  auto lib = std::make_shared<const AotiLibrary>(path);
  set_thread_exit_owner(lib->handle_.get(), lib);
  return lib;
}

std::string AotiLibrary::failure(const char* what) const {
  const char* msg = nullptr;
  if (fn_.last_error != nullptr && fn_.last_error(&msg) == 0 && msg != nullptr && *msg != '\0') {
    return std::string(what) + " failed: " + msg;
  }
  return std::string(what) +
         " failed (this model has no AOTInductorGetLastError; AOTInductor printed the reason to stderr)";
}

}  // namespace aotrun::pt2
