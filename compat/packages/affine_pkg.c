/*
 * A model package written in plain C against a frozen package ABI header, with
 * no SDK: y = x * PKG_K + PKG_C, element-wise, on float32 tensors.
 *
 * It implements the package contract the way the SDK does, so the matrix
 * exercises the host services for real: the container keeps N model
 * instances, each with a completion event; `run` takes a free instance
 * (or waits on the event of the oldest pending one), allocates its scratch
 * buffer stream-ordered, launches its compute through host->launch in two
 * steps, records the instance's event and returns it to the pool.
 * `run_single_threaded` (ABI >= 1.1) uses instance 0 with no lock and no
 * event, so it is legal under stream capture.
 *
 * Which package this file becomes is chosen at compile time (see
 * compat/CMakeLists.txt): the frozen header it is compiled against, and
 *   PKG_ID               package name used in messages (an identifier)
 *   PKG_K, PKG_C         the model's constants
 *   PKG_REPORT_MAJOR/MINOR  version reported instead of the header's
 *   PKG_EXTRA_SYMBOLS    also export symbols no host knows (must be ignored)
 *   PKG_OMIT_SYMBOLS     leave out two required entry points
 *   PKG_FAIL_AT          the model fails on any input element >= this value
 *   PKG_OLD_CREATE_ARGS  built with an older, smaller create_args (see below)
 *   PKG_SHORT_SPEC       fills tensor specs short of the 1.0 size (see below)
 */
#include <aotrun/package_abi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PKG_ID
#error "PKG_ID must be defined"
#endif
#define PKG_STR2(x) #x
#define PKG_STR(x) PKG_STR2(x)
#define PKG_NAME PKG_STR(PKG_ID)
#ifndef PKG_K
#define PKG_K 2.0f
#endif
#ifndef PKG_C
#define PKG_C 0.5f
#endif
#if defined(PKG_REPORT_MAJOR) && defined(PKG_REPORT_MINOR)
#define PKG_VERSION AOTRUN_PKG_MAKE_VERSION(PKG_REPORT_MAJOR, PKG_REPORT_MINOR)
#else
#define PKG_VERSION AOTRUN_PKG_ABI_VERSION /* the frozen header's own version */
#endif

#define PKG_FEATURES 4 /* x and y are [batch, 4]; batch is dynamic */

/* ---------------------------------------------------------------------------
 * Last error, per thread (the ABI says the message belongs to the thread).
 * ------------------------------------------------------------------------- */

static _Thread_local char g_last_error[512];

static int32_t fail(int32_t status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int32_t fail(int32_t status, const char* fmt, ...) {
  int n = snprintf(g_last_error, sizeof g_last_error, "%s: ", PKG_NAME);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_last_error + n, sizeof g_last_error - (size_t)n, fmt, ap);
  va_end(ap);
  return status;
}

const char* aotrun_pkg_get_last_error(void) { return g_last_error; }

uint32_t aotrun_pkg_abi_version(void) { return PKG_VERSION; }

/* Copies a caller's versioned struct: only the bytes both sides know, the
 * rest stays zero (the documented default of every appended field). */
static void read_versioned(void* dst, size_t dst_size, const void* src) {
  size_t src_size = *(const size_t*)src;
  memset(dst, 0, dst_size);
  memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
}

/* ---------------------------------------------------------------------------
 * Layouts this package was built with.
 *
 * PKG_OLD_CREATE_ARGS models a package compiled against an older definition
 * of create_args that ends before package_dir: the host's struct_size is
 * larger than the package's struct, and the package reads only the bytes it
 * knows (as every package must).
 *
 * PKG_SHORT_SPEC models a package whose tensor specs end after ndim (its
 * tensors are scalars, so it never reports a shape): it stores back in
 * struct_size that it filled less than the 1.0 spec. The bytes past what it
 * filled hold a poison pointer: a host that reads beyond the reported
 * struct_size would hand that pointer on. 1.0 being the first layout, such a
 * spec is malformed, and the host must say so instead of guessing.
 * ------------------------------------------------------------------------- */

