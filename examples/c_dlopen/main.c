/*
 * c_dlopen: use aotrun from C without linking it.
 *
 * The program dlopens libaotrun.so.1, resolves the one symbol
 * aotrun_get_api, and asks for the API version its header declares. Every
 * other call goes through the returned function table, so the program runs
 * against any libaotrun.so.1 at least as new as its header, and fails with a
 * clear message against an older one. It then opens a package, prints what
 * the package declares, runs it on a batch, and prints a summary of the
 * outputs.
 *
 *   c_dlopen [--lib PATH] [--batch N] [--iters N] [--mode M] [--check] PACKAGE
 *
 * --check also verifies the results without knowing the model: every row of
 * the batch is run again on its own and must give the same output row, and
 * aotrun-allocated outputs (run_alloc) must equal caller-allocated ones.
 * Exit status: 0 on success, 1 on any failure (the message says which).
 */
#include <aotrun/aotrun.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENSORS 16
#define MAX_DIMS 8

static const aotrun_api* A; /* the function table; set once in main */

/* ---------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------- */

/* Prints a failed status with what we were doing, frees it, returns 1. */
static int report(aotrun_status* st, const char* what) {
  fprintf(stderr, "c_dlopen: %s failed: %s: %s\n", what, A->code_name(A->status_code(st)), A->status_message(st));
  A->status_free(st);
  return 1;
}

/* Warnings (for example a fallback to an older package entry point) arrive
 * here, possibly from aotrun's worker threads. */
static void on_log(void* user_data, aotrun_log_level level, const char* message) {
  (void)user_data;
  fprintf(stderr, "c_dlopen: aotrun %s: %s\n", level == AOTRUN_LOG_ERROR ? "error" : "warning", message);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char* dtype_name(DLDataType t) {
  if (t.lanes != 1) return "vector";
  if (t.code == kDLFloat && t.bits == 32) return "float32";
  if (t.code == kDLFloat && t.bits == 64) return "float64";
  if (t.code == kDLFloat && t.bits == 16) return "float16";
  if (t.code == kDLBfloat && t.bits == 16) return "bfloat16";
  if (t.code == kDLInt && t.bits == 32) return "int32";
  if (t.code == kDLInt && t.bits == 64) return "int64";
  if (t.code == kDLUInt && t.bits == 8) return "uint8";
  return "other";
}

static int is_f32(DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; }

static void print_shape(int32_t ndim, const int64_t* shape) {
  printf("[");
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0)
      printf("%s?", i ? ", " : "");
    else
      printf("%s%lld", i ? ", " : "", (long long)shape[i]);
  }
  printf("]");
}

static size_t numel(int32_t ndim, const int64_t* shape) {
  size_t n = 1;
  for (int32_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  return n;
}

/* A CPU tensor with its own shape array and data. */
typedef struct tensor {
  DLTensor t;
  int64_t shape[MAX_DIMS];
} tensor;

static int tensor_init(tensor* x, DLDataType dtype, int32_t ndim, const int64_t* shape) {
  memset(x, 0, sizeof *x);
  if (ndim < 0 || ndim > MAX_DIMS) return -1;
  memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
  x->t.device.device_type = kDLCPU;
  x->t.ndim = ndim;
  x->t.dtype = dtype;
  x->t.shape = x->shape;
  size_t bytes = numel(ndim, shape) * (size_t)((dtype.bits * dtype.lanes + 7) / 8);
  x->t.data = calloc(bytes ? bytes : 1, 1);
  return x->t.data ? 0 : -1;
}

static void tensors_free(tensor* ts, size_t n) {
  for (size_t i = 0; i < n; ++i) free(ts[i].t.data);
}

/* Rows [row, row + rows) of a tensor whose first dimension is the batch, as
 * a view (no copy). */
static DLTensor row_view(const DLTensor* t, int64_t row, int64_t rows, int64_t* shape) {
  DLTensor v = *t;
  memcpy(shape, t->shape, (size_t)t->ndim * sizeof *shape);
  shape[0] = rows;
  v.shape = shape;
  v.byte_offset += (uint64_t)row * numel(t->ndim - 1, t->shape + 1) * (uint64_t)((t->dtype.bits + 7) / 8);
  return v;
}

/* ---------------------------------------------------------------------------
 * The program
 * ------------------------------------------------------------------------- */

typedef struct options {
  const char* lib;
  const char* package;
  int64_t batch;
  int iters;
  aotrun_mode mode;
  int check;
} options;

static int parse(int argc, char** argv, options* o) {
  o->lib = "libaotrun.so.1"; /* found through the loader's usual search path */
  o->package = NULL;
  o->batch = 4;
  o->iters = 10;
  o->mode = AOTRUN_MODE_THREADED;
  o->check = 0;
  for (int i = 1; i < argc; ++i) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--lib") && v)
      o->lib = argv[++i];
    else if (!strcmp(argv[i], "--batch") && v)
      o->batch = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && v)
      o->iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check"))
      o->check = 1;
    else if (!strcmp(argv[i], "--mode") && v) {
      ++i;
      if (!strcmp(v, "threaded"))
        o->mode = AOTRUN_MODE_THREADED;
      else if (!strcmp(v, "single_threaded"))
        o->mode = AOTRUN_MODE_SINGLE_THREADED;
      else if (!strcmp(v, "graph"))
        o->mode = AOTRUN_MODE_GRAPH;
      else
        return -1;
    } else if (argv[i][0] != '-' && !o->package)
      o->package = argv[i];
    else
      return -1;
  }
  return o->package && o->batch > 0 && o->iters > 0 ? 0 : -1;
}

