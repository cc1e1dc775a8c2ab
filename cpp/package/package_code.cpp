#include "package/package_code.hpp"

#include "base/guard.hpp"

namespace aotrun {

std::string abi_version_string(uint32_t v) {
  return std::to_string(AOTRUN_PKG_VERSION_MAJOR(v)) + "." + std::to_string(AOTRUN_PKG_VERSION_MINOR(v));
}

std::string PackageCode::last_error() const { return package_last_error(fn_.get_last_error); }

}  // namespace aotrun
