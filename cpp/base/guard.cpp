#include "base/guard.hpp"

namespace aotrun {

std::string package_last_error(aotrun_pkg_get_last_error_fn get_last_error) {
  const char* e = nullptr;
  if (get_last_error != nullptr) {
    try {
      e = get_last_error();
    } catch (...) {
      return "(the package gave no message: its " AOTRUN_PKG_SYM_GET_LAST_ERROR " threw an exception)";
    }
  }
  return e != nullptr && *e != '\0' ? std::string(e) : std::string("(the package gave no message)");
}

}  // namespace aotrun
