/* Inline host services for tests and benchmarks; see direct_host.h. */
#include "direct_host.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

struct aotrun_test_direct_host {
  aotrun_pkg_host table;
  _Atomic int32_t log_level;
  aotrun_pkg_get_last_error_fn last_error_fn;
  _Atomic int32_t fail_event_query;
  _Atomic int32_t fail_event_sync;
  _Atomic int32_t fail_launch;
  _Atomic int32_t fail_alloc;

  pthread_mutex_t error_mutex; /* guards stream_status / stream_message */
  int32_t stream_status;
  char stream_message[1024];

  _Atomic int64_t launches, launch_failures, allocs, frees, events_live, event_records, event_queries, event_syncs,
      log_messages;
};

typedef struct direct_event {
  _Atomic int recorded;
} direct_event;

static aotrun_test_direct_host* self(void* ctx) { return (aotrun_test_direct_host*)ctx; }

static int32_t dh_log_enabled(void* ctx, int32_t level) { return level <= atomic_load(&self(ctx)->log_level); }

static void dh_log(void* ctx, int32_t level, const char* message) {
  aotrun_test_direct_host* h = self(ctx);
  atomic_fetch_add(&h->log_messages, 1);
  if (level <= atomic_load(&h->log_level)) {
    fprintf(stderr, "direct_host: [%d] %s\n", (int)level, message);
  }
}

