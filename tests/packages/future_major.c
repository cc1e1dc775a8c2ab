/* Test package "future_major": built against package_abi.h 1.1 but reports
 * ABI version 2.0 from aotrun_pkg_abi_version, as a package from a future
 * major version would. Hosts must refuse it (ABI mismatch) before calling
 * anything else; the other entry points exist and fail with UNSUPPORTED. */
#include <aotrun/package_abi.h>

#define EXPORT __attribute__((visibility("default")))

static const char* g_message = "";

static int32_t unsupported(void) {
  g_message = "future_major: this package targets package ABI 2.0";
  return AOTRUN_PKG_ERR_UNSUPPORTED;
}

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(2, 0); }
EXPORT const char* aotrun_pkg_get_last_error(void) { return g_message; }
EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  (void)out;
  (void)args;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {
  (void)c;
  return AOTRUN_PKG_OK;
}
EXPORT int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  (void)out;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out) {
  (void)c;
  (void)out;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  (void)out;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index,
                                                    aotrun_pkg_tensor_spec* out) {
  (void)c;
  (void)index;
  (void)out;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) {
  (void)c;
  (void)args;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  (void)c;
  (void)args;
  return unsupported();
}
EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  (void)c;
  (void)args;
  return unsupported();
}
