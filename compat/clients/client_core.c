/*
 * Compatibility client scenario. Options:
 *   --package PATH    package directory or .so to open (required)
 *   --mode M          threaded | single_threaded | graph (default threaded)
 *   --strict          no fallback: an unavailable mode must fail UNSUPPORTED
 *   --affine K,C      the package computes y = x*K + C: check every output
 *   --lib PATH        (dlopen client only) library to open
 *
 * Scenario: open the package, read its info and specs, create a runner, run
 * it with caller-allocated outputs, with aotrun-allocated outputs, from four
 * threads at once with varying batch sizes, then once with an out-of-range
 * input (1e6) followed by a normal run (a package that fails on such input
 * must leave the runner usable), and compare the runner's stats with what
 * happened. Prints one line:
 *   RESULT|<outcome>|<warnings>|<effective mode>|<package abi>|<client>|<message>
 * <outcome> is OK or the name of the first failure (an aotrun code name such
 * as ABI_MISMATCH, or WRONG_RESULT / BAD_STATS / BAD_MODE /
 * HOST_READ_PAST_SPEC for checks of this client), followed by "+WARN" when
 * exactly one warning was logged ("+WARN<n>" for n > 1) and "+STUCK" when the
 * runner failed again after a failed run. <client> is e.g. "dlopen-1.0" (front
 * end and frozen header version). <message> is the failure's message,
 * else the first warning, else empty.
 */
#include "client_core.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef COMPAT_HEADER_VERSION
#error "COMPAT_HEADER_VERSION must name the frozen header version"
#endif

#define MAX_TENSORS 8
#define MAX_DIMS 8
#define NUM_THREADS 4
#define RUNS_PER_THREAD 25
#define OUT_OF_RANGE 1.0e6f
/* What a package that fills specs only partly leaves in the unfilled bytes
 * (compat/packages/affine_pkg.c, PKG_SHORT_SPEC). */
#define SPEC_POISON ((const int64_t*)(uintptr_t)0xdead0)

typedef struct options {
  const char* package;
  aotrun_mode mode;
  int strict;
  int affine;
  float k, c;
} options;

/* ---------------------------------------------------------------------------
 * Log capture: warnings arrive through the callback, from any thread.
 * ------------------------------------------------------------------------- */

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_warnings;
static char g_first_warning[1024];

static void on_log(void* user_data, aotrun_log_level level, const char* message) {
  (void)user_data;
  if (level != AOTRUN_LOG_WARN) return;
  pthread_mutex_lock(&g_log_mu);
  if (g_warnings++ == 0) snprintf(g_first_warning, sizeof g_first_warning, "%s", message);
  pthread_mutex_unlock(&g_log_mu);
}

/* ---------------------------------------------------------------------------
 * Scenario state
 * ------------------------------------------------------------------------- */

typedef struct scenario {
  const aotrun_api* A;
  const options* opt;
  aotrun_package* package;
  aotrun_runner* runner;
  size_t num_inputs, num_outputs;
  aotrun_tensor_info in[MAX_TENSORS], out[MAX_TENSORS];
  pthread_mutex_t mu; /* guards everything below */
  char outcome[64];
  char message[1024];
  uint64_t ok_runs, failed_runs;
} scenario;

