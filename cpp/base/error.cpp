#include "base/error.hpp"

namespace aotrun {

const char* code_name(Code code) noexcept {
  switch (code) {
    case Code::Ok: return "OK";
    case Code::InvalidArgument: return "INVALID_ARGUMENT";
    case Code::NotFound: return "NOT_FOUND";
    case Code::LoadFailed: return "LOAD_FAILED";
    case Code::AbiMismatch: return "ABI_MISMATCH";
    case Code::MissingSymbol: return "MISSING_SYMBOL";
    case Code::Integrity: return "INTEGRITY";
    case Code::BadPackage: return "BAD_PACKAGE";
    case Code::Unsupported: return "UNSUPPORTED";
    case Code::Package: return "PACKAGE";
    case Code::OutOfMemory: return "OUT_OF_MEMORY";
    case Code::WouldBlock: return "WOULD_BLOCK";
    case Code::Timeout: return "TIMEOUT";
    case Code::CaptureUnsupported: return "CAPTURE_UNSUPPORTED";
    case Code::CaptureInvalidated: return "CAPTURE_INVALIDATED";
    case Code::Device: return "DEVICE";
    case Code::Internal: return "INTERNAL";
  }
  return "UNKNOWN";
}

}  // namespace aotrun
