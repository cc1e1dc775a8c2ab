#include <new>

#include "base/log.hpp"
#include "status.hpp"

namespace {

// The C callback takes aotrun_log_level; the core's sink takes int. Calling
// through a cast function pointer would be undefined, so a trampoline adapts.
struct CSink {
  aotrun_log_fn fn;
  void* user;
};

void trampoline(void* p, int level, const char* message) {
  auto* s = static_cast<CSink*>(p);
  s->fn(s->user, static_cast<aotrun_log_level>(level), message);
}

void release(void* p) { delete static_cast<CSink*>(p); }

}  // namespace

extern "C" {

void aotrun_set_log_callback(aotrun_log_fn fn, void* user_data) {
  CSink* next = fn != nullptr ? new (std::nothrow) CSink{fn, user_data} : nullptr;
  if (fn != nullptr && next == nullptr) {
    aotrun::log(aotrun::LogLevel::Error, "aotrun_set_log_callback: out of memory; the callback was not installed");
    return;
  }
  // The core frees the previous trampoline data once it cannot be running.
  aotrun::set_log_sink(next != nullptr ? &trampoline : nullptr, next, next != nullptr ? &release : nullptr);
}

void aotrun_set_log_level(aotrun_log_level level) {
  int v = aotrun::capi::enum_value(level);
  if (v < -1) v = -1;
  if (v > 3) v = 3;
  aotrun::set_log_level(static_cast<aotrun::LogLevel>(v));
}

aotrun_log_level aotrun_get_log_level(void) { return static_cast<aotrun_log_level>(aotrun::get_log_level()); }

}  // extern "C"
