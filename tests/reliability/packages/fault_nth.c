/* Test package "fault_nth" (fault_injection_tests): a plain C package that
 * does real work through the host services and fails its Nth fault point on
 * demand.
 *
 * Model: input x float32 [-1, 4], output y float32 [-1, 4],
 * y = x * scale + bias, with scale and bias float32 [1] constants from the
 * package's weights. A run takes a scratch buffer from the host's
 * stream-ordered `alloc`, launches the computation on the run's stream
 * (scratch = x * scale; y = scratch + bias) and frees the scratch on the
 * stream; the thread-safe `run` also waits on and records its instance's
 * host event, as a CUDA package would. Under capture all of this is
 * recorded, so graph replays reuse the captured scratch.
 *
 * Fault points, counted across threads from the moment the test arms them
 * (aotrun_test_fault_nth_arm): every entry point except abi_version,
 * get_last_error and container_destroy; every execution of the launched
 * function; and every host service request (alloc, launch, event_create,
 * event_record), which at its fault point is treated as if the host had
 * refused it. The Nth point fails with a message naming it; the others
 * behave. A failing entry point releases everything it took. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aotrun/package_abi.h>

#include "spec_fill.h"

#define EXPORT __attribute__((visibility("default")))

/* --- fault control ------------------------------------------------------ */

static atomic_llong g_fail_at; /* 0: disarmed */
static atomic_llong g_points;  /* fault points passed since armed */
static atomic_int g_fired;
static _Atomic(const char*) g_where; /* the point that failed */

static _Thread_local char g_message[160];

/* Test-only exports; the package export map lets aotrun_* through. */
EXPORT void aotrun_test_fault_nth_arm(long long n) {
  atomic_store(&g_fired, 0);
  atomic_store(&g_where, (const char*)NULL);
  atomic_store(&g_points, 0);
  atomic_store(&g_fail_at, n);
}
EXPORT long long aotrun_test_fault_nth_points(void) { return atomic_load(&g_points); }
EXPORT int aotrun_test_fault_nth_fired(void) { return atomic_load(&g_fired); }
EXPORT const char* aotrun_test_fault_nth_where(void) {
  const char* w = atomic_load(&g_where);
  return w != NULL ? w : "";
}

static int32_t failure(int32_t code, const char* what) {
  snprintf(g_message, sizeof(g_message), "fault_nth: %s", what);
  return code;
}

/* 1 when this fault point is the one to fail (and sets the message). */
static int fault_here(const char* where) {
  const long long at = atomic_load(&g_fail_at);
  if (at <= 0) return 0;
  const long long n = atomic_fetch_add(&g_points, 1) + 1;
  if (n != at) return 0;
  atomic_store(&g_where, where);
  atomic_store(&g_fired, 1);
  snprintf(g_message, sizeof(g_message), "fault_nth: injected failure at fault point %lld (%s)", n, where);
  return 1;
}

/* --- container ------------------------------------------------------------ */

typedef struct instance {
  aotrun_pkg_event done; /* recorded after each threaded run */
  int busy;
} instance;

struct aotrun_pkg_container {
  int32_t num_models;
  const aotrun_pkg_host* host;
  float scale, bias;
  instance* inst;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

static const int64_t k_shape[2] = {-1, 4};

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 1); }

EXPORT const char* aotrun_pkg_get_last_error(void) { return g_message; }

static const DLTensor* find_constant(const aotrun_pkg_create_args* args, const char* name) {
  for (size_t i = 0; i < args->num_constants; ++i) {
    const aotrun_pkg_constant* c = &args->constants[i];
    if (c->name != NULL && strcmp(c->name, name) == 0) return &c->tensor;
  }
  return NULL;
}

static int read_scalar(const aotrun_pkg_create_args* args, const char* name, float* out) {
  const DLTensor* t = find_constant(args, name);
  if (t == NULL || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->ndim != 1 || t->shape[0] != 1 ||
      t->data == NULL) {
    return 0;
  }
  memcpy(out, (const char*)t->data + t->byte_offset, sizeof(float));
  return 1;
}

