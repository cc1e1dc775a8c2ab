// The C++ core's enums that the C layer casts to and from the C API's enums
// share their numbers; each pair is pinned here, so a renumbering on either
// side fails to compile instead of mistranslating codes.
#include <aotrun/aotrun.h>
#include <aotrun/package_abi.h>

#include "device/cpu/capture.hpp"
#include "base/log.hpp"
#include "package/package.hpp"
#include "base/error.hpp"

namespace {

using aotrun::Code;
template <typename A, typename B>
constexpr bool same(A a, B b) {
  return static_cast<long long>(a) == static_cast<long long>(b);
}

static_assert(same(Code::Ok, AOTRUN_OK), "aotrun_code");
static_assert(same(Code::InvalidArgument, AOTRUN_ERR_INVALID_ARGUMENT), "aotrun_code");
static_assert(same(Code::NotFound, AOTRUN_ERR_NOT_FOUND), "aotrun_code");
static_assert(same(Code::LoadFailed, AOTRUN_ERR_LOAD_FAILED), "aotrun_code");
static_assert(same(Code::AbiMismatch, AOTRUN_ERR_ABI_MISMATCH), "aotrun_code");
static_assert(same(Code::MissingSymbol, AOTRUN_ERR_MISSING_SYMBOL), "aotrun_code");
static_assert(same(Code::Integrity, AOTRUN_ERR_INTEGRITY), "aotrun_code");
static_assert(same(Code::BadPackage, AOTRUN_ERR_BAD_PACKAGE), "aotrun_code");
static_assert(same(Code::Unsupported, AOTRUN_ERR_UNSUPPORTED), "aotrun_code");
static_assert(same(Code::Package, AOTRUN_ERR_PACKAGE), "aotrun_code");
static_assert(same(Code::OutOfMemory, AOTRUN_ERR_OUT_OF_MEMORY), "aotrun_code");
static_assert(same(Code::WouldBlock, AOTRUN_ERR_WOULD_BLOCK), "aotrun_code");
static_assert(same(Code::Timeout, AOTRUN_ERR_TIMEOUT), "aotrun_code");
static_assert(same(Code::CaptureUnsupported, AOTRUN_ERR_CAPTURE_UNSUPPORTED), "aotrun_code");
static_assert(same(Code::CaptureInvalidated, AOTRUN_ERR_CAPTURE_INVALIDATED), "aotrun_code");
static_assert(same(Code::Device, AOTRUN_ERR_DEVICE), "aotrun_code");
static_assert(same(Code::Internal, AOTRUN_ERR_INTERNAL), "aotrun_code");

using aotrun::RunMode;
static_assert(same(RunMode::Threaded, AOTRUN_MODE_THREADED), "aotrun_mode");
static_assert(same(RunMode::SingleThreaded, AOTRUN_MODE_SINGLE_THREADED), "aotrun_mode");
static_assert(same(RunMode::Graph, AOTRUN_MODE_GRAPH), "aotrun_mode");

using aotrun::LogLevel;
static_assert(same(LogLevel::Off, AOTRUN_LOG_OFF), "aotrun_log_level");
static_assert(same(LogLevel::Error, AOTRUN_LOG_ERROR), "aotrun_log_level");
static_assert(same(LogLevel::Warn, AOTRUN_LOG_WARN), "aotrun_log_level");
static_assert(same(LogLevel::Info, AOTRUN_LOG_INFO), "aotrun_log_level");
static_assert(same(LogLevel::Debug, AOTRUN_LOG_DEBUG), "aotrun_log_level");

using aotrun::cpu::CaptureMode;
static_assert(same(CaptureMode::Global, AOTRUN_CAPTURE_GLOBAL), "aotrun_capture_mode");
static_assert(same(CaptureMode::ThreadLocal, AOTRUN_CAPTURE_THREAD_LOCAL), "aotrun_capture_mode");
static_assert(same(CaptureMode::Relaxed, AOTRUN_CAPTURE_RELAXED), "aotrun_capture_mode");

}  // namespace