static int32_t dh_alloc(void* ctx, size_t bytes, aotrun_pkg_stream stream, void** out) {
  aotrun_test_direct_host* h = self(ctx);
  (void)stream;
  int32_t injected = atomic_load(&h->fail_alloc);
  if (injected) return injected;
  if (out == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  size_t rounded = (bytes + 255u) & ~(size_t)255u;
  void* p = aligned_alloc(256, rounded ? rounded : 256);
  if (p == NULL) return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
  atomic_fetch_add(&h->allocs, 1);
  *out = p;
  return AOTRUN_PKG_OK;
}

static int32_t dh_free(void* ctx, void* ptr, aotrun_pkg_stream stream) {
  (void)stream;
  if (ptr != NULL) atomic_fetch_add(&self(ctx)->frees, 1);
  free(ptr);
  return AOTRUN_PKG_OK;
}

static void record_stream_error(aotrun_test_direct_host* h, int32_t status) {
  pthread_mutex_lock(&h->error_mutex);
  if (h->stream_status == AOTRUN_PKG_OK) {
    h->stream_status = status;
    const char* msg = h->last_error_fn ? h->last_error_fn() : "";
    snprintf(h->stream_message, sizeof(h->stream_message), "%s", msg ? msg : "");
  }
  pthread_mutex_unlock(&h->error_mutex);
}

static int32_t dh_launch(void* ctx, aotrun_pkg_stream stream, aotrun_pkg_host_fn fn, void* fn_ctx,
                         aotrun_pkg_ctx_destroy_fn destroy) {
  aotrun_test_direct_host* h = self(ctx);
  (void)stream;
  /* The host owns fn_ctx whatever happens (package_abi.h): refused launches
   * release it too. */
  int32_t injected = atomic_load(&h->fail_launch);
  if (injected || fn == NULL) {
    if (destroy) destroy(fn_ctx);
    return injected ? injected : AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  }
  atomic_fetch_add(&h->launches, 1);
  int32_t status = fn(fn_ctx);
  if (status != AOTRUN_PKG_OK) {
    atomic_fetch_add(&h->launch_failures, 1);
    record_stream_error(h, status);
  }
  if (destroy) destroy(fn_ctx);
  return AOTRUN_PKG_OK;
}

static int32_t dh_event_create(void* ctx, aotrun_pkg_event* out) {
  if (out == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  direct_event* e = calloc(1, sizeof(direct_event));
  if (e == NULL) return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
  atomic_fetch_add(&self(ctx)->events_live, 1);
  *out = e;
  return AOTRUN_PKG_OK;
}

static int32_t dh_event_destroy(void* ctx, aotrun_pkg_event event) {
  if (event == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  atomic_fetch_sub(&self(ctx)->events_live, 1);
  free(event);
  return AOTRUN_PKG_OK;
}

static int32_t dh_event_record(void* ctx, aotrun_pkg_event event, aotrun_pkg_stream stream) {
  (void)stream;
  if (event == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  atomic_store(&((direct_event*)event)->recorded, 1);
  atomic_fetch_add(&self(ctx)->event_records, 1);
  return AOTRUN_PKG_OK;
}

static int32_t dh_event_query(void* ctx, aotrun_pkg_event event) {
  aotrun_test_direct_host* h = self(ctx);
  atomic_fetch_add(&h->event_queries, 1);
  if (event == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  int32_t injected = atomic_load(&h->fail_event_query);
  return injected ? injected : AOTRUN_PKG_OK;
}

static int32_t dh_event_synchronize(void* ctx, aotrun_pkg_event event) {
  aotrun_test_direct_host* h = self(ctx);
  atomic_fetch_add(&h->event_syncs, 1);
  if (event == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  int32_t injected = atomic_load(&h->fail_event_sync);
  return injected ? injected : AOTRUN_PKG_OK;
}

static int32_t dh_stream_synchronize(void* ctx, aotrun_pkg_stream stream) {
  (void)ctx;
  (void)stream;
  return AOTRUN_PKG_OK;
}

static int32_t dh_stream_is_capturing(void* ctx, aotrun_pkg_stream stream, int32_t* out) {
  (void)ctx;
  (void)stream;
  if (out == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  *out = 0;
  return AOTRUN_PKG_OK;
}

aotrun_test_direct_host* aotrun_test_direct_host_new(void) {
  aotrun_test_direct_host* h = calloc(1, sizeof(*h));
  if (h == NULL) return NULL;
  pthread_mutex_init(&h->error_mutex, NULL);
  atomic_store(&h->log_level, AOTRUN_PKG_LOG_WARN);
  h->table.struct_size = sizeof(aotrun_pkg_host);
  h->table.host_ctx = h;
  h->table.log_enabled = dh_log_enabled;
  h->table.log = dh_log;
  h->table.alloc = dh_alloc;
  h->table.free = dh_free;
  h->table.launch = dh_launch;
  h->table.event_create = dh_event_create;
  h->table.event_destroy = dh_event_destroy;
  h->table.event_record = dh_event_record;
  h->table.event_query = dh_event_query;
  h->table.event_synchronize = dh_event_synchronize;
  h->table.stream_synchronize = dh_stream_synchronize;
  h->table.stream_is_capturing = dh_stream_is_capturing;
  return h;
}

void aotrun_test_direct_host_free(aotrun_test_direct_host* h) {
  if (h == NULL) return;
  pthread_mutex_destroy(&h->error_mutex);
  free(h);
}

const aotrun_pkg_host* aotrun_test_direct_host_services(aotrun_test_direct_host* h) { return &h->table; }

void aotrun_test_direct_host_set_log_level(aotrun_test_direct_host* h, int32_t level) {
  atomic_store(&h->log_level, level);
}

void aotrun_test_direct_host_set_last_error_fn(aotrun_test_direct_host* h, aotrun_pkg_get_last_error_fn fn) {
  h->last_error_fn = fn;
}

void aotrun_test_direct_host_fail_event_query(aotrun_test_direct_host* h, int32_t status) {
  atomic_store(&h->fail_event_query, status);
}
void aotrun_test_direct_host_fail_event_sync(aotrun_test_direct_host* h, int32_t status) {
  atomic_store(&h->fail_event_sync, status);
}
void aotrun_test_direct_host_fail_launch(aotrun_test_direct_host* h, int32_t status) {
  atomic_store(&h->fail_launch, status);
}
void aotrun_test_direct_host_fail_alloc(aotrun_test_direct_host* h, int32_t status) {
  atomic_store(&h->fail_alloc, status);
}

int32_t aotrun_test_direct_host_take_stream_error(aotrun_test_direct_host* h, char* buf, size_t buf_size) {
  pthread_mutex_lock(&h->error_mutex);
  int32_t status = h->stream_status;
  if (buf != NULL && buf_size > 0) snprintf(buf, buf_size, "%s", h->stream_message);
  h->stream_status = AOTRUN_PKG_OK;
  h->stream_message[0] = '\0';
  pthread_mutex_unlock(&h->error_mutex);
  return status;
}

void aotrun_test_direct_host_counters_get(aotrun_test_direct_host* h, aotrun_test_direct_host_counters* out) {
  out->launches = atomic_load(&h->launches);
  out->launch_failures = atomic_load(&h->launch_failures);
  out->allocs = atomic_load(&h->allocs);
  out->frees = atomic_load(&h->frees);
  out->events_live = atomic_load(&h->events_live);
  out->event_records = atomic_load(&h->event_records);
  out->event_queries = atomic_load(&h->event_queries);
  out->event_syncs = atomic_load(&h->event_syncs);
  out->log_messages = atomic_load(&h->log_messages);
}