#ifdef PKG_OLD_CREATE_ARGS
typedef struct pkg_create_args {
  size_t struct_size;
  int32_t num_models;
  DLDevice device;
  const aotrun_pkg_host* host;
  const aotrun_pkg_constant* constants;
  size_t num_constants;
} pkg_create_args;
#else
typedef aotrun_pkg_create_args pkg_create_args;
#endif

#ifdef PKG_SHORT_SPEC
#define PKG_SPEC_FILLED offsetof(aotrun_pkg_tensor_spec, shape)
#define PKG_SPEC_POISON ((const int64_t*)(uintptr_t)0xdead0)
#define PKG_NDIM 0
#else
#define PKG_NDIM 2
#endif

/* Fields a package cannot default: without them there is nothing to run on. */
#define PKG_CREATE_ARGS_MIN (offsetof(aotrun_pkg_create_args, host) + sizeof(void*))

#ifndef PKG_SHORT_SPEC
static const int64_t k_spec_shape[2] = {-1, PKG_FEATURES};
#endif

/* ---------------------------------------------------------------------------
 * Container
 * ------------------------------------------------------------------------- */

typedef struct instance {
  aotrun_pkg_event done; /* recorded after each run of this instance */
  int recorded;          /* done has been recorded at least once */
} instance;

struct aotrun_pkg_container {
  aotrun_pkg_host host; /* the host's table, only the part we know */
  int32_t num_models;
  DLDevice device;
  instance* instances;
  /* Pool: free instances (stack) and pending ones (FIFO, oldest first). */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int32_t* free_list;
  int32_t num_free;
  int32_t* pending;
  int32_t pending_head, num_pending;
};

static void log_msg(const aotrun_pkg_container* c, int32_t level, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void log_msg(const aotrun_pkg_container* c, int32_t level, const char* fmt, ...) {
  if (!c->host.log_enabled(c->host.host_ctx, level)) return; /* cheap check first */
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%s: ", PKG_NAME);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  c->host.log(c->host.host_ctx, level, buf);
}

static void container_free(aotrun_pkg_container* c) {
  for (int32_t i = 0; c->instances && i < c->num_models; ++i) {
    if (!c->instances[i].done) continue;
    /* Runs of this instance may still be queued; their event covers them. */
    if (c->instances[i].recorded) c->host.event_synchronize(c->host.host_ctx, c->instances[i].done);
    c->host.event_destroy(c->host.host_ctx, c->instances[i].done);
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c->instances);
  free(c->free_list);
  free(c->pending);
  free(c);
}

int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (!out || !args) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: out or args is NULL");
  if (args->struct_size < PKG_CREATE_ARGS_MIN)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: args struct_size %zu is below the %zu bytes it needs",
                args->struct_size, (size_t)PKG_CREATE_ARGS_MIN);
  pkg_create_args a;
  read_versioned(&a, sizeof a, args);
  if (!a.host) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: no host services table");
  if (a.host->struct_size < AOTRUN_PKG_HOST_STRUCT_SIZE_1_0)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: host table struct_size %zu is below the 1.0 size %zu",
                a.host->struct_size, (size_t)AOTRUN_PKG_HOST_STRUCT_SIZE_1_0);
  if (a.device.device_type != kDLCPU)
    return fail(AOTRUN_PKG_ERR_UNSUPPORTED, "create: device type %d is not supported (this package is CPU only)",
                (int)a.device.device_type);
  if (a.num_models < 0) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: num_models %d < 0", a.num_models);
  if (a.num_constants != 0)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "create: got %zu constants, this package has none (first: '%s')",
                a.num_constants, a.constants && a.constants[0].name ? a.constants[0].name : "?");

  aotrun_pkg_container* c = calloc(1, sizeof *c);
  if (!c) return fail(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "create: out of memory");
  read_versioned(&c->host, sizeof c->host, a.host);
  c->num_models = a.num_models;
  c->device = a.device;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  if (a.num_models > 0) {
    size_t n = (size_t)a.num_models;
    c->instances = calloc(n, sizeof *c->instances);
    c->free_list = calloc(n, sizeof *c->free_list);
    c->pending = calloc(n, sizeof *c->pending);
    if (!c->instances || !c->free_list || !c->pending) {
      container_free(c);
      return fail(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "create: out of memory for %zu instances", n);
    }
    for (int32_t i = 0; i < a.num_models; ++i) {
      int32_t st = c->host.event_create(c->host.host_ctx, &c->instances[i].done);
      if (st != AOTRUN_PKG_OK) {
        container_free(c);
        return fail(st, "create: host event_create failed for instance %d (status %d)", i, st);
      }
      c->free_list[c->num_free++] = a.num_models - 1 - i; /* instance 0 on top */
    }
  }
  log_msg(c, AOTRUN_PKG_LOG_DEBUG, "container with %d model instance(s)", a.num_models);
  *out = c;
  return AOTRUN_PKG_OK;
}

