/* Test packages for `aotrun compat` (tools/tests/compat_test.py): plain C
 * packages (ABI 1.1, input x float32 [-1, 4], output y = x) that open
 * normally and then, on their first run, do what BEHAVE says:
 *   1 crash: print a line to stderr and write through a NULL pointer (SIGSEGV)
 *   2 hang:  print a line to stderr and sleep forever
 *   3 abort: print a line to stderr and call abort() (SIGABRT)
 * The sweep must turn each into a failed row and go on. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aotrun/package_abi.h>

#include "spec_fill.h" /* tests/reliability/packages */

#define EXPORT __attribute__((visibility("default")))

#ifndef BEHAVE
#error "define BEHAVE"
#endif

struct aotrun_pkg_container {
  int32_t num_models;
};

static const int64_t k_shape[2] = {-1, 4};

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 1); }

EXPORT const char* aotrun_pkg_get_last_error(void) { return ""; }

EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (out == NULL || args == NULL) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  aotrun_pkg_container* c = (aotrun_pkg_container*)calloc(1, sizeof(*c));
  if (c == NULL) return AOTRUN_PKG_ERR_OUT_OF_MEMORY;
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

EXPORT int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  return fill_f32_spec("x", 2, k_shape, out);
}

EXPORT int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index,
                                                    aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  return fill_f32_spec("y", 2, k_shape, out);
}

EXPORT int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) {
  (void)c;
  if (args->num_inputs != 1 || args->output_shapes_capacity < 2) return AOTRUN_PKG_ERR_INVALID_ARGUMENT;
  args->output_shapes[0] = args->inputs[0].shape[0];
  args->output_shapes[1] = 4;
  return AOTRUN_PKG_OK;
}

static int32_t run_impl(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  (void)c;
  (void)args;
#if BEHAVE == 1
  fprintf(stderr, "compat_crash: about to write through a NULL pointer\n");
  fflush(stderr);
  *(volatile int*)0 = 1;
#elif BEHAVE == 2
  fprintf(stderr, "compat_hang: sleeping forever\n");
  fflush(stderr);
  for (;;) pause();
#elif BEHAVE == 3
  fprintf(stderr, "compat_abort: calling abort()\n");
  fflush(stderr);
  abort();
#endif
  return AOTRUN_PKG_ERR_RUNTIME;
}

EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  return run_impl(c, args);
}

EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  return run_impl(c, args);
}
