#include "log/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace aotrun {
namespace {

int level_from_env() {
  const char* v = std::getenv("AOTRUN_LOG");
  if (v == nullptr || *v == '\0') return static_cast<int>(LogLevel::Warn);
  if (!std::strcmp(v, "error")) return 0;
  if (!std::strcmp(v, "warn") || !std::strcmp(v, "warning")) return 1;
  if (!std::strcmp(v, "info")) return 2;
  if (!std::strcmp(v, "debug")) return 3;
  if (!std::strcmp(v, "off") || !std::strcmp(v, "none")) return -1;
  std::fprintf(stderr, "aotrun: warn: AOTRUN_LOG='%s' is not one of error|warn|info|debug|off; using warn\n", v);
  return 1;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
    default: return "log";
  }
}

// Held while a sink runs, so set_log_sink() returning guarantees the old sink
// is no longer executing. Messages are rare (warnings), so a mutex is fine.
std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
LogSink g_sink = nullptr;
void* g_sink_user = nullptr;

}  // namespace

namespace detail {
std::atomic<int> g_log_level{level_from_env()};
}

void set_log_level(LogLevel level) { detail::g_log_level.store(static_cast<int>(level)); }
LogLevel get_log_level() { return static_cast<LogLevel>(detail::g_log_level.load()); }

void set_log_sink(LogSink sink, void* user) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  g_sink = sink;
  g_sink_user = user;
}

void log_emit(LogLevel level, const std::string& message) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (g_sink != nullptr) {
    g_sink(g_sink_user, static_cast<int>(level), message.c_str());
  } else {
    std::fprintf(stderr, "aotrun: %s: %s\n", level_name(level), message.c_str());
  }
}

}  // namespace aotrun