int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {
  if (c) container_free(c);
  return AOTRUN_PKG_OK;
}

/* ---------------------------------------------------------------------------
 * Specs
 * ------------------------------------------------------------------------- */

int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out) {
  if (!c || !out) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_num_inputs: NULL argument");
  *out = 1;
  return AOTRUN_PKG_OK;
}

#ifndef PKG_OMIT_SYMBOLS
int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out) {
  if (!c || !out) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_num_outputs: NULL argument");
  *out = 1;
  return AOTRUN_PKG_OK;
}
#endif

static int32_t fill_spec(const char* what, size_t index, const char* name, aotrun_pkg_tensor_spec* out) {
  if (!out) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
  if (index != 0) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "%s: index %zu out of range (1 tensor)", what, index);
  aotrun_pkg_tensor_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.name = name;
  spec.dtype.code = kDLFloat;
  spec.dtype.bits = 32;
  spec.dtype.lanes = 1;
  spec.ndim = PKG_NDIM;
#ifdef PKG_SHORT_SPEC
  size_t filled = PKG_SPEC_FILLED;
  spec.shape = PKG_SPEC_POISON;
#else
  size_t filled = sizeof spec;
  spec.shape = k_spec_shape;
#endif
  size_t capacity = out->struct_size;
  if (capacity < filled) filled = capacity; /* an older host: give it what fits */
  spec.struct_size = filled;
  /* Write at most the caller's capacity; struct_size says how much is real. */
  size_t write = capacity < sizeof spec ? capacity : sizeof spec;
  memcpy(out, &spec, write);
  return AOTRUN_PKG_OK;
}

int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  if (!c) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_input_spec: container is NULL");
  return fill_spec("get_input_spec", index, "x", out);
}

int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  if (!c) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_output_spec: container is NULL");
  return fill_spec("get_output_spec", index, "y", out);
}

static int is_f32(DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; }

/* Checks one tensor against the spec: float32, rank PKG_NDIM, fixed dims. */
static int32_t check_tensor(const char* what, const DLTensor* t) {
  if (!is_f32(t->dtype))
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "%s: dtype (code %u, bits %u, lanes %u) is not float32", what,
                t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (t->ndim != PKG_NDIM)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "%s: rank %d, expected %d", what, t->ndim, PKG_NDIM);
  if (PKG_NDIM == 2 && (t->shape[0] < 0 || t->shape[1] != PKG_FEATURES))
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "%s: shape [%lld, %lld], expected [batch, %d]", what,
                (long long)t->shape[0], (long long)t->shape[1], PKG_FEATURES);
  return AOTRUN_PKG_OK;
}

#ifndef PKG_OMIT_SYMBOLS
int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) {
  if (!c || !args) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_output_shapes: NULL argument");
  aotrun_pkg_shape_args a;
  read_versioned(&a, sizeof a, args);
  if (a.num_inputs != 1 || !a.inputs)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_output_shapes: %zu inputs, expected 1", a.num_inputs);
  int32_t st = check_tensor("get_output_shapes: input 0 'x'", &a.inputs[0]);
  if (st != AOTRUN_PKG_OK) return st;
  const size_t need = PKG_NDIM;
  if (a.output_shapes_capacity < need)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "get_output_shapes: capacity %zu, need %zu", a.output_shapes_capacity,
                need);
  for (size_t i = 0; i < need; ++i) a.output_shapes[i] = a.inputs[0].shape[i]; /* y has x's shape */
  return AOTRUN_PKG_OK;
}
#endif

