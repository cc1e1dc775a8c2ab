// Process-wide logging: a level (AOTRUN_LOG or aotrun_set_log_level) and a sink
// (the host program's callback, or stderr). Callers check log_enabled() before
// formatting, so a disabled level costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <string>

namespace aotrun {

enum class LogLevel : int { Off = -1, Error = 0, Warn = 1, Info = 2, Debug = 3 };

using LogSink = void (*)(void* user, int level, const char* message);
// Frees a sink's user data once the sink can no longer be called.
using LogSinkRelease = void (*)(void* user);

namespace detail {
extern std::atomic<int> g_log_level;
}

inline bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= detail::g_log_level.load(std::memory_order_relaxed);
}

void set_log_level(LogLevel level);
LogLevel get_log_level();
// NULL sink restores stderr. After return the previous sink is never called
// again, and `release` of the previous sink (if any) has run or, when this is
// called from inside that sink, runs as soon as the sink returns.
void set_log_sink(LogSink sink, void* user, LogSinkRelease release = nullptr);
// Emits unconditionally (the caller checked log_enabled). A message emitted
// from inside the sink itself (the sink called into aotrun) goes to stderr:
// sinks are never re-entered.
void log_emit(LogLevel level, const std::string& message);

inline void log(LogLevel level, const std::string& message) {
  if (log_enabled(level)) log_emit(level, message);
}

}  // namespace aotrun
