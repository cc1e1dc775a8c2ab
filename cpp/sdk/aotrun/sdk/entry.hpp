// The exported entry points as templates over the model class. The export
// macro (export.hpp) defines each extern "C" symbol as a call to one of these.
// Every function catches all exceptions (guarded) and returns a status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <aotrun/package_abi.h>

#include "aotrun/sdk/args.hpp"
#include "aotrun/sdk/container.hpp"
#include "aotrun/sdk/error.hpp"

namespace aotrun {
namespace sdk {
namespace entry {

template <class Model>
int32_t create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) noexcept {
  return guarded("container_create", [&] {
    if (out == nullptr) fail_invalid("container_create: out is NULL");
    const aotrun_pkg_create_args a = read_args(args, AOTRUN_PKG_CREATE_ARGS_STRUCT_SIZE_1_0, "aotrun_pkg_create_args");
    auto container = std::make_unique<Container<Model>>(a);
    *out = container.release()->handle();
  });
}

template <class Model>
int32_t destroy(aotrun_pkg_container* c) noexcept {
  return guarded("container_destroy", [&] {
    if (c == nullptr) return;  // like free(NULL)
    delete Container<Model>::from_handle(c);
  });
}

template <class Model>
int32_t num_inputs(aotrun_pkg_container* c, size_t* out) noexcept {
  return guarded("get_num_inputs", [&] {
    auto* self = Container<Model>::from_handle(c);
    if (out == nullptr) fail_invalid("get_num_inputs: out is NULL");
    *out = self->num_inputs();
  });
}

template <class Model>
int32_t num_outputs(aotrun_pkg_container* c, size_t* out) noexcept {
  return guarded("get_num_outputs", [&] {
    auto* self = Container<Model>::from_handle(c);
    if (out == nullptr) fail_invalid("get_num_outputs: out is NULL");
    *out = self->num_outputs();
  });
}

template <class Model>
int32_t input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) noexcept {
  return guarded("get_input_spec", [&] { Container<Model>::from_handle(c)->input_spec(index, out); });
}

template <class Model>
int32_t output_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out) noexcept {
  return guarded("get_output_spec", [&] { Container<Model>::from_handle(c)->output_spec(index, out); });
}

template <class Model>
int32_t output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args) noexcept {
  return guarded("get_output_shapes", [&] {
    auto* self = Container<Model>::from_handle(c);
    const aotrun_pkg_shape_args a = read_args(args, AOTRUN_PKG_SHAPE_ARGS_STRUCT_SIZE_1_0, "aotrun_pkg_shape_args");
    self->get_output_shapes(a);
  });
}

template <class Model>
int32_t run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) noexcept {
  return guarded("run", [&] {
    auto* self = Container<Model>::from_handle(c);
    self->run(read_args(args, AOTRUN_PKG_RUN_ARGS_STRUCT_SIZE_1_0, "aotrun_pkg_run_args"));
  });
}

template <class Model>
int32_t run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) noexcept {
  return guarded("run_single_threaded", [&] {
    auto* self = Container<Model>::from_handle(c);
    self->run_single_threaded(read_args(args, AOTRUN_PKG_RUN_ARGS_STRUCT_SIZE_1_0, "aotrun_pkg_run_args"));
  });
}

}  // namespace entry
}  // namespace sdk
}  // namespace aotrun
