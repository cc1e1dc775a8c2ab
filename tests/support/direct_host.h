/*
 * direct_host — a minimal, inline implementation of the package host services
 * (aotrun_pkg_host), for SDK unit tests and as the "direct call" floor of the
 * benchmarks.
 *
 * Behaviour:
 *   - launch runs fn(ctx) at once on the calling thread, then destroy(ctx).
 *     If fn fails, its status and the package's last-error message (when a
 *     get_last_error function was set) are stored as the host's "stream error"
 *     (first one wins until taken), like a stream recording an async failure;
 *     launch itself still returns AOTRUN_PKG_OK (the work was enqueued).
 *   - events: create/destroy are malloc/free; record stores a flag; query and
 *     synchronize return AOTRUN_PKG_OK (work is always complete).
 *   - alloc is aligned_alloc(256), free is free(); streams are ignored.
 *   - no capture: stream_is_capturing reports 0.
 *   - fault injection: a nonzero status in fail_event_query / fail_event_sync /
 *     fail_launch / fail_alloc makes that call return it (e.g. 900 to stand in
 *     for "not permitted while capturing").
 *   - counters for tests (atomics: any thread may call the services).
 * Threads: the services may be called from any thread. Configure the fields
 * before handing the table to a package; read counters any time.
 */
#ifndef AOTRUN_TEST_DIRECT_HOST_H_
#define AOTRUN_TEST_DIRECT_HOST_H_

#include <stdint.h>

#include <aotrun/package_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aotrun_test_direct_host aotrun_test_direct_host;

/* Creates a host; free with aotrun_test_direct_host_free. NULL on OOM. */
aotrun_test_direct_host* aotrun_test_direct_host_new(void);
void aotrun_test_direct_host_free(aotrun_test_direct_host* h);

/* The services table to pass in aotrun_pkg_create_args.host. Owned by h. */
const aotrun_pkg_host* aotrun_test_direct_host_services(aotrun_test_direct_host* h);

/* Messages at or below `level` go to stderr (default AOTRUN_PKG_LOG_WARN; -1 = none). */
void aotrun_test_direct_host_set_log_level(aotrun_test_direct_host* h, int32_t level);
/* Lets the host read the package's message when launched work fails. */
void aotrun_test_direct_host_set_last_error_fn(aotrun_test_direct_host* h, aotrun_pkg_get_last_error_fn fn);

/* Fault injection: 0 = behave normally. */
void aotrun_test_direct_host_fail_event_query(aotrun_test_direct_host* h, int32_t status);
void aotrun_test_direct_host_fail_event_sync(aotrun_test_direct_host* h, int32_t status);
void aotrun_test_direct_host_fail_launch(aotrun_test_direct_host* h, int32_t status);
void aotrun_test_direct_host_fail_alloc(aotrun_test_direct_host* h, int32_t status);

/* Takes (and clears) the first error recorded by launched work; returns its
 * status (0 if none) and copies its message into buf (may be NULL). */
int32_t aotrun_test_direct_host_take_stream_error(aotrun_test_direct_host* h, char* buf, size_t buf_size);

typedef struct aotrun_test_direct_host_counters {
  int64_t launches;        /* successful launches */
  int64_t launch_failures; /* launched fns that returned nonzero */
  int64_t allocs;
  int64_t frees;
  int64_t events_live; /* created - destroyed */
  int64_t event_records;
  int64_t event_queries;
  int64_t event_syncs;
  int64_t log_messages;
} aotrun_test_direct_host_counters;

void aotrun_test_direct_host_counters_get(aotrun_test_direct_host* h, aotrun_test_direct_host_counters* out);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_TEST_DIRECT_HOST_H_ */
