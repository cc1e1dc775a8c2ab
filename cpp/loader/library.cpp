#include "loader/library.hpp"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include "loader/elf_check.hpp"
#include "runner/package_call.hpp"
#include "util/error.hpp"

namespace aotrun {
namespace {

// Refuse anything dlopen would choke on before it sees it (elf_check.hpp):
// the user gets the defect named rather than a linker riddle, or a SIGBUS.
void check_elf(const std::string& path, int given_fd) {
  // O_NONBLOCK: opening a FIFO must not hang; the check refuses it anyway.
  const int fd = given_fd >= 0 ? given_fd : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed,
         "cannot open package library '" + path + "': " + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{given_fd >= 0 ? -1 : fd};  // a given descriptor stays the caller's
  check_elf_shared_object(fd, path);
}

}  // namespace

std::string abi_version_string(uint32_t v) {
  return std::to_string(AOTRUN_PKG_VERSION_MAJOR(v)) + "." + std::to_string(AOTRUN_PKG_VERSION_MINOR(v));
}

PackageLibrary::PackageLibrary(const std::string& path, uint32_t expected_abi, int fd) : path_(path) {
  check_elf(path, fd);
  // dlopen needs a slash to avoid a search of the library path. It is not
  // given /proc/self/fd/<fd>: glibc identifies loaded objects by name first,
  // and a C++ package with unique symbols is never unloaded, so a reused
  // descriptor number would alias another package.
  std::string load_path = path.find('/') == std::string::npos ? "./" + path : path;
  handle_ = ::dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* e = ::dlerror();
    fail(Code::LoadFailed, "dlopen('" + path + "') failed: " + (e ? e : "unknown error"));
  }
  void* slots[kSymCount] = {};
  std::string missing;
  for (size_t i = 0; i < kSymCount; ++i) {
    slots[i] = ::dlsym(handle_, kPackageSymbols[i].name);
    found_[i] = slots[i] != nullptr;
    if (!found_[i] && kPackageSymbols[i].required) {
      missing += missing.empty() ? "" : ", ";
      missing += kPackageSymbols[i].name;
    }
  }
  if (!missing.empty()) {
    ::dlclose(handle_);
    handle_ = nullptr;
    fail(Code::MissingSymbol, "package '" + path + "' lacks required entry points: " + missing);
  }
  fn_.abi_version = reinterpret_cast<aotrun_pkg_abi_version_fn>(slots[kSymAbiVersion]);
  fn_.get_last_error = reinterpret_cast<aotrun_pkg_get_last_error_fn>(slots[kSymGetLastError]);
  fn_.create = reinterpret_cast<aotrun_pkg_container_create_fn>(slots[kSymCreate]);
  fn_.destroy = reinterpret_cast<aotrun_pkg_container_destroy_fn>(slots[kSymDestroy]);
  fn_.num_inputs = reinterpret_cast<aotrun_pkg_container_get_num_inputs_fn>(slots[kSymNumInputs]);
  fn_.num_outputs = reinterpret_cast<aotrun_pkg_container_get_num_outputs_fn>(slots[kSymNumOutputs]);
  fn_.input_spec = reinterpret_cast<aotrun_pkg_container_get_input_spec_fn>(slots[kSymInputSpec]);
  fn_.output_spec = reinterpret_cast<aotrun_pkg_container_get_output_spec_fn>(slots[kSymOutputSpec]);
  fn_.output_shapes = reinterpret_cast<aotrun_pkg_container_get_output_shapes_fn>(slots[kSymOutputShapes]);
  fn_.run = reinterpret_cast<aotrun_pkg_container_run_fn>(slots[kSymRun]);