/* Loads the library and returns its function table, or NULL (message printed). */
static const aotrun_api* load_api(const char* lib) {
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    fprintf(stderr, "c_dlopen: cannot load %s: %s\n", lib, dlerror());
    return NULL;
  }
  const aotrun_api* (*get_api)(uint32_t);
  *(void**)&get_api = dlsym(handle, "aotrun_get_api"); /* POSIX allows this cast */
  if (!get_api) {
    fprintf(stderr, "c_dlopen: %s is not libaotrun (no aotrun_get_api)\n", lib);
    return NULL;
  }
  const aotrun_api* api = get_api(AOTRUN_API_VERSION);
  if (!api) {
    /* Any 1.x library serves the 1.0 table: ask for it to say what we got. */
    const aotrun_api* base = get_api(AOTRUN_API_VERSION_1_0);
    fprintf(stderr, "c_dlopen: %s (version %s) is older than API %u.%u this program needs\n", lib,
            base ? base->version_string() : "unknown", (unsigned)(AOTRUN_API_VERSION >> 16),
            (unsigned)((AOTRUN_API_VERSION >> 8) & 0xFFu));
    return NULL;
  }
  /* The library stays loaded for the life of the process: its worker threads
   * must not outlive its code. */
  return api;
}

static int describe(aotrun_package* pkg, aotrun_package_info* info, aotrun_tensor_info* in, aotrun_tensor_info* out) {
  aotrun_status* st;
  memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
  if ((st = A->package_get_info(pkg, info))) return report(st, "package_get_info");
  printf("package   %s (%s, %s)\n", info->name, info->format, info->path);
  printf("  built for package ABI %u.%u, device type %d, %zu constants (%.1f MiB)\n",
         (unsigned)(info->abi_version >> 16), (unsigned)(info->abi_version & 0xFFFFu), (int)info->device.device_type,
         info->num_constants, (double)info->constant_bytes / (1024.0 * 1024.0));
  printf("  opened in %.2f ms (hashes %s)\n", (double)info->open_ns / 1e6,
         info->hashes_verified ? "verified" : "not verified");
  if (info->num_inputs > MAX_TENSORS || info->num_outputs > MAX_TENSORS) {
    fprintf(stderr, "c_dlopen: %zu inputs / %zu outputs: this example handles at most %d\n", info->num_inputs,
            info->num_outputs, MAX_TENSORS);
    return 1;
  }
  for (size_t i = 0; i < info->num_inputs + info->num_outputs; ++i) {
    int is_in = i < info->num_inputs;
    size_t k = is_in ? i : i - info->num_inputs;
    aotrun_tensor_info* ti = is_in ? &in[k] : &out[k];
    memset(ti, 0, sizeof *ti);
    ti->struct_size = sizeof *ti;
    st = is_in ? A->package_get_input(pkg, k, ti) : A->package_get_output(pkg, k, ti);
    if (st) return report(st, is_in ? "package_get_input" : "package_get_output");
    if (ti->ndim > MAX_DIMS) {
      fprintf(stderr, "c_dlopen: %s has rank %d; this example handles at most %d\n", ti->name, ti->ndim, MAX_DIMS);
      return 1;
    }
    printf("  %s %zu  %-10s %-8s ", is_in ? "input " : "output", k, ti->name, dtype_name(ti->dtype));
    print_shape(ti->ndim, ti->shape);
    printf("\n");
  }
  return 0;
}

/* Builds the inputs: dynamic dimensions become `batch`; float32 data is a
 * deterministic wave in [-1, 1], other types are zero. */
