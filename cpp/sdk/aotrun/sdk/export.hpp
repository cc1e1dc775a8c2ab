// AOTRUN_PKG_EXPORT(ModelClass): defines every extern "C" entry point of the
// package ABI for ModelClass, with default visibility. Use it exactly once per
// package, at namespace scope in one source file:
//
//   AOTRUN_PKG_EXPORT(MyModel);
//
// With AOTRUN_PKG_TARGET_ABI == 10 the package reports ABI 1.0 and does not
// define aotrun_pkg_container_run_single_threaded (hosts probe for it).
#pragma once

#include <aotrun/package_abi.h>

#include "aotrun/sdk/config.hpp"
#include "aotrun/sdk/entry.hpp"
#include "aotrun/sdk/error.hpp"

#if AOTRUN_SDK_TARGET_MINOR >= 1
#define AOTRUN_SDK_DETAIL_EXPORT_1_1(Model)                                                          \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c,           \
                                                                  const aotrun_pkg_run_args* args) { \
    return ::aotrun::sdk::entry::run_single_threaded<Model>(c, args);                                \
  }
#else
#define AOTRUN_SDK_DETAIL_EXPORT_1_1(Model)
#endif

#define AOTRUN_PKG_EXPORT(Model)                                                                                       \
  AOTRUN_PKG_API uint32_t aotrun_pkg_abi_version(void) { return ::aotrun::sdk::kTargetAbiVersion; }                    \
  AOTRUN_PKG_API const char* aotrun_pkg_get_last_error(void) { return ::aotrun::sdk::last_error(); }                   \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) { \
    return ::aotrun::sdk::entry::create<Model>(out, args);                                                             \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {                                       \
    return ::aotrun::sdk::entry::destroy<Model>(c);                                                                    \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out) {                   \
    return ::aotrun::sdk::entry::num_inputs<Model>(c, out);                                                            \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out) {                  \
    return ::aotrun::sdk::entry::num_outputs<Model>(c, out);                                                           \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index,                    \
                                                             aotrun_pkg_tensor_spec* out) {                            \
    return ::aotrun::sdk::entry::input_spec<Model>(c, index, out);                                                     \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index,                   \
                                                              aotrun_pkg_tensor_spec* out) {                           \
    return ::aotrun::sdk::entry::output_spec<Model>(c, index, out);                                                    \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c,                               \
                                                                const aotrun_pkg_shape_args* args) {                   \
    return ::aotrun::sdk::entry::output_shapes<Model>(c, args);                                                        \
  }                                                                                                                    \
  AOTRUN_PKG_API int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {          \
    return ::aotrun::sdk::entry::run<Model>(c, args);                                                                  \
  }                                                                                                                    \
  AOTRUN_SDK_DETAIL_EXPORT_1_1(Model)                                                                                  \
  static_assert(true, "AOTRUN_PKG_EXPORT is followed by a semicolon")
