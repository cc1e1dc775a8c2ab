// A dlopen'd package library with its entry points resolved and probed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "loader/symbols.hpp"

namespace aotrun {

struct PackageFunctions {
  aotrun_pkg_abi_version_fn abi_version = nullptr;
  aotrun_pkg_get_last_error_fn get_last_error = nullptr;
  aotrun_pkg_container_create_fn create = nullptr;
  aotrun_pkg_container_destroy_fn destroy = nullptr;
  aotrun_pkg_container_get_num_inputs_fn num_inputs = nullptr;
  aotrun_pkg_container_get_num_outputs_fn num_outputs = nullptr;
  aotrun_pkg_container_get_input_spec_fn input_spec = nullptr;
  aotrun_pkg_container_get_output_spec_fn output_spec = nullptr;
  aotrun_pkg_container_get_output_shapes_fn output_shapes = nullptr;
  aotrun_pkg_container_run_fn run = nullptr;
  aotrun_pkg_container_run_single_threaded_fn run_single_threaded = nullptr;  // 1.1, probed
};

// One entry point of a package as the loader probed it: what `aotrun
// inspect` and aotrun_package_get_symbol report.
struct SymbolReport {
  std::string name;
  bool required = false;
  uint32_t since = 0;  // (major << 16) | minor of the ABI (or torch release) that added it
  bool found = false;  // the library exports it
  // Exported, but newer than the ABI the package declares, so never called.
  bool ignored = false;
};

// The package ABI implemented inside libaotrun over another package format
// (cpp/pt2: PyTorch AOTInductor). Only `create` needs the bridge's state,
// passed as `binding`; every other function reaches it through the container
// that create returned.
struct BoundLibrary {
  using CreateFn = int32_t (*)(void* binding, aotrun_pkg_container** out, const aotrun_pkg_create_args* args);
  std::string path;              // the library the bridge loaded
  std::string label;             // e.g. "AOTInductor .pt2", used in messages
  uint32_t abi_version = 0;      // the package ABI the bridge implements
  PackageFunctions fn;           // fn.create unused; run_single_threaded NULL if absent
  CreateFn create = nullptr;
  std::shared_ptr<void> binding; // kept alive as long as the library
  std::vector<SymbolReport> symbols;
  std::string run_symbol, run_single_threaded_symbol;  // foreign names, for messages
};

class PackageLibrary {
 public:
  // Checks that `path` is an ELF shared object, dlopens it (RTLD_NOW |
  // RTLD_LOCAL), resolves every required symbol (all missing ones are named in
  // one MISSING_SYMBOL error), probes the optional ones and refuses another
  // ABI major (ABI_MISMATCH). `expected_abi` (0 = none) is the manifest's
  // claim, which must agree with what the library reports.
  // `fd` >= 0 is an open descriptor of `path` used for the ELF check.
  PackageLibrary(const std::string& path, uint32_t expected_abi, int fd = -1);
  explicit PackageLibrary(BoundLibrary bound);
  ~PackageLibrary();
  PackageLibrary(const PackageLibrary&) = delete;
  PackageLibrary& operator=(const PackageLibrary&) = delete;

  const PackageFunctions& fn() const { return fn_; }
  // Creates a container: the package's own create, or the bridge's.
  int32_t create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const;
  uint32_t abi_version() const { return abi_version_; }
  // Whether the package ABI entry point `symbol_index` is usable: exported
  // and not newer than the ABI the package declares.
  bool found(size_t symbol_index) const { return found_[symbol_index]; }
  // Whether it is exported but ignored for being newer than the declared ABI.
  bool ignored(size_t symbol_index) const { return ignored_[symbol_index]; }
  // Why an ignored entry point is not used ("exported, but the package
  // declares ABI 1.0 and run_single_threaded is 1.1: not used"); "" if it
  // is not ignored.
  std::string ignored_reason(size_t symbol_index) const;
  // The entry points as the loader probed them (the foreign ones for a bridge).
  const std::vector<SymbolReport>& symbols() const { return symbols_; }
  const std::string& path() const { return path_; }
  bool bridged() const { return bound_ != nullptr; }
  // "ABI 1.1" for aotrun packages, the bridge's label otherwise.
  std::string label() const;
  // Names of the two run entry points in this package's own vocabulary.
  std::string run_symbol() const;
  std::string run_single_threaded_symbol() const;

  // The package's message for its last failure on this thread, never NULL.
  std::string last_error() const;

 private:
  std::string path_;
  void* handle_ = nullptr;
  uint32_t abi_version_ = 0;
  PackageFunctions fn_;
  std::array<bool, kSymCount> found_{};    // usable
  std::array<bool, kSymCount> ignored_{};  // exported, newer than the declared ABI
  std::vector<SymbolReport> symbols_;
  std::unique_ptr<BoundLibrary> bound_;
};

// "1.1" for (1 << 16) | 1.
std::string abi_version_string(uint32_t v);

}  // namespace aotrun
