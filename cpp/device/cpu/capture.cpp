#include "device/cpu/capture.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace aotrun::cpu::capture_rules {
namespace {

std::mutex g_mu;
std::vector<CaptureRecord*> g_active;  // guarded by g_mu
uint64_t g_next_id = 1;                // guarded by g_mu
std::atomic<int> g_global_count{0};    // active global-mode captures, any thread
thread_local int t_strict_count = 0;   // non-relaxed captures begun on this thread
thread_local std::string t_last_violation;

}  // namespace

void register_capture(CaptureRecord* rec) {
  std::lock_guard<std::mutex> lock(g_mu);
  rec->id = g_next_id++;
  g_active.push_back(rec);
  if (rec->mode == CaptureMode::Global) g_global_count.fetch_add(1);
  if (rec->mode != CaptureMode::Relaxed && rec->owner == std::this_thread::get_id()) ++t_strict_count;
}

void unregister_capture(CaptureRecord* rec) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_active.erase(std::remove(g_active.begin(), g_active.end(), rec), g_active.end());
  if (rec->mode == CaptureMode::Global) g_global_count.fetch_sub(1);
  if (rec->mode != CaptureMode::Relaxed && rec->owner == std::this_thread::get_id() && t_strict_count > 0) {
    --t_strict_count;
  }
}

Status check_unsafe(const char* op) {
  // Fast path: no capture that could prohibit this call.
  if (t_strict_count == 0 && g_global_count.load(std::memory_order_acquire) == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(g_mu);
  const auto self = std::this_thread::get_id();
  bool violated = false;
  for (CaptureRecord* rec : g_active) {
    bool prohibits = rec->mode == CaptureMode::Global || (rec->mode == CaptureMode::ThreadLocal && rec->owner == self);
    if (!prohibits) continue;
    violated = true;
    if (!rec->invalidated.exchange(true)) rec->invalidated_by = op;
  }
  if (!violated) return Status::Ok();
  t_last_violation = std::string(kUnsupportedMessage) + " (" + op + ")";
  return Status{Code::CaptureUnsupported, t_last_violation};
}

Status captured_event(const char* op, uint64_t capture_id) {
  bool open = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (CaptureRecord* rec : g_active) {
      if (rec->id != capture_id) continue;
      open = true;
      if (!rec->invalidated.exchange(true)) rec->invalidated_by = op;
    }
  }
  if (!open) {
    return Status{Code::InvalidArgument, std::string(op) +
                                             ": the event was last recorded in a capture that has ended; "
                                             "record it again outside a capture first"};
  }
  t_last_violation = std::string(kCapturedEventMessage) + " (" + op + ")";
  return Status{Code::CaptureUnsupported, t_last_violation};
}

const std::string& last_violation() { return t_last_violation; }

}  // namespace aotrun::cpu::capture_rules
