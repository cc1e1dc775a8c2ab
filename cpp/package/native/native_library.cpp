#include "package/native/native_library.hpp"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>

#include "linkinfo/elf_check.hpp"
#include "linkinfo/version_check.hpp"
#include "base/guard.hpp"
#include "base/error.hpp"
#include "base/unique_fd.hpp"

namespace aotrun {
namespace {

// Refuse anything dlopen would choke on before it sees it (elf_check.hpp):
// the user gets the defect named rather than a linker riddle, or a SIGBUS.
void check_elf(const std::string& path, int given_fd) {
  // O_NONBLOCK: opening a FIFO must not hang; the check refuses it anyway.
  if (given_fd >= 0) return check_elf_shared_object(given_fd, path);  // a given descriptor stays the caller's
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed,
         "cannot open package library '" + path + "': " + std::strerror(err));
  }
  check_elf_shared_object(fd.get(), path);
}

}  // namespace

NativeLibrary::NativeLibrary(const std::string& path, uint32_t expected_abi, int fd) {
  path_ = path;
  check_elf(path, fd);
  // dlopen needs a slash to avoid a search of the library path. It is not
  // given /proc/self/fd/<fd>: glibc identifies loaded objects by name first,
  // and a C++ package with unique symbols is never unloaded, so a reused
  // descriptor number would alias another package.
  check_symbol_versions(path, "package library '" + path + "'");  // all missing ones named, before dlopen
  const std::string load_path = path.find('/') == std::string::npos ? "./" + path : path;
  handle_ = DlHandle::open(load_path, RTLD_NOW | RTLD_LOCAL, "dlopen of the package library");
  void* slots[kSymCount] = {};
  bool exported[kSymCount] = {};
  std::string missing;
  for (size_t i = 0; i < kSymCount; ++i) {
    slots[i] = handle_.symbol(kPackageSymbols[i].name);
    exported[i] = slots[i] != nullptr;
    if (!exported[i] && kPackageSymbols[i].required) {
      missing += missing.empty() ? "" : ", ";
      missing += kPackageSymbols[i].name;
    }
  }
  if (!missing.empty()) fail(Code::MissingSymbol, "package '" + path + "' lacks required entry points: " + missing);
  fn_.abi_version = reinterpret_cast<aotrun_pkg_abi_version_fn>(slots[kSymAbiVersion]);
  fn_.get_last_error = reinterpret_cast<aotrun_pkg_get_last_error_fn>(slots[kSymGetLastError]);
  create_ = reinterpret_cast<aotrun_pkg_container_create_fn>(slots[kSymCreate]);
  fn_.destroy = reinterpret_cast<aotrun_pkg_container_destroy_fn>(slots[kSymDestroy]);
  fn_.num_inputs = reinterpret_cast<aotrun_pkg_container_get_num_inputs_fn>(slots[kSymNumInputs]);
  fn_.num_outputs = reinterpret_cast<aotrun_pkg_container_get_num_outputs_fn>(slots[kSymNumOutputs]);
  fn_.input_spec = reinterpret_cast<aotrun_pkg_container_get_input_spec_fn>(slots[kSymInputSpec]);
  fn_.output_spec = reinterpret_cast<aotrun_pkg_container_get_output_spec_fn>(slots[kSymOutputSpec]);
  fn_.output_shapes = reinterpret_cast<aotrun_pkg_container_get_output_shapes_fn>(slots[kSymOutputShapes]);
  fn_.run = reinterpret_cast<aotrun_pkg_container_run_fn>(slots[kSymRun]);

  // The first call into the package: guarded like every other one.
  abi_version_ = static_cast<uint32_t>(
      package_call(path, AOTRUN_PKG_SYM_ABI_VERSION, [this] { return static_cast<int32_t>(fn_.abi_version()); }));
  const uint32_t major = AOTRUN_PKG_VERSION_MAJOR(abi_version_);
  if (major != AOTRUN_PKG_ABI_MAJOR) {
    fail(Code::AbiMismatch, "package '" + path + "' was built for package ABI " + abi_version_string(abi_version_) +
                                "; this aotrun speaks major " + std::to_string(AOTRUN_PKG_ABI_MAJOR) +
                                " (any 1.x package loads)");
  }
  if (expected_abi != 0 && expected_abi != abi_version_) {
    fail(Code::BadPackage, "package '" + path + "' reports ABI " + abi_version_string(abi_version_) +
                               " but its manifest says " + abi_version_string(expected_abi));
  }
  // A symbol newer than the version the package claims is not trusted: a 1.0
  // package that happens to export a same-named function of its own must not
  // be called with 1.1 semantics. It stays reported as exported, and ignored.
  for (size_t i = 0; i < kSymCount; ++i) {
    SymbolReport r{kPackageSymbols[i].name, kPackageSymbols[i].required, kPackageSymbols[i].since, exported[i]};
    if (exported[i] && kPackageSymbols[i].since > abi_version_) {
      r.ignored = true;
      slots[i] = nullptr;
    }
    symbols_.push_back(std::move(r));
  }
  fn_.run_single_threaded = reinterpret_cast<aotrun_pkg_container_run_single_threaded_fn>(slots[kSymRunSingleThreaded]);

  info_.label = "ABI " + abi_version_string(abi_version_);
  info_.subject = "package " + info_.label;
  info_.run_symbol = AOTRUN_PKG_SYM_RUN;
  info_.run_single_threaded_symbol = AOTRUN_PKG_SYM_RUN_SINGLE_THREADED;
  if (symbols_[kSymRunSingleThreaded].ignored) {
    info_.single_threaded_ignored_reason =
        "exported, but the package declares ABI " + abi_version_string(abi_version_) + " and run_single_threaded is " +
        abi_version_string(kPackageSymbols[kSymRunSingleThreaded].since) + ": not used";
  }
}

int32_t NativeLibrary::create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const {
  return create_(out, args);
}

}  // namespace aotrun
