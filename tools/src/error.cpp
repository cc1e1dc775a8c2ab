#include "error.hpp"

#include <memory>

namespace aotrun::cli {

void check(aotrun_status* status, const std::string& context) {
  if (status == nullptr) return;
  std::unique_ptr<aotrun_status, decltype(&aotrun_status_free)> owned(status, aotrun_status_free);
  const aotrun_code code = aotrun_status_code(status);
  std::string message = aotrun_status_message(status);
  if (!context.empty()) message = context + ": " + message;
  throw Failure(code, message);
}

}  // namespace aotrun::cli
