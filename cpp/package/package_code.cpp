#include "package/package_code.hpp"

namespace aotrun {

std::string abi_version_string(uint32_t v) {
  return std::to_string(AOTRUN_PKG_VERSION_MAJOR(v)) + "." + std::to_string(AOTRUN_PKG_VERSION_MINOR(v));
}

std::string PackageCode::last_error() const {
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