static void release_container(aotrun_pkg_container* c) {
  if (c->inst != NULL) {
    for (int32_t i = 0; i < c->num_models; ++i) {
      if (c->inst[i].done != NULL) c->host->event_destroy(c->host->host_ctx, c->inst[i].done);
    }
    free(c->inst);
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (fault_here("container_create")) return AOTRUN_PKG_ERR_RUNTIME;
  if (out == NULL || args == NULL || args->host == NULL || args->num_models < 0) {
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "bad create arguments");
  }
  aotrun_pkg_container* c = (aotrun_pkg_container*)calloc(1, sizeof(*c));
  if (c == NULL) return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "calloc failed");
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->host = args->host;
  c->scale = 1.f;
  c->bias = 0.f;
  if ((!read_scalar(args, "scale", &c->scale) || !read_scalar(args, "bias", &c->bias)) && args->num_models > 0) {
    release_container(c);
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "constants 'scale' and 'bias' (float32 [1]) are required");
  }
  if (args->num_models > 0) {
    c->inst = (instance*)calloc((size_t)args->num_models, sizeof(instance));
    if (c->inst == NULL) {
      release_container(c);
      return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "calloc failed");
    }
    c->num_models = args->num_models;
    for (int32_t i = 0; i < c->num_models; ++i) {
      if (fault_here("host event_create")) {
        release_container(c);
        return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
      }
      int32_t rc = c->host->event_create(c->host->host_ctx, &c->inst[i].done);
      if (rc != AOTRUN_PKG_OK) {
        c->inst[i].done = NULL;
        release_container(c);
        return failure(rc, "host event_create failed");
      }
    }
  }
  *out = c;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {
  if (c != NULL) release_container(c);
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  if (fault_here("get_num_inputs")) return AOTRUN_PKG_ERR_RUNTIME;
  *out = 1;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  if (fault_here("get_num_outputs")) return AOTRUN_PKG_ERR_RUNTIME;
  *out = 1;
  return AOTRUN_PKG_OK;
}

static int32_t fill_spec(const char* name, aotrun_pkg_tensor_spec* out) { return fill_f32_spec(name, 2, k_shape, out); }

EXPORT int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  (void)c;
  if (fault_here("get_input_spec")) return AOTRUN_PKG_ERR_RUNTIME;
  if (index != 0 || out == NULL) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "bad input index");
  return fill_spec("x", out);
}

EXPORT int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index,
                                                    aotrun_pkg_tensor_spec* out) {
  (void)c;
  if (fault_here("get_output_spec")) return AOTRUN_PKG_ERR_RUNTIME;
  if (index != 0 || out == NULL) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "bad output index");
  return fill_spec("y", out);
}

EXPORT int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) {
  (void)c;
  if (fault_here("get_output_shapes")) return AOTRUN_PKG_ERR_RUNTIME;
  if (args == NULL || args->num_inputs != 1 || args->output_shapes_capacity < 2 || args->inputs[0].ndim != 2) {
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "bad shape query");
  }
  args->output_shapes[0] = args->inputs[0].shape[0];
  args->output_shapes[1] = 4;
  return AOTRUN_PKG_OK;
}

/* --- running ------------------------------------------------------------- */

typedef struct work {
  const float* x;
  float* y;
  float* scratch;
  size_t n;
  float scale, bias;
} work;

static int32_t compute(void* p) {
  if (fault_here("launched compute")) return AOTRUN_PKG_ERR_RUNTIME;
  const work* w = (const work*)p;
  for (size_t i = 0; i < w->n; ++i) w->scratch[i] = w->x[i] * w->scale;
  for (size_t i = 0; i < w->n; ++i) w->y[i] = w->scratch[i] + w->bias;
  return AOTRUN_PKG_OK;
}