static int make_inputs(const aotrun_package_info* info, const aotrun_tensor_info* in, int64_t batch, tensor* xs) {
  for (size_t i = 0; i < info->num_inputs; ++i) {
    int64_t shape[MAX_DIMS];
    for (int32_t d = 0; d < in[i].ndim; ++d) shape[d] = in[i].shape[d] < 0 ? batch : in[i].shape[d];
    if (tensor_init(&xs[i], in[i].dtype, in[i].ndim, shape) != 0) {
      tensors_free(xs, i);
      fprintf(stderr, "c_dlopen: out of memory for input %zu\n", i);
      return 1;
    }
    if (is_f32(in[i].dtype)) {
      float* p = xs[i].t.data;
      for (size_t j = 0, n = numel(xs[i].t.ndim, xs[i].t.shape); j < n; ++j)
        p[j] = (float)sin(0.37 * (double)j + (double)i);
    }
  }
  return 0;
}

/* Runs with caller-allocated outputs, shapes from get_output_shapes. */
static int run_into(aotrun_runner* runner, const aotrun_package_info* info, const aotrun_tensor_info* out,
                    const DLTensor* inputs, tensor* ys) {
  int64_t shapes[MAX_TENSORS * MAX_DIMS];
  size_t cap = 0;
  for (size_t i = 0; i < info->num_outputs; ++i) cap += (size_t)out[i].ndim;
  aotrun_status* st = A->runner_get_output_shapes(runner, inputs, info->num_inputs, shapes, cap);
  if (st) return report(st, "runner_get_output_shapes");
  DLTensor outputs[MAX_TENSORS];
  for (size_t i = 0, off = 0; i < info->num_outputs; off += (size_t)out[i].ndim, ++i) {
    if (tensor_init(&ys[i], out[i].dtype, out[i].ndim, shapes + off) != 0) {
      tensors_free(ys, i);
      fprintf(stderr, "c_dlopen: out of memory for output %zu\n", i);
      return 1;
    }
    outputs[i] = ys[i].t;
  }
  if ((st = A->runner_run(runner, inputs, info->num_inputs, outputs, info->num_outputs))) {
    tensors_free(ys, info->num_outputs);
    return report(st, "runner_run");
  }
  return 0;
}

static void summarize(const aotrun_tensor_info* out, const tensor* y) {
  printf("  %-10s ", out->name);
  print_shape(y->t.ndim, y->t.shape);
  size_t n = numel(y->t.ndim, y->t.shape);
  if (!is_f32(y->t.dtype) || n == 0) {
    printf("  (%s, %zu elements)\n", dtype_name(y->t.dtype), n);
    return;
  }
  const float* p = y->t.data;
  double lo = p[0], hi = p[0], sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    lo = fmin(lo, p[i]);
    hi = fmax(hi, p[i]);
    sum += p[i];
  }
  printf("  min %.4f  max %.4f  mean %.4f  first", lo, hi, sum / (double)n);
  for (size_t i = 0; i < n && i < 4; ++i) printf(" %.4f", (double)p[i]);
  printf("\n");
}

static int same(const DLTensor* a, const DLTensor* b, const char* what) {
  size_t n = numel(a->ndim, a->shape);
  if (a->ndim != b->ndim || n != numel(b->ndim, b->shape)) {
    fprintf(stderr, "c_dlopen: check failed: %s: shapes differ\n", what);
    return 0;
  }
  if (!is_f32(a->dtype)) return 1; /* only float32 outputs are compared */
  const float* x = (const float*)((const char*)a->data + a->byte_offset);
  const float* y = (const float*)((const char*)b->data + b->byte_offset);
  for (size_t i = 0; i < n; ++i)
    if (fabsf(x[i] - y[i]) > 1e-4f * fmaxf(1.0f, fabsf(x[i]))) {
      fprintf(stderr, "c_dlopen: check failed: %s: element %zu is %g vs %g\n", what, i, (double)x[i], (double)y[i]);
      return 0;
    }
  return 1;
}

