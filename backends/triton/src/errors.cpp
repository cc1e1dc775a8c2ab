#include "errors.hpp"

#include <new>

namespace aotrun_triton {

TRITONSERVER_Error_Code triton_code(aotrun_code code) noexcept {
  switch (code) {
    case AOTRUN_ERR_INVALID_ARGUMENT: return TRITONSERVER_ERROR_INVALID_ARG;
    case AOTRUN_ERR_NOT_FOUND: return TRITONSERVER_ERROR_NOT_FOUND;
    case AOTRUN_ERR_UNSUPPORTED:
    case AOTRUN_ERR_CAPTURE_UNSUPPORTED: return TRITONSERVER_ERROR_UNSUPPORTED;
    case AOTRUN_ERR_WOULD_BLOCK:
    case AOTRUN_ERR_TIMEOUT:
    case AOTRUN_ERR_OUT_OF_MEMORY: return TRITONSERVER_ERROR_UNAVAILABLE;
    default: return TRITONSERVER_ERROR_INTERNAL;
  }
}

std::string aotrun_message(const aotrun::cxx::Error& e) {
  return std::string("aotrun: ") + e.code_name() + ": " + e.what();
}

TRITONSERVER_Error* current_exception_to_triton() noexcept {
  try {
    throw;
  } catch (const BackendError& e) {
    return TRITONSERVER_ErrorNew(e.code(), e.what());
  } catch (const aotrun::cxx::Error& e) {
    return TRITONSERVER_ErrorNew(triton_code(e.code()), aotrun_message(e).c_str());
  } catch (const std::bad_alloc&) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE, "aotrun backend: out of memory");
  } catch (const std::exception& e) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, (std::string("aotrun backend: ") + e.what()).c_str());
  } catch (...) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "aotrun backend: unknown exception");
  }
}

void check(TRITONSERVER_Error* error, const char* what) {
  if (error == nullptr) return;
  std::string message = std::string(what) + ": " + TRITONSERVER_ErrorMessage(error);
  TRITONSERVER_Error_Code code = TRITONSERVER_ErrorCode(error);
  TRITONSERVER_ErrorDelete(error);
  throw BackendError(code, message);
}

void log(TRITONSERVER_LogLevel level, const std::string& message) noexcept {
  try {
    if (!TRITONSERVER_LogIsEnabled(level)) return;
    TRITONSERVER_Error* e = TRITONSERVER_LogMessage(level, __FILE__, __LINE__, ("aotrun: " + message).c_str());
    if (e != nullptr) TRITONSERVER_ErrorDelete(e);
  } catch (...) {
  }
}

}  // namespace aotrun_triton
