/* Test packages "rel_<mode>": a plain C package (no SDK) that breaks one rule
 * of the package ABI, chosen at compile time by MISBEHAVE (see
 * tests/reliability/CMakeLists.txt for the list). Everything else behaves:
 * input x float32 [-1, 4], output y float32 [-1, 4], y = x, run inline on the
 * calling thread. The host must turn each broken rule into a clear status. */
#include <stdlib.h>
#include <string.h>

#include <aotrun/package_abi.h>

#include "spec_fill.h"

#define EXPORT __attribute__((visibility("default")))

/* Modes. */
#define MB_SPEC_SHORT 1        /* input spec: fills fewer bytes than ABI 1.0 needs */
#define MB_SPEC_RANK 2         /* input spec: ndim 33 */
#define MB_SPEC_NULL_SHAPE 3   /* input spec: ndim 2 with shape NULL */
#define MB_MANY_TENSORS 4      /* reports 1 << 20 inputs */
#define MB_NEG_OUTPUT_DIM 5    /* get_output_shapes reports -5 */
#define MB_CREATE_NULL 6       /* create returns OK but no container */
#define MB_RUN_RUNTIME 7       /* run fails with RUNTIME and a message */
#define MB_RUN_NO_MESSAGE 8    /* run fails, get_last_error returns NULL */
#define MB_CREATE_OOM 9        /* create with num_models > 0 fails OUT_OF_MEMORY */
#define MB_SPECS_FAIL 10       /* get_num_inputs fails */
#define MB_HUGE_OUTPUT 11      /* get_output_shapes reports [2^62, 4] */
#define MB_RUN_INVALID 12      /* run fails with INVALID_ARGUMENT */
#define MB_CREATE_FAILS 13     /* create (even metadata-only) fails with RUNTIME */
#define MB_CONTRADICT_SHAPE 14 /* get_output_shapes reports [n, 5] for the declared [-1, 4] */
#define MB_SPEC_BAD_DIM 15     /* input spec: dim -7 (only -1 means "any") */
#define MB_SPEC_BAD_DTYPE 16   /* output spec: dtype float with 0 bits */

#ifndef MISBEHAVE
#error "define MISBEHAVE"
#endif

struct aotrun_pkg_container {
  int32_t num_models;
};

static _Thread_local const char* g_message = "";
static const int64_t k_spec_shape[2] = {-1, 4};

static int32_t failure(int32_t code, const char* message) {
  g_message = message;
  return code;
}

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 1); }

EXPORT const char* aotrun_pkg_get_last_error(void) {
#if MISBEHAVE == MB_RUN_NO_MESSAGE
  return NULL;
#else
  return g_message;
#endif
}

EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (out == NULL || args == NULL) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "misbehave: NULL argument");
#if MISBEHAVE == MB_CREATE_NULL
  *out = NULL;
  return AOTRUN_PKG_OK;
#elif MISBEHAVE == MB_CREATE_FAILS
  return failure(AOTRUN_PKG_ERR_RUNTIME, "misbehave: cannot create a container");
#else
#if MISBEHAVE == MB_CREATE_OOM
  if (args->num_models > 0)
    return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "misbehave: out of memory for the model instances");
#endif
  aotrun_pkg_container* c = (aotrun_pkg_container*)calloc(1, sizeof(*c));
  if (c == NULL) return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "misbehave: calloc failed");
  c->num_models = args->num_models;
  *out = c;
  return AOTRUN_PKG_OK;
#endif
}

EXPORT int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {
  free(c);
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
#if MISBEHAVE == MB_SPECS_FAIL
  (void)out;
  return failure(AOTRUN_PKG_ERR_RUNTIME, "misbehave: cannot count inputs");
#elif MISBEHAVE == MB_MANY_TENSORS
  *out = (size_t)1 << 20;
  return AOTRUN_PKG_OK;
#else
  *out = 1;
  return AOTRUN_PKG_OK;
#endif
}

EXPORT int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  *out = 1;
  return AOTRUN_PKG_OK;
}

static int32_t fill_spec(const char* name, aotrun_pkg_tensor_spec* out) {
  return fill_f32_spec(name, 2, k_spec_shape, out);
}

EXPORT int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  fill_spec("x", out);
#if MISBEHAVE == MB_SPEC_SHORT
  out->struct_size = sizeof(size_t); /* claims to have filled only struct_size */
#elif MISBEHAVE == MB_SPEC_RANK
  out->ndim = 33;
#elif MISBEHAVE == MB_SPEC_NULL_SHAPE
  out->shape = NULL;
#elif MISBEHAVE == MB_SPEC_BAD_DIM
  static const int64_t bad[2] = {-7, 4};
  out->shape = bad;
#endif
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index,
                                                    aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  fill_spec("y", out);
#if MISBEHAVE == MB_SPEC_BAD_DTYPE
  out->dtype.bits = 0;
#endif
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) {
  (void)c;
  if (args->num_inputs != 1 || args->output_shapes_capacity < 2) {
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "misbehave: bad shape query");
  }
#if MISBEHAVE == MB_NEG_OUTPUT_DIM
  args->output_shapes[0] = -5;
#elif MISBEHAVE == MB_HUGE_OUTPUT
  args->output_shapes[0] = (int64_t)1 << 62;
#else
  args->output_shapes[0] = args->inputs[0].shape[0];
#endif
#if MISBEHAVE == MB_CONTRADICT_SHAPE
  args->output_shapes[1] = 5;
#else
  args->output_shapes[1] = 4;
#endif
  return AOTRUN_PKG_OK;
}

static int32_t run_impl(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (c == NULL || c->num_models == 0) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "misbehave: metadata container");
#if MISBEHAVE == MB_RUN_RUNTIME
  (void)args;
  return failure(AOTRUN_PKG_ERR_RUNTIME, "misbehave: run failed on purpose");
#elif MISBEHAVE == MB_RUN_NO_MESSAGE
  (void)args;
  return AOTRUN_PKG_ERR_RUNTIME;
#elif MISBEHAVE == MB_RUN_INVALID
  (void)args;
  return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "misbehave: input rejected by the package");
#elif MISBEHAVE == MB_HUGE_OUTPUT
  /* Writes nothing: the point is what the host allocated for the shape. */
  (void)args;
  return AOTRUN_PKG_OK;
#else
  const DLTensor* x = &args->inputs[0];
  DLTensor* y = &args->outputs[0];
  size_t bytes = (size_t)x->shape[0] * 4 * sizeof(float);
  if (bytes) memcpy(y->data, x->data, bytes);
  return AOTRUN_PKG_OK;
#endif
}

EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  return run_impl(c, args);
}

EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  return run_impl(c, args);
}