  // The first call into the package: guarded like every other one.
  try {
    abi_version_ = static_cast<uint32_t>(package_call(path, AOTRUN_PKG_SYM_ABI_VERSION, [this] {
      return static_cast<int32_t>(fn_.abi_version());
    }));
  } catch (...) {
    ::dlclose(handle_);
    handle_ = nullptr;
    throw;
  }
  const uint32_t major = AOTRUN_PKG_VERSION_MAJOR(abi_version_);
  if (major != AOTRUN_PKG_ABI_MAJOR) {
    ::dlclose(handle_);
    handle_ = nullptr;
    fail(Code::AbiMismatch, "package '" + path + "' was built for package ABI " + abi_version_string(abi_version_) +
                                "; this aotrun speaks major " + std::to_string(AOTRUN_PKG_ABI_MAJOR) +
                                " (any 1.x package loads)");
  }
  if (expected_abi != 0 && expected_abi != abi_version_) {
    ::dlclose(handle_);
    handle_ = nullptr;
    fail(Code::BadPackage, "package '" + path + "' reports ABI " + abi_version_string(abi_version_) +
                               " but its manifest says " + abi_version_string(expected_abi));
  }
  // A symbol newer than the version the package claims is not trusted: a 1.0
  // package that happens to export a same-named function of its own must not
  // be called with 1.1 semantics. It stays reported as exported, and ignored.
  for (size_t i = 0; i < kSymCount; ++i) {
    symbols_.push_back({kPackageSymbols[i].name, kPackageSymbols[i].required, kPackageSymbols[i].since, found_[i]});
    if (found_[i] && kPackageSymbols[i].since > abi_version_) {
      found_[i] = false;
      ignored_[i] = true;
      symbols_.back().ignored = true;
      slots[i] = nullptr;
    }
  }
  fn_.run_single_threaded = reinterpret_cast<aotrun_pkg_container_run_single_threaded_fn>(slots[kSymRunSingleThreaded]);
}

std::string PackageLibrary::ignored_reason(size_t symbol_index) const {
  if (!ignored_[symbol_index]) return "";
  // "run_single_threaded" for aotrun_pkg_container_run_single_threaded.
  std::string short_name = kPackageSymbols[symbol_index].name;
  for (const char* prefix : {"aotrun_pkg_container_", "aotrun_pkg_"}) {
    if (short_name.rfind(prefix, 0) == 0) {
      short_name.erase(0, std::strlen(prefix));
      break;
    }
  }
  return "exported, but the package declares ABI " + abi_version_string(abi_version_) + " and " + short_name + " is " +
         abi_version_string(kPackageSymbols[symbol_index].since) + ": not used";
}

PackageLibrary::PackageLibrary(BoundLibrary bound)
    : path_(bound.path), abi_version_(bound.abi_version), fn_(bound.fn), symbols_(bound.symbols) {
  if (bound.create == nullptr || fn_.destroy == nullptr || fn_.run == nullptr) {
    fail(Code::Internal, "bridge for '" + path_ + "' lacks create, destroy or run");
  }
  const void* present[kSymCount] = {
      reinterpret_cast<const void*>(fn_.abi_version),  reinterpret_cast<const void*>(fn_.get_last_error),
      reinterpret_cast<const void*>(bound.create),     reinterpret_cast<const void*>(fn_.destroy),
      reinterpret_cast<const void*>(fn_.num_inputs),   reinterpret_cast<const void*>(fn_.num_outputs),
      reinterpret_cast<const void*>(fn_.input_spec),   reinterpret_cast<const void*>(fn_.output_spec),
      reinterpret_cast<const void*>(fn_.output_shapes), reinterpret_cast<const void*>(fn_.run),
      reinterpret_cast<const void*>(fn_.run_single_threaded)};
  for (size_t i = 0; i < kSymCount; ++i) found_[i] = present[i] != nullptr;
  bound_ = std::make_unique<BoundLibrary>(std::move(bound));
}

PackageLibrary::~PackageLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

int32_t PackageLibrary::create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const {
  return bound_ ? bound_->create(bound_->binding.get(), out, args) : fn_.create(out, args);
}

std::string PackageLibrary::label() const { return bound_ ? bound_->label : "ABI " + abi_version_string(abi_version_); }

std::string PackageLibrary::run_symbol() const { return bound_ ? bound_->run_symbol : AOTRUN_PKG_SYM_RUN; }

std::string PackageLibrary::run_single_threaded_symbol() const {
  return bound_ ? bound_->run_single_threaded_symbol : AOTRUN_PKG_SYM_RUN_SINGLE_THREADED;
}

std::string PackageLibrary::last_error() const {
  const char* e = nullptr;
  if (fn_.get_last_error != nullptr) {
    try {
      e = fn_.get_last_error();
    } catch (...) {
      return "(the package gave no message: its " AOTRUN_PKG_SYM_GET_LAST_ERROR " threw an exception)";
    }
  }
  return e != nullptr && *e != '\0' ? std::string(e) : std::string("(the package gave no message)");
}

}  // namespace aotrun