/* ---------------------------------------------------------------------------
 * The model: two launched steps, scratch = x * K, then y = scratch + C.
 * ------------------------------------------------------------------------- */

typedef struct step_ctx {
  const float* src;
  float* dst;
  size_t n;
} step_ctx;

static int32_t step_scale(void* p) {
  const step_ctx* s = p;
  for (size_t i = 0; i < s->n; ++i) {
#ifdef PKG_FAIL_AT
    if (s->src[i] >= (float)PKG_FAIL_AT)
      return fail(AOTRUN_PKG_ERR_RUNTIME, "model failed: input element %zu is %g, outside the range it supports (< %g)",
                  i, (double)s->src[i], (double)PKG_FAIL_AT);
#endif
    s->dst[i] = s->src[i] * PKG_K;
  }
  return AOTRUN_PKG_OK;
}

static int32_t step_shift(void* p) {
  const step_ctx* s = p;
  for (size_t i = 0; i < s->n; ++i) s->dst[i] = s->src[i] + PKG_C;
  return AOTRUN_PKG_OK;
}

static size_t numel(const DLTensor* t) {
  size_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= (size_t)t->shape[i];
  return n;
}

static int is_compact(const DLTensor* t) {
  if (!t->strides) return 1;
  int64_t expect = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}

static int32_t check_run_args(const aotrun_pkg_container* c, const aotrun_pkg_run_args* a) {
  if (c->num_models == 0)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: this is a metadata-only container (0 model instances)");
  if (a->num_inputs != 1 || !a->inputs)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: %zu inputs, expected 1", a->num_inputs);
  if (a->num_outputs != 1 || !a->outputs)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: %zu outputs, expected 1", a->num_outputs);
  const DLTensor* x = &a->inputs[0];
  const DLTensor* y = &a->outputs[0];
  int32_t st = check_tensor("run: input 0 'x'", x);
  if (st == AOTRUN_PKG_OK) st = check_tensor("run: output 0 'y'", y);
  if (st != AOTRUN_PKG_OK) return st;
  for (int32_t i = 0; i < PKG_NDIM; ++i)
    if (x->shape[i] != y->shape[i])
      return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: output 0 'y' dim %d is %lld, input has %lld", i,
                  (long long)y->shape[i], (long long)x->shape[i]);
  if (x->device.device_type != kDLCPU || y->device.device_type != kDLCPU)
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: tensors must be on the CPU");
  if (!is_compact(x) || !is_compact(y))
    return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: tensors must be compact row-major");
  if (numel(x) > 0 && (!x->data || !y->data)) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: tensor data is NULL");
  return AOTRUN_PKG_OK;
}

/* Enqueues fn on the stream with a heap context. The host owns the context
 * from here on and releases it exactly once, even when it refuses the launch.
 * On an inline stream fn has run when launch returns, and its failure is
 * launch's result, with fn's message already in g_last_error. */
static int32_t launch_step(const aotrun_pkg_container* c, aotrun_pkg_stream stream, aotrun_pkg_host_fn fn,
                           const float* src, float* dst, size_t n) {
  step_ctx* s = malloc(sizeof *s);
  if (!s) return fail(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "run: out of memory");
  s->src = src;
  s->dst = dst;
  s->n = n;
  g_last_error[0] = '\0';
  int32_t st = c->host.launch(c->host.host_ctx, stream, fn, s, free);
  if (st != AOTRUN_PKG_OK && !g_last_error[0]) return fail(st, "run: host launch failed (status %d)", st);
  return st;
}