static void release_work(void* p) { free(p); }

static int32_t check_run_args(const aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (c == NULL || c->num_models == 0) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "metadata-only container");
  if (args == NULL || args->num_inputs != 1 || args->num_outputs != 1 || args->inputs[0].ndim != 2 ||
      args->outputs[0].ndim != 2 || args->inputs[0].shape[0] != args->outputs[0].shape[0]) {
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "bad run arguments");
  }
  return AOTRUN_PKG_OK;
}

/* Scratch, launch and free on `stream`; shared by both run entry points. */
static int32_t enqueue(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  const aotrun_pkg_host* h = c->host;
  const size_t n = (size_t)args->inputs[0].shape[0] * 4;
  void* scratch = NULL;
  if (fault_here("host alloc")) return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
  int32_t rc = h->alloc(h->host_ctx, n * sizeof(float), args->stream, &scratch);
  if (rc != AOTRUN_PKG_OK || scratch == NULL) {
    return failure(rc != AOTRUN_PKG_OK ? rc : AOTRUN_PKG_ERR_OUT_OF_MEMORY, "host alloc failed");
  }
  work* w = (work*)malloc(sizeof(*w));
  if (w == NULL) {
    h->free(h->host_ctx, scratch, args->stream);
    return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "malloc failed");
  }
  w->x = (const float*)args->inputs[0].data;
  w->y = (float*)args->outputs[0].data;
  w->scratch = (float*)scratch;
  w->n = n;
  w->scale = c->scale;
  w->bias = c->bias;
  if (fault_here("host launch")) {
    /* Refused before the host saw it: the context is still ours. */
    release_work(w);
    h->free(h->host_ctx, scratch, args->stream);
    return AOTRUN_PKG_ERR_RUNTIME;
  }
  rc = h->launch(h->host_ctx, args->stream, &compute, w, &release_work);
  if (rc != AOTRUN_PKG_OK) {
    /* The host released the context; the message is the host's (inline
     * streams return the launched function's failure here). */
    h->free(h->host_ctx, scratch, args->stream);
    return rc;
  }
  rc = h->free(h->host_ctx, scratch, args->stream);
  if (rc != AOTRUN_PKG_OK) return failure(rc, "host free failed");
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (fault_here("run")) return AOTRUN_PKG_ERR_RUNTIME;
  int32_t rc = check_run_args(c, args);
  if (rc != AOTRUN_PKG_OK) return rc;
  /* Take a free instance. */
  pthread_mutex_lock(&c->mu);
  int32_t k = -1;
  for (;;) {
    for (int32_t i = 0; i < c->num_models && k < 0; ++i) {
      if (!c->inst[i].busy) k = i;
    }
    if (k >= 0) break;
    pthread_cond_wait(&c->cv, &c->mu);
  }
  instance* in = &c->inst[k];
  in->busy = 1;
  pthread_mutex_unlock(&c->mu);

  const aotrun_pkg_host* h = c->host;
  /* The instance's previous work must be complete (illegal under capture). */
  rc = h->event_synchronize(h->host_ctx, in->done);
  if (rc != AOTRUN_PKG_OK) {
    failure(rc, "host event_synchronize failed");
  } else {
    rc = enqueue(c, args);
    if (rc == AOTRUN_PKG_OK) {
      if (fault_here("host event_record")) {
        rc = AOTRUN_PKG_ERR_RUNTIME;
      } else {
        rc = h->event_record(h->host_ctx, in->done, args->stream);
        if (rc != AOTRUN_PKG_OK) failure(rc, "host event_record failed");
      }
    }
  }
  pthread_mutex_lock(&c->mu);
  in->busy = 0;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (fault_here("run_single_threaded")) return AOTRUN_PKG_ERR_RUNTIME;
  int32_t rc = check_run_args(c, args);
  if (rc != AOTRUN_PKG_OK) return rc;
  return enqueue(c, args);
}
