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
//
// An event recorded into a capturing stream is a captured event until it is
// recorded again outside a capture. As an H100 answered (CUDA 13.0, driver
// 580; tests/gpu/cuda_backend_test.cpp checks the same table):
//   - while its capture is open, querying or synchronizing it fails in every
//     mode and on every thread, before the rules above are consulted
//     (cudaErrorCapturedEvent, "operation not permitted on an event last
//     recorded in a capturing stream"; CAPTURE_UNSUPPORTED here), and
//     invalidates that capture;
//   - after its capture has ended, the event is invalid (cudaErrorInvalidValue;
//     INVALID_ARGUMENT here) until recorded again.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "base/error.hpp"

namespace aotrun::cpu {

enum class CaptureMode { Global = 0, ThreadLocal = 1, Relaxed = 2 };

// Registered by Stream::begin_capture, removed by end_capture.
struct CaptureRecord {
  uint64_t id = 0;  // set by register_capture; never reused
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

// A query or synchronize of an event last recorded in capture `capture_id`:
// CAPTURE_UNSUPPORTED after invalidating that capture while it is open,
// INVALID_ARGUMENT once it has ended.
Status captured_event(const char* op, uint64_t capture_id);

// The message of the last prohibited call on this thread ("" if none): a
// package that gets 900 back passes only the number up, so the runner adds
// this text to its error.
const std::string& last_violation();

// Message of the error, shared with CUDA's wording.
constexpr const char* kUnsupportedMessage = "operation not permitted when stream is capturing";
constexpr const char* kCapturedEventMessage = "operation not permitted on an event last recorded in a capturing stream";

}  // namespace capture_rules
}  // namespace aotrun::cpu
