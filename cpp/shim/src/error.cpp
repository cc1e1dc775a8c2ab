#include "error.hpp"

#include "aotrun_shim/device_layer.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace aotrun::shim {
namespace {
thread_local std::string t_last_error;

bool quiet() {
  static const bool q = std::getenv("AOTRUN_SHIM_QUIET") != nullptr;
  return q;
}
}  // namespace

void set_last_error(const std::string& msg) {
  t_last_error = msg;
  if (!quiet()) std::fprintf(stderr, "aotrun-shim: %s\n", msg.c_str());
}

void clear_last_error() { t_last_error.clear(); }

const char* last_error() { return t_last_error.c_str(); }

}  // namespace aotrun::shim

extern "C" {

const char* aotrun_shim_last_error(void) { return aotrun::shim::last_error(); }

#define AOTRUN_SHIM_STR_(x) #x
#define AOTRUN_SHIM_STR(x) AOTRUN_SHIM_STR_(x)
const char* aotrun_shim_version(void) {
  return "aotrun-shim " AOTRUN_SHIM_STR(AOTRUN_SHIM_VERSION_MAJOR) "." AOTRUN_SHIM_STR(
      AOTRUN_SHIM_VERSION_MINOR) "." AOTRUN_SHIM_STR(AOTRUN_SHIM_VERSION_PATCH);
}

void aotrun_shim_set_last_error(const char* message) {
  if (message == nullptr || *message == '\0') {
    aotrun::shim::clear_last_error();
  } else {
    aotrun::shim::set_last_error(message);
  }
}

// A failed check inside generated code. libtorch throws c10::Error here and
// so does the shim (std::runtime_error): on the calling thread the model's
// entry point catches it and reports a failed run. Inside an OpenMP region
// (omp_get_level() > 0, also for a team of one) nothing can leave: an
// exception would reach std::terminate, and returning would let the kernel
// go on with the value it just found out of bounds. The shim ends the
// process there itself, saying which check failed and why it cannot be an
// error. aotrun checks the values such checks test before a run where the
// model's sources tie them to an input (issue #29; docs/PT2.md, "Bad requests").
void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line, const char* msg) {
  if (cond) return;
  std::string m = msg != nullptr ? msg : "check failed";
  m += " (";
  m += func != nullptr ? func : "?";
  m += " at ";
  m += file != nullptr ? file : "?";
  m += ":" + std::to_string(line) + ")";
  if (omp_get_level() > 0) {
    std::fprintf(stderr,
                 "aotrun-shim: fatal: a model check failed inside its parallel code: %s. No error can leave an "
                 "OpenMP region and the kernel would go on out of bounds, so the process ends here (docs/PT2.md, "
                 "\"Bad requests\").\n",
                 m.c_str());
    std::fflush(stderr);
    std::abort();
  }
  aotrun::shim::set_last_error("aoti_torch_check: " + m);
  throw std::runtime_error(m);
}

void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg) {
  std::fprintf(stderr, "aotrun-shim: warning: %s (%s at %s:%u)\n", msg != nullptr ? msg : "",
               func != nullptr ? func : "?", file != nullptr ? file : "?", line);
}

}  // extern "C"
