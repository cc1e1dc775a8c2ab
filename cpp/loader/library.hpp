// A dlopen'd package library with its entry points resolved and probed.
#pragma once

#include <array>
#include <cstdint>
#include <string>

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

class PackageLibrary {
 public:
  // Checks that `path` is an ELF shared object, dlopens it (RTLD_NOW |
  // RTLD_LOCAL), resolves every required symbol (all missing ones are named in
  // one MISSING_SYMBOL error), probes the optional ones and refuses another
  // ABI major (ABI_MISMATCH). `expected_abi` (0 = none) is the manifest's
  // claim, which must agree with what the library reports.
  // `fd` >= 0 is an open descriptor of `path` used for the ELF check.
  PackageLibrary(const std::string& path, uint32_t expected_abi, int fd = -1);
  ~PackageLibrary();
  PackageLibrary(const PackageLibrary&) = delete;
  PackageLibrary& operator=(const PackageLibrary&) = delete;

  const PackageFunctions& fn() const { return fn_; }
  uint32_t abi_version() const { return abi_version_; }
  bool found(size_t symbol_index) const { return found_[symbol_index]; }
  const std::string& path() const { return path_; }

  // The package's message for its last failure on this thread, never NULL.
  std::string last_error() const;

 private:
  std::string path_;
  void* handle_ = nullptr;
  uint32_t abi_version_ = 0;
  PackageFunctions fn_;
  std::array<bool, kSymCount> found_{};
};

// "1.1" for (1 << 16) | 1.
std::string abi_version_string(uint32_t v);

}  // namespace aotrun