/* Enqueues the forward of one instance on `stream`. */
static int32_t forward(const aotrun_pkg_container* c, const aotrun_pkg_run_args* a) {
  const DLTensor* x = &a->inputs[0];
  DLTensor* y = &a->outputs[0];
  size_t n = numel(x);
  const float* src = (const float*)((const char*)x->data + x->byte_offset);
  float* dst = (float*)((char*)y->data + y->byte_offset);
  void* scratch = NULL;
  size_t bytes = (n ? n : 1) * sizeof(float); /* never ask for 0 bytes */
  int32_t st = c->host.alloc(c->host.host_ctx, bytes, a->stream, &scratch);
  if (st != AOTRUN_PKG_OK) return fail(st, "run: host alloc of %zu bytes failed (status %d)", n * sizeof(float), st);
  st = launch_step(c, a->stream, step_scale, src, scratch, n);
  if (st == AOTRUN_PKG_OK) st = launch_step(c, a->stream, step_shift, scratch, dst, n);
  /* Stream-ordered: released after the steps above, even if one failed. */
  int32_t fst = c->host.free(c->host.host_ctx, scratch, a->stream);
  if (st == AOTRUN_PKG_OK && fst != AOTRUN_PKG_OK) st = fail(fst, "run: host free failed (status %d)", fst);
  return st;
}

/* Thread-safe run: instance pool plus per-instance completion events. */
int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (!c || !args) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run: NULL argument");
  aotrun_pkg_run_args a;
  read_versioned(&a, sizeof a, args);
  int32_t st = check_run_args(c, &a);
  if (st != AOTRUN_PKG_OK) return st;

  pthread_mutex_lock(&c->mu);
  while (c->num_free == 0 && c->num_pending == 0) pthread_cond_wait(&c->cv, &c->mu);
  int32_t idx;
  int from_pending = 0;
  if (c->num_free > 0) {
    idx = c->free_list[--c->num_free];
  } else {
    idx = c->pending[c->pending_head];
    c->pending_head = (c->pending_head + 1) % c->num_models;
    --c->num_pending;
    from_pending = 1;
  }
  pthread_mutex_unlock(&c->mu);

  instance* inst = &c->instances[idx];
  if (from_pending) {
    /* Its previous run may still be queued. Illegal under capture: that is
     * exactly why run_single_threaded exists. */
    st = c->host.event_synchronize(c->host.host_ctx, inst->done);
    if (st != AOTRUN_PKG_OK) st = fail(st, "run: waiting for instance %d failed (status %d)", idx, st);
  }
  if (st == AOTRUN_PKG_OK) st = forward(c, &a);
  if (st == AOTRUN_PKG_OK) {
    st = c->host.event_record(c->host.host_ctx, inst->done, a.stream);
    if (st != AOTRUN_PKG_OK)
      st = fail(st, "run: host event_record failed (status %d)", st);
    else
      inst->recorded = 1;
  }

  pthread_mutex_lock(&c->mu);
  if (inst->recorded && st == AOTRUN_PKG_OK) {
    c->pending[(c->pending_head + c->num_pending) % c->num_models] = idx;
    ++c->num_pending;
  } else {
    c->free_list[c->num_free++] = idx; /* nothing of ours is pending on it */
  }
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return st;
}

#if AOTRUN_PKG_ABI_MINOR >= 1
/* No lock, no event: instance 0; the host serialises the calls. */
int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (!c || !args) return fail(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "run_single_threaded: NULL argument");
  aotrun_pkg_run_args a;
  read_versioned(&a, sizeof a, args);
  int32_t st = check_run_args(c, &a);
  if (st != AOTRUN_PKG_OK) return st;
  return forward(c, &a);
}
#endif

#ifdef PKG_EXTRA_SYMBOLS
/* Entry points of an ABI minor no host knows yet. A host must never call
 * them (it cannot know their signatures): if one is ever called, the process
 * dies and the matrix shows it. */
int32_t aotrun_pkg_container_compat_future_op(aotrun_pkg_container* c, const void* args);
int32_t aotrun_pkg_container_compat_future_op(aotrun_pkg_container* c, const void* args) {
  (void)c;
  (void)args;
  fprintf(stderr, "%s: aotrun_pkg_container_compat_future_op was called by the host\n", PKG_NAME);
  abort();
}
extern const uint32_t aotrun_pkg_compat_future_flags;
const uint32_t aotrun_pkg_compat_future_flags = 0x9u;
#endif
