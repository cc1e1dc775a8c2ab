/* Test package "rel_abi10_exports_st": a plain C package that declares ABI
 * 1.0 yet exports aotrun_pkg_container_run_single_threaded, a 1.1 entry
 * point. The host must report the symbol as exported but never call it:
 * every mode runs through `run`. Input x float32 [-1, 4], output y = x.
 * Its run_single_threaded fails, so a call to it shows up as a failed run. */
#include <string.h>
#include <stdlib.h>

#include <aotrun/package_abi.h>

#include "spec_fill.h"

#define EXPORT __attribute__((visibility("default")))

struct aotrun_pkg_container {
  int32_t num_models;
};

static _Thread_local const char* g_message = "";
static const int64_t k_shape[2] = {-1, 4};

static int32_t failure(int32_t code, const char* message) {
  g_message = message;
  return code;
}

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 0); }

EXPORT const char* aotrun_pkg_get_last_error(void) { return g_message; }

EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (out == NULL || args == NULL) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "abi10_exports_st: NULL argument");
  aotrun_pkg_container* c = (aotrun_pkg_container*)calloc(1, sizeof(*c));
  if (c == NULL) return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "abi10_exports_st: calloc failed");
  c->num_models = args->num_models;
  *out = c;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {
  free(c);
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  *out = 1;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  *out = 1;
  return AOTRUN_PKG_OK;
}

static int32_t fill_spec(const char* name, aotrun_pkg_tensor_spec* out) { return fill_f32_spec(name, 2, k_shape, out); }

EXPORT int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  return fill_spec("x", out);
}

EXPORT int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index,
                                                    aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  return fill_spec("y", out);
}

EXPORT int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) {
  (void)c;
  if (args->num_inputs != 1 || args->output_shapes_capacity < 2) {
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "abi10_exports_st: bad shape query");
  }
  args->output_shapes[0] = args->inputs[0].shape[0];
  args->output_shapes[1] = 4;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (c == NULL || c->num_models == 0)
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "abi10_exports_st: metadata container");
  const DLTensor* x = &args->inputs[0];
  size_t bytes = (size_t)x->shape[0] * 4 * sizeof(float);
  if (bytes) memcpy(args->outputs[0].data, x->data, bytes);
  return AOTRUN_PKG_OK;
}

/* A function of the package's own that happens to carry the 1.1 name: a 1.0
 * package gives it no 1.1 meaning, so the host must not call it. */
EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  (void)c;
  (void)args;
  return failure(AOTRUN_PKG_ERR_RUNTIME, "abi10_exports_st: run_single_threaded called on an ABI 1.0 package");
}
