// CUDA's stream-capture rules, reproduced for CPU streams so that capture
// logic (and its failure modes) can be tested on machines without a GPU.
//
// While a capture is active, "unsafe" calls — event query/synchronize and
// stream synchronize — are prohibited:
//   - global mode: on every thread, while any global-mode capture is active;
//   - thread-local mode: on the thread that began the capture;
//   - relaxed mode: never.
// A prohibited call fails with CAPTURE_UNSUPPORTED (cudaErrorStreamCaptureUnsupported,
// "operation not permitted when stream is capturing") and invalidates the
// captures it violated; ending such a capture then fails with
// CAPTURE_INVALIDATED.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "util/error.hpp"

namespace aotrun::cpu {

enum class CaptureMode { Global = 0, ThreadLocal = 1, Relaxed = 2 };

// Registered by Stream::begin_capture, removed by end_capture.
struct CaptureRecord {
  CaptureMode mode = CaptureMode::Global;
  std::thread::id owner;
  std::atomic<bool> invalidated{false};
  std::string invalidated_by;  // written under the registry lock
};

namespace capture_rules {

void register_capture(CaptureRecord* rec);
void unregister_capture(CaptureRecord* rec);

// Called at the start of every unsafe operation. `op` names it for messages.
// Returns Ok, or CAPTURE_UNSUPPORTED after invalidating the violated captures.
Status check_unsafe(const char* op);

// The message of the last prohibited call on this thread ("" if none): a
// package that gets 900 back passes only the number up, so the runner adds
// this text to its error.
const std::string& last_violation();

// Message of the error, shared with CUDA's wording.
constexpr const char* kUnsupportedMessage = "operation not permitted when stream is capturing";

}  // namespace capture_rules
}  // namespace aotrun::cpu
