#include "inline_host.hpp"

#include <cstdio>
#include <cstdlib>

namespace aotrun_bench {
namespace {

// Events never need a state of their own (work is complete when launch
// returns), but packages expect a non-NULL handle.
char g_event_token;

int32_t log_enabled(void*, int32_t level) { return level <= AOTRUN_PKG_LOG_WARN ? 1 : 0; }

void log(void*, int32_t level, const char* message) {
  if (level <= AOTRUN_PKG_LOG_WARN) std::fprintf(stderr, "package (level %d): %s\n", level, message);
}

int32_t alloc(void*, size_t bytes, aotrun_pkg_stream, void** out) {
  if (out == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  // aligned_alloc wants a multiple of the alignment; 0 bytes still gets a
  // unique pointer.
  const size_t rounded = bytes == 0 ? 256 : (bytes + 255) & ~static_cast<size_t>(255);
  *out = std::aligned_alloc(256, rounded);
  return *out != nullptr ? AOTRUN_PKG_OK : AOTRUN_PKG_ERR_OUT_OF_MEMORY;
}

int32_t release(void*, void* ptr, aotrun_pkg_stream) {
  std::free(ptr);
  return AOTRUN_PKG_OK;
}

// Inline stream: fn runs now and its failure is launch's result
// (package_abi.h); the context is released whatever happens.
int32_t launch(void*, aotrun_pkg_stream, aotrun_pkg_host_fn fn, void* ctx, aotrun_pkg_ctx_destroy_fn destroy) {
  const int32_t rc = fn != nullptr ? fn(ctx) : AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  if (destroy != nullptr) destroy(ctx);
  return rc;
}

int32_t event_create(void*, aotrun_pkg_event* out) {
  if (out == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  *out = &g_event_token;
  return AOTRUN_PKG_OK;
}

int32_t event_nop(void*, aotrun_pkg_event) { return AOTRUN_PKG_OK; }
int32_t event_record(void*, aotrun_pkg_event, aotrun_pkg_stream) { return AOTRUN_PKG_OK; }
int32_t stream_synchronize(void*, aotrun_pkg_stream) { return AOTRUN_PKG_OK; }

int32_t stream_is_capturing(void*, aotrun_pkg_stream, int32_t* out) {
  if (out == nullptr) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  *out = 0;
  return AOTRUN_PKG_OK;
}

const aotrun_pkg_host kHost = {
    sizeof(aotrun_pkg_host),
    nullptr,
    log_enabled,
    log,
    alloc,
    release,
    launch,
    event_create,
    event_nop,
    event_record,
    event_nop,
    event_nop,
    stream_synchronize,
    stream_is_capturing,
};

}  // namespace

const aotrun_pkg_host* inline_host() { return &kHost; }

}  // namespace aotrun_bench
