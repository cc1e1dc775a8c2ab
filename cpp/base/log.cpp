#include "base/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

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
struct Sink {
  LogSink fn = nullptr;
  void* user = nullptr;
  LogSinkRelease release = nullptr;
  void free() const {
    if (release != nullptr) release(user);
  }
};
Sink g_sink;  // guarded by sink_mutex()

// This thread is inside the sink (and so holds sink_mutex()). A sink that
// replaces itself must not wait for itself: the swap happens at once and the
// old sink's data is freed when it returns.
thread_local bool t_in_sink = false;
thread_local std::vector<Sink> t_retired;

void write_stderr(LogLevel level, const char* message) {
  std::fprintf(stderr, "aotrun: %s: %s\n", level_name(level), message);
}

}  // namespace

namespace detail {
std::atomic<int> g_log_level{level_from_env()};
}

void set_log_level(LogLevel level) { detail::g_log_level.store(static_cast<int>(level)); }
LogLevel get_log_level() { return static_cast<LogLevel>(detail::g_log_level.load()); }

void set_log_sink(LogSink sink, void* user, LogSinkRelease release) {
  const Sink next{sink, user, release};
  if (t_in_sink) {
    try {
      t_retired.push_back(g_sink);
    } catch (...) {
      // Out of memory: the old sink's data leaks rather than being freed
      // while it runs.
    }
    g_sink = next;
    return;
  }
  Sink old;
  {
    std::lock_guard<std::mutex> lock(sink_mutex());
    old = g_sink;
    g_sink = next;
  }
  old.free();
}

void log_emit(LogLevel level, const std::string& message) {
  if (t_in_sink) {
    write_stderr(level, message.c_str());
    return;
  }
  std::vector<Sink> retired;
  {
    std::lock_guard<std::mutex> lock(sink_mutex());
    if (g_sink.fn == nullptr) {
      write_stderr(level, message.c_str());
      return;
    }
    t_in_sink = true;
    try {
      g_sink.fn(g_sink.user, static_cast<int>(level), message.c_str());
    } catch (...) {
      // A C++ sink behind a C function pointer: never unwind into aotrun.
      write_stderr(LogLevel::Error, "the log callback threw an exception; aotrun ignored it");
    }
    t_in_sink = false;
    retired.swap(t_retired);
  }
  for (const Sink& s : retired) s.free();
}

}  // namespace aotrun
