/* Test package "rel_sizes": a plain C package (no SDK) that asks the host's
 * alloc service for sizes whose rounding to 256-byte blocks wraps, on every
 * run and capture. The host must answer OUT_OF_MEMORY with *out = NULL, never
 * a (zero-byte) block; any other answer fails the run with a message saying
 * which size got what. It also checks that ordinary sizes still work: 0 and
 * 1000 bytes give distinct 256-byte aligned blocks that can be written.
 * x float32 [-1, 4] -> y float32 [-1, 4]; the tensors are never touched, so
 * a test may hand it descriptors whose data pointers must not be used.
 * Built with SIZES_NO_ALLOC ("rel_sizes_noop") its runs do nothing at all. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aotrun/package_abi.h>

#include "spec_fill.h"

#define EXPORT __attribute__((visibility("default")))

struct aotrun_pkg_container {
  int32_t num_models;
  const aotrun_pkg_host* host;
};

static _Thread_local char g_message[256];
static const int64_t k_spec_shape[2] = {-1, 4};

static int32_t failure(int32_t code, const char* message) {
  snprintf(g_message, sizeof g_message, "%s", message);
  return code;
}

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 1); }

EXPORT const char* aotrun_pkg_get_last_error(void) { return g_message; }

EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (out == NULL || args == NULL) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "sizes: NULL argument");
  aotrun_pkg_container* c = (aotrun_pkg_container*)calloc(1, sizeof(*c));
  if (c == NULL) return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "sizes: calloc failed");
  c->num_models = args->num_models;
  c->host = args->host;
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

static int32_t fill_spec(const char* name, aotrun_pkg_tensor_spec* out) {
  return fill_f32_spec(name, 2, k_spec_shape, out);
}

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
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "sizes: bad shape query");
  }
  args->output_shapes[0] = args->inputs[0].shape[0];
  args->output_shapes[1] = 4;
  return AOTRUN_PKG_OK;
}

/* An ordinary block: non-NULL, 256-byte aligned, writable; freed again. */
static int32_t check_ordinary(const aotrun_pkg_host* h, aotrun_pkg_stream stream, size_t bytes) {
  void* p = NULL;
  int32_t rc = h->alloc(h->host_ctx, bytes, stream, &p);
  if (rc != AOTRUN_PKG_OK || p == NULL || ((uintptr_t)p % 256) != 0) {
    snprintf(g_message, sizeof g_message, "sizes: alloc(%zu) gave status %d and block %p", bytes, (int)rc, p);
    return AOTRUN_PKG_ERR_RUNTIME;
  }
  if (bytes) memset(p, 0xA5, bytes);
  return h->free(h->host_ctx, p, stream);
}

static int32_t run_impl(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (c == NULL || c->num_models == 0) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "sizes: metadata container");
#ifdef SIZES_NO_ALLOC
  (void)args;
  return AOTRUN_PKG_OK;
#endif
  const aotrun_pkg_host* h = c->host;
  const size_t huge[3] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2 + 1};
  for (int i = 0; i < 3; ++i) {
    void* p = (void*)h; /* a sentinel: must become NULL */
    int32_t rc = h->alloc(h->host_ctx, huge[i], args->stream, &p);
    if (rc == AOTRUN_PKG_OK) {
      snprintf(g_message, sizeof g_message, "sizes: alloc(%zu) succeeded with block %p", huge[i], p);
      h->free(h->host_ctx, p, args->stream);
      return AOTRUN_PKG_ERR_RUNTIME;
    }
    if (rc != AOTRUN_PKG_ERR_OUT_OF_MEMORY || p != NULL) {
      snprintf(g_message, sizeof g_message, "sizes: alloc(%zu) failed with status %d and left *out = %p", huge[i],
               (int)rc, p);
      return AOTRUN_PKG_ERR_RUNTIME;
    }
  }
  int32_t rc = check_ordinary(h, args->stream, 0);
  if (rc == AOTRUN_PKG_OK) rc = check_ordinary(h, args->stream, 1000);
  return rc;
}

EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  return run_impl(c, args);
}

EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  return run_impl(c, args);
}