/* Records the first failure only: later ones are consequences. */
static void record(scenario* s, const char* outcome, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static void record(scenario* s, const char* outcome, const char* fmt, ...) {
  pthread_mutex_lock(&s->mu);
  if (!s->outcome[0]) {
    snprintf(s->outcome, sizeof s->outcome, "%s", outcome);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->message, sizeof s->message, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&s->mu);
}

/* Records a failed status (and frees it). Returns its code. */
static aotrun_code record_status(scenario* s, aotrun_status* st, const char* stage) {
  aotrun_code code = s->A->status_code(st);
  record(s, s->A->code_name(code), "%s: %s", stage, s->A->status_message(st));
  s->A->status_free(st);
  return code;
}

static int failed(scenario* s) {
  pthread_mutex_lock(&s->mu);
  int f = s->outcome[0] != 0;
  pthread_mutex_unlock(&s->mu);
  return f;
}

/* ---------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------- */

typedef struct tensor {
  DLTensor t;
  int64_t shape[MAX_DIMS];
} tensor;

static size_t numel(const DLTensor* t) {
  size_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= (size_t)t->shape[i];
  return n;
}

static size_t elem_bytes(DLDataType d) { return (size_t)(d.bits * d.lanes + 7) / 8; }

static int is_f32(DLDataType d) { return d.code == kDLFloat && d.bits == 32 && d.lanes == 1; }

static float pattern(unsigned seed, size_t i) { return (float)((int)((i + seed) % 7) - 3) * 0.25f + (float)(seed % 5); }

/* Allocates a CPU tensor of `dtype` and `shape` (zeroed). 0 on success. */
static int tensor_alloc(tensor* x, DLDataType dtype, int32_t ndim, const int64_t* shape) {
  memset(x, 0, sizeof *x);
  if (ndim < 0 || ndim > MAX_DIMS) return -1;
  for (int32_t i = 0; i < ndim; ++i) x->shape[i] = shape[i];
  x->t.device.device_type = kDLCPU;
  x->t.ndim = ndim;
  x->t.dtype = dtype;
  x->t.shape = x->shape;
  x->t.data = calloc(numel(&x->t) + 1, elem_bytes(dtype)); /* +1: never 0 bytes */
  return x->t.data ? 0 : -1;
}

static void tensors_free(tensor* ts, size_t n) {
  for (size_t i = 0; i < n; ++i) free(ts[i].t.data);
}

/* Builds the inputs the specs describe, dynamic dims set to `batch`. */
static int make_inputs(scenario* s, tensor* xs, int64_t batch, unsigned seed, int poke) {
  for (size_t j = 0; j < s->num_inputs; ++j) {
    const aotrun_tensor_info* info = &s->in[j];
    int64_t shape[MAX_DIMS];
    for (int32_t d = 0; d < info->ndim && d < MAX_DIMS; ++d) shape[d] = info->shape[d] < 0 ? batch : info->shape[d];
    if (tensor_alloc(&xs[j], info->dtype, info->ndim, shape) != 0) {
      tensors_free(xs, j);
      record(s, "CLIENT_ERROR", "cannot build input %zu (rank %d)", j, info->ndim);
      return -1;
    }
    if (is_f32(info->dtype)) {
      float* p = xs[j].t.data;
      size_t n = numel(&xs[j].t);
      for (size_t i = 0; i < n; ++i) p[i] = pattern(seed, i);
      if (poke && n > 0) p[0] = OUT_OF_RANGE;
    }
  }
  return 0;
}

/* y = x*K + C, exactly as the package computes it in float. */
static int check_affine(scenario* s, const DLTensor* x, const DLTensor* y, const char* how) {
  if (!is_f32(y->dtype) || y->ndim != x->ndim || y->device.device_type != kDLCPU) {
    record(s, "WRONG_RESULT", "%s: output 0 has dtype code %u bits %u, rank %d, device %d", how, y->dtype.code,
           y->dtype.bits, y->ndim, (int)y->device.device_type);
    return -1;
  }
  for (int32_t d = 0; d < x->ndim; ++d)
    if (x->shape[d] != y->shape[d]) {
      record(s, "WRONG_RESULT", "%s: output dim %d is %lld, input's is %lld", how, d, (long long)y->shape[d],
             (long long)x->shape[d]);
      return -1;
    }
  const float* xp = (const float*)((const char*)x->data + x->byte_offset);
  const float* yp = (const float*)((const char*)y->data + y->byte_offset);
  for (size_t i = 0, n = numel(x); i < n; ++i) {
    float want = xp[i] * s->opt->k + s->opt->c;
    if (fabsf(yp[i] - want) > 1e-5f * fmaxf(1.0f, fabsf(want))) {
      record(s, "WRONG_RESULT", "%s: y[%zu] = %g, expected %g (x = %g)", how, i, (double)yp[i], (double)want,
             (double)xp[i]);
      return -1;
    }
  }
  return 0;
}

/* One run with `batch` rows. Returns AOTRUN_OK or the failure's code (the
 * failure is recorded unless `quiet`). */
static aotrun_code run_once(scenario* s, int64_t batch, unsigned seed, int alloc_outputs, int poke) {
  const aotrun_api* A = s->A;
  tensor xs[MAX_TENSORS];
  DLTensor in[MAX_TENSORS];
  if (make_inputs(s, xs, batch, seed, poke) != 0) return AOTRUN_ERR_INTERNAL;
  for (size_t j = 0; j < s->num_inputs; ++j) in[j] = xs[j].t;
  aotrun_code code = AOTRUN_OK;
  aotrun_status* st = NULL;
  char how[96];
  snprintf(how, sizeof how, "%s (batch %lld)", alloc_outputs ? "run_alloc" : "run", (long long)batch);

  if (!alloc_outputs) {
    int64_t shapes[MAX_TENSORS * MAX_DIMS + 1];
    size_t cap = 0;
    for (size_t j = 0; j < s->num_outputs; ++j) cap += (size_t)s->out[j].ndim;
    tensor ys[MAX_TENSORS];
    DLTensor out[MAX_TENSORS];
    size_t made = 0;
    st = A->runner_get_output_shapes(s->runner, in, s->num_inputs, shapes, cap);
    if (st) {
      code = record_status(s, st, "get_output_shapes");
    } else {
      for (size_t j = 0, off = 0; j < s->num_outputs; ++j, ++made) {
        if (tensor_alloc(&ys[j], s->out[j].dtype, s->out[j].ndim, shapes + off) != 0) break;
        out[j] = ys[j].t;
        off += (size_t)s->out[j].ndim;
      }
      if (made != s->num_outputs) {
        record(s, "CLIENT_ERROR", "cannot allocate output %zu", made);
        code = AOTRUN_ERR_INTERNAL;
      } else if ((st = A->runner_run(s->runner, in, s->num_inputs, out, s->num_outputs)) != NULL) {
        code = record_status(s, st, how);
      } else if (s->opt->affine && check_affine(s, &in[0], &out[0], how) != 0) {
        code = AOTRUN_ERR_INTERNAL;
      }
      tensors_free(ys, made);
    }
  } else {
    DLManagedTensor* outs[MAX_TENSORS] = {0};
    st = A->runner_run_alloc(s->runner, in, s->num_inputs, outs, s->num_outputs);
    if (st) {
      code = record_status(s, st, how);
    } else {
      if (s->opt->affine && check_affine(s, &in[0], &outs[0]->dl_tensor, how) != 0) code = AOTRUN_ERR_INTERNAL;
      for (size_t j = 0; j < s->num_outputs; ++j)
        if (outs[j] && outs[j]->deleter) outs[j]->deleter(outs[j]);
    }
  }
  tensors_free(xs, s->num_inputs);
  pthread_mutex_lock(&s->mu);
  if (code == AOTRUN_OK)
    ++s->ok_runs;
  else if (code != AOTRUN_ERR_INTERNAL)
    ++s->failed_runs; /* a run the library saw fail */
  pthread_mutex_unlock(&s->mu);
  return code;
}

typedef struct worker {
  scenario* s;
  unsigned id;
  pthread_t thread;
} worker;

static void* worker_main(void* p) {
  worker* w = p;
  for (unsigned r = 0; r < RUNS_PER_THREAD && !failed(w->s); ++r) {
    unsigned seed = w->id * 1000u + r;
    if (run_once(w->s, 1 + (int64_t)(seed % 4), seed, (int)(r % 2), 0) != AOTRUN_OK) break;
  }
  return NULL;
}

/* ---------------------------------------------------------------------------
 * Stages
 * ------------------------------------------------------------------------- */

static int open_package(scenario* s) {
  const aotrun_api* A = s->A;
  aotrun_package_options* po = NULL;
  aotrun_status* st = A->package_options_create(&po);
  if (st) return record_status(s, st, "package_options_create"), -1;
  st = A->package_options_set_verify_hashes(po, 1);
  if (!st) st = A->package_open(s->opt->package, po, &s->package);
  A->package_options_free(po);
  if (st) return record_status(s, st, "package_open"), -1;
  return 0;
}

/* Reads the package's info and tensor specs; prints nothing. */
static int read_specs(scenario* s, char* abi, size_t abi_size) {
  const aotrun_api* A = s->A;
  aotrun_package_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  aotrun_status* st = A->package_get_info(s->package, &info);
  if (st) return record_status(s, st, "package_get_info"), -1;
  snprintf(abi, abi_size, "%u.%u", (unsigned)(info.abi_version >> 16), (unsigned)(info.abi_version & 0xFFFFu));
  if (info.num_inputs > MAX_TENSORS || info.num_outputs > MAX_TENSORS) {
    record(s, "CLIENT_ERROR", "package has %zu inputs and %zu outputs; this client handles %d", info.num_inputs,
           info.num_outputs, MAX_TENSORS);
    return -1;
  }
  s->num_inputs = info.num_inputs;
  s->num_outputs = info.num_outputs;
  for (size_t j = 0; j < s->num_inputs + s->num_outputs; ++j) {
    int is_in = j < s->num_inputs;
    size_t idx = is_in ? j : j - s->num_inputs;
    aotrun_tensor_info* ti = is_in ? &s->in[idx] : &s->out[idx];
    memset(ti, 0, sizeof *ti);
    ti->struct_size = sizeof *ti;
    st = is_in ? A->package_get_input(s->package, idx, ti) : A->package_get_output(s->package, idx, ti);
    if (st) return record_status(s, st, is_in ? "package_get_input" : "package_get_output"), -1;
    if (ti->shape == SPEC_POISON) {
      record(s, "HOST_READ_PAST_SPEC", "%s %zu: the host passed on bytes past the spec's struct_size",
             is_in ? "input" : "output", idx);
      return -1;
    }
    if (ti->ndim < 0 || ti->ndim > MAX_DIMS || (ti->ndim > 0 && !ti->shape)) {
      record(s, "CLIENT_ERROR", "%s %zu: rank %d, shape %p", is_in ? "input" : "output", idx, ti->ndim,
             (const void*)ti->shape);
      return -1;
    }
  }
  if (s->opt->affine && (s->num_inputs != 1 || s->num_outputs != 1 || !is_f32(s->in[0].dtype))) {
    record(s, "CLIENT_ERROR", "--affine needs one float32 input and one output");
    return -1;
  }
  return 0;
}

static int create_runner(scenario* s) {
  const aotrun_api* A = s->A;
  aotrun_runner_options* ro = NULL;
  aotrun_status* st = A->runner_options_create(&ro);
  if (st) return record_status(s, st, "runner_options_create"), -1;
  st = A->runner_options_set_mode(ro, s->opt->mode);
  if (!st) st = A->runner_options_set_strict(ro, s->opt->strict);
  if (!st) st = A->runner_options_set_num_models(ro, 2);
  if (!st) st = A->runner_create(s->package, ro, &s->runner);
  A->runner_options_free(ro);
  if (st) return record_status(s, st, "runner_create"), -1;
  return 0;
}

/* The runner's mode must agree with mode_available and the strict flag. */
static int check_mode(scenario* s) {
  const char* reason = NULL;
  int available = s->A->package_mode_available(s->package, s->opt->mode, &reason);
  aotrun_mode eff = s->A->runner_mode(s->runner);
  if (available && eff != s->opt->mode) {
    record(s, "BAD_MODE", "mode %s is available but the runner uses %s", s->A->mode_name(s->opt->mode),
           s->A->mode_name(eff));
    return -1;
  }
  if (!available && (!reason || !reason[0])) {
    record(s, "BAD_MODE", "mode %s is unavailable but no reason is given", s->A->mode_name(s->opt->mode));
    return -1;
  }
  if (!available && s->opt->strict) {
    record(s, "BAD_MODE", "strict runner created although mode %s is unavailable: %s", s->A->mode_name(s->opt->mode),
           reason);
    return -1;
  }
  return 0;
}

static int run_all(scenario* s) {
  if (run_once(s, 3, 1, 0, 0) != AOTRUN_OK) return -1;
  if (run_once(s, 2, 2, 1, 0) != AOTRUN_OK) return -1;

  worker w[NUM_THREADS];
  for (unsigned i = 0; i < NUM_THREADS; ++i) {
    w[i].s = s;
    w[i].id = i + 1;
    if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
      record(s, "CLIENT_ERROR", "pthread_create failed");
      for (unsigned j = 0; j < i; ++j) pthread_join(w[j].thread, NULL);
      return -1;
    }
  }
  for (unsigned i = 0; i < NUM_THREADS; ++i) pthread_join(w[i].thread, NULL);
  if (failed(s)) return -1;

  /* Out-of-range input: most packages compute it; one fails on purpose and
   * the runner must stay usable. */
  aotrun_code code = run_once(s, 2, 7, 0, 1);
  if (code == AOTRUN_ERR_INTERNAL) return -1; /* a client check failed */
  if (code != AOTRUN_OK) {
    if (run_once(s, 2, 8, 0, 0) != AOTRUN_OK) {
      pthread_mutex_lock(&s->mu);
      strncat(s->outcome, "+STUCK", sizeof s->outcome - strlen(s->outcome) - 1);
      pthread_mutex_unlock(&s->mu);
    }
    return -1;
  }
  return 0;
}