/* Row-by-row and run_alloc cross-checks (see the file comment). */
static int check(aotrun_runner* runner, const aotrun_package_info* info, const aotrun_tensor_info* in,
                 const aotrun_tensor_info* out, const DLTensor* inputs, const tensor* ys, int64_t batch) {
  for (size_t i = 0; i < info->num_inputs; ++i)
    if (in[i].ndim == 0 || in[i].shape[0] >= 0) {
      printf("check     skipped: input %zu has no dynamic batch dimension\n", i);
      return 0;
    }
  for (int64_t r = 0; r < batch; ++r) {
    DLTensor row_in[MAX_TENSORS];
    int64_t row_shapes[MAX_TENSORS][MAX_DIMS];
    for (size_t i = 0; i < info->num_inputs; ++i) row_in[i] = row_view(&inputs[i], r, 1, row_shapes[i]);
    tensor row_out[MAX_TENSORS];
    if (run_into(runner, info, out, row_in, row_out)) return 1;
    int ok = 1;
    for (size_t i = 0; i < info->num_outputs && ok; ++i) {
      int64_t shape[MAX_DIMS];
      DLTensor want = row_view(&ys[i].t, r, 1, shape);
      ok = same(&want, &row_out[i].t, "batch row vs the same row run alone");
    }
    tensors_free(row_out, info->num_outputs);
    if (!ok) return 1;
  }
  DLManagedTensor* managed[MAX_TENSORS] = {0};
  aotrun_status* st = A->runner_run_alloc(runner, inputs, info->num_inputs, managed, info->num_outputs);
  if (st) return report(st, "runner_run_alloc");
  int ok = 1;
  for (size_t i = 0; i < info->num_outputs; ++i) {
    if (ok) ok = same(&ys[i].t, &managed[i]->dl_tensor, "run_alloc vs run");
    if (managed[i]->deleter) managed[i]->deleter(managed[i]); /* the caller owns it */
  }
  if (!ok) return 1;
  printf("check     ok: %lld rows alone match the batch; run_alloc matches run\n", (long long)batch);
  return 0;
}

int main(int argc, char** argv) {
  options o;
  if (parse(argc, argv, &o) != 0) {
    fprintf(stderr,
            "usage: %s [--lib PATH] [--batch N] [--iters N] [--mode threaded|single_threaded|graph] [--check] "
            "PACKAGE\n",
            argv[0]);
    return 2;
  }
  if (!(A = load_api(o.lib))) return 1;
  printf("library   %s (API table 0x%06x, this program needs 0x%06x)\n", A->version_string(), (unsigned)A->version,
         (unsigned)AOTRUN_API_VERSION);
  A->set_log_callback(on_log, NULL);

  aotrun_package* pkg = NULL;
  aotrun_runner* runner = NULL;
  aotrun_runner_options* ro = NULL;
  aotrun_package_info info;
  aotrun_tensor_info in[MAX_TENSORS], out[MAX_TENSORS];
  tensor xs[MAX_TENSORS], ys[MAX_TENSORS];
  DLTensor inputs[MAX_TENSORS];
  int rc = 1, have_xs = 0, have_ys = 0;
  aotrun_status* st;

  if ((st = A->package_open(o.package, NULL, &pkg))) {
    rc = report(st, "package_open");
    goto done;
  }
  if (describe(pkg, &info, in, out)) goto done;

  if ((st = A->runner_options_create(&ro)) || (st = A->runner_options_set_mode(ro, o.mode)) ||
      (st = A->runner_create(pkg, ro, &runner))) {
    rc = report(st, "runner_create");
    goto done;
  }
  printf("runner    mode %s\n", A->mode_name(A->runner_mode(runner)));

  if (make_inputs(&info, in, o.batch, xs)) goto done;
  have_xs = 1;
  for (size_t i = 0; i < info.num_inputs; ++i) inputs[i] = xs[i].t;
  if (run_into(runner, &info, out, inputs, ys)) goto done;
  have_ys = 1;

  /* Timing: the same inputs into the same outputs. */
  DLTensor outputs[MAX_TENSORS];
  for (size_t i = 0; i < info.num_outputs; ++i) outputs[i] = ys[i].t;
  double t0 = now_ms();
  for (int k = 0; k < o.iters; ++k)
    if ((st = A->runner_run(runner, inputs, info.num_inputs, outputs, info.num_outputs))) {
      rc = report(st, "runner_run");
      goto done;
    }
  double per_run = (now_ms() - t0) / o.iters;

  printf("ran       batch %lld, %d runs, %.3f ms per run\n", (long long)o.batch, o.iters, per_run);
  for (size_t i = 0; i < info.num_outputs; ++i) summarize(&out[i], &ys[i]);
  if (o.check && check(runner, &info, in, out, inputs, ys, o.batch)) goto done;

  aotrun_runner_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if ((st = A->runner_get_stats(runner, &stats))) {
    rc = report(st, "runner_get_stats");
    goto done;
  }
  printf("stats     %llu runs, %llu failures%s%s\n", (unsigned long long)stats.runs, (unsigned long long)stats.failures,
         stats.fallback_reason[0] ? ", fallback: " : "", stats.fallback_reason);
  rc = 0;

done:
  if (have_ys) tensors_free(ys, info.num_outputs);
  if (have_xs) tensors_free(xs, info.num_inputs);
  A->runner_destroy(runner);
  A->runner_options_free(ro);
  A->package_close(pkg);
  A->set_log_callback(NULL, NULL);
  return rc;
}
