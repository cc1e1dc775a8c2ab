/* Test package "missing_symbols": an ABI 1.1 package that lacks two required
 * entry points, aotrun_pkg_container_get_output_shapes and
 * aotrun_pkg_container_destroy. Hosts must refuse it and name both. The
 * entry points that do exist fail with UNSUPPORTED. */
#include <aotrun/package_abi.h>

#define EXPORT __attribute__((visibility("default")))

static const char* g_message = "";

static int32_t unsupported(void) {
  g_message = "missing_symbols: this package is incomplete on purpose";
  return AOTRUN_PKG_ERR_UNSUPPORTED;
}

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 1); }
EXPORT const char* aotrun_pkg_get_last_error(void) { return g_message; }
EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  (void)out;
  (void)args;
  return unsupported();
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