static int check_stats(scenario* s) {
  aotrun_runner_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  aotrun_status* st = s->A->runner_get_stats(s->runner, &stats);
  if (st) return record_status(s, st, "runner_get_stats"), -1;
  int fallback = stats.effective_mode != stats.requested_mode;
  const char* why = NULL;
  if (stats.requested_mode != s->opt->mode)
    why = "requested_mode differs from the option";
  else if (stats.effective_mode != s->A->runner_mode(s->runner))
    why = "effective_mode differs from runner_mode()";
  else if (stats.runs != s->ok_runs)
    why = "runs differs from the successful runs made";
  else if (stats.failures != s->failed_runs)
    why = "failures differs from the failed runs made";
  else if (fallback && stats.fallback_runs != stats.runs)
    why = "fallback_runs differs from runs";
  else if (!fallback && stats.fallback_runs != 0)
    why = "fallback_runs is not 0 without a fallback";
  else if (fallback != (stats.fallback_reason && stats.fallback_reason[0]))
    why = "fallback_reason disagrees";
  /* A native graph runner has captured at least one shape and replayed it
   * (the scenario repeats every batch size it uses). */
  else if (stats.effective_mode == AOTRUN_MODE_GRAPH && (stats.graph_captures == 0 || stats.graph_replays == 0))
    why = "graph mode without captures or replays";
  else if (stats.effective_mode != AOTRUN_MODE_GRAPH && stats.graph_captures != 0)
    why = "graph captures outside graph mode";
  if (why) {
    record(s, "BAD_STATS",
           "%s (runs %llu/%llu, failures %llu/%llu, fallback_runs %llu, captures %llu, replays %llu, reason '%s')", why,
           (unsigned long long)stats.runs, (unsigned long long)s->ok_runs, (unsigned long long)stats.failures,
           (unsigned long long)s->failed_runs, (unsigned long long)stats.fallback_runs,
           (unsigned long long)stats.graph_captures, (unsigned long long)stats.graph_replays,
           stats.fallback_reason ? stats.fallback_reason : "(null)");
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------- */

void compat_client_usage(const char* prog) {
  fprintf(stderr, "usage: %s --package PATH [--mode threaded|single_threaded|graph] [--strict] [--affine K,C]%s\n",
          prog, " [--lib PATH (dlopen client)]");
}

static int parse(int argc, char** argv, options* o) {
  memset(o, 0, sizeof *o);
  o->mode = AOTRUN_MODE_THREADED;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--strict")) {
      o->strict = 1;
    } else if (!strcmp(a, "--package") && v) {
      o->package = v, ++i;
    } else if (!strcmp(a, "--mode") && v) {
      ++i;
      if (!strcmp(v, "threaded"))
        o->mode = AOTRUN_MODE_THREADED;
      else if (!strcmp(v, "single_threaded"))
        o->mode = AOTRUN_MODE_SINGLE_THREADED;
      else if (!strcmp(v, "graph"))
        o->mode = AOTRUN_MODE_GRAPH;
      else
        return -1;
    } else if (!strcmp(a, "--affine") && v) {
      ++i;
      if (sscanf(v, "%f,%f", &o->k, &o->c) != 2) return -1;
      o->affine = 1;
    } else if (!strcmp(a, "--lib") && v) {
      ++i; /* the dlopen front end reads it */
    } else {
      return -1;
    }
  }
  return o->package ? 0 : -1;
}

