// Process-wide logging: a level (AOTRUN_LOG or aotrun_set_log_level) and a sink
// (the host program's callback, or stderr). Callers check log_enabled() before
// formatting, so a disabled level costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <string>

namespace aotrun {

enum class LogLevel : int { Off = -1, Error = 0, Warn = 1, Info = 2, Debug = 3 };

using LogSink = void (*)(void* user, int level, const char* message);

namespace detail {
extern std::atomic<int> g_log_level;
}

inline bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= detail::g_log_level.load(std::memory_order_relaxed);
}

void set_log_level(LogLevel level);
LogLevel get_log_level();
// NULL sink restores stderr. After return the previous sink is never called.
void set_log_sink(LogSink sink, void* user);
// Emits unconditionally (the caller checked log_enabled).
void log_emit(LogLevel level, const std::string& message);

inline void log(LogLevel level, const std::string& message) {
  if (log_enabled(level)) log_emit(level, message);
}

}  // namespace aotrun
