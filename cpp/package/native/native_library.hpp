// An aotrun package library (a shared object implementing package_abi.h),
// checked, dlopen'd and probed: the PackageCode of the two aotrun package
// kinds (a bare .so and a package directory).
#pragma once

#include <string>

#include "base/dl_handle.hpp"
#include "package/package_code.hpp"

namespace aotrun {

class NativeLibrary final : public PackageCode {
 public:
  // Checks that `path` is an ELF shared object for this machine
  // (elf_check.hpp), dlopens it (RTLD_NOW | RTLD_LOCAL), resolves every
  // required symbol (all missing ones are named in one MISSING_SYMBOL
  // error), probes the optional ones and refuses another ABI major
  // (ABI_MISMATCH). `expected_abi` (0 = none) is the manifest's claim, which
  // must agree with what the library reports (BAD_PACKAGE). `fd` >= 0 is an
  // open descriptor of `path` for the ELF check (it stays the caller's).
  NativeLibrary(const std::string& path, uint32_t expected_abi, int fd = -1);

  int32_t create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const override;

 private:
  DlHandle handle_;
  aotrun_pkg_container_create_fn create_ = nullptr;
};

}  // namespace aotrun