int compat_client_main(const aotrun_api* A, const char* kind, int argc, char** argv) {
  options opt;
  if (parse(argc, argv, &opt) != 0) {
    compat_client_usage(argv[0]);
    return 2;
  }
  scenario s;
  memset(&s, 0, sizeof s);
  s.A = A;
  s.opt = &opt;
  pthread_mutex_init(&s.mu, NULL);
  A->set_log_level(AOTRUN_LOG_WARN);
  A->set_log_callback(on_log, NULL);

  char abi[32] = "-";
  char effective[32] = "-";
  if (open_package(&s) == 0 && read_specs(&s, abi, sizeof abi) == 0 && create_runner(&s) == 0) {
    snprintf(effective, sizeof effective, "%s", A->mode_name(A->runner_mode(s.runner)));
    if (check_mode(&s) == 0 && run_all(&s) == 0) check_stats(&s);
  }
  A->runner_destroy(s.runner);
  A->package_close(s.package);
  A->set_log_callback(NULL, NULL); /* after this the callback is never called */

  char outcome[96];
  snprintf(outcome, sizeof outcome, "%s", s.outcome[0] ? s.outcome : "OK");
  if (g_warnings == 1)
    strncat(outcome, "+WARN", sizeof outcome - strlen(outcome) - 1);
  else if (g_warnings > 1)
    snprintf(outcome + strlen(outcome), sizeof outcome - strlen(outcome), "+WARN%d", g_warnings);
  const char* msg = s.outcome[0] ? s.message : g_first_warning;
  printf("RESULT|%s|%d|%s|%s|%s-%s|", outcome, g_warnings, effective, abi, kind, COMPAT_HEADER_VERSION);
  for (const char* p = msg; *p; ++p) putchar(*p == '\n' ? ' ' : *p);
  putchar('\n');
  pthread_mutex_destroy(&s.mu);
  return 0;
}
