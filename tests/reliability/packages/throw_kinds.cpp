// Test packages "rel_throw_<where>": a C++ package written against
// package_abi.h directly (no SDK, so nothing catches for it) that lets an
// exception escape from one place, chosen at compile time by THROW_AT (see
// tests/reliability/CMakeLists.txt). Everything else behaves: x float32
// [-1, 4] -> y = x, computed by a function launched on the run's stream.
// The host must turn every throw into a PACKAGE error; nothing may end the
// process.
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <aotrun/package_abi.h>

#define EXPORT extern "C" __attribute__((visibility("default")))

#define TK_RUN_INT 1         // run throws 42
#define TK_ST_STRING 2       // run_single_threaded throws std::string
#define TK_LAUNCH_RUNTIME 3  // the launched function throws std::runtime_error
#define TK_LAUNCH_INT 4      // the launched function throws 7
#define TK_CTX_DESTROY 5     // the launch context's destroy throws std::runtime_error
#define TK_SHAPES 6          // get_output_shapes throws std::out_of_range
#define TK_CREATE 7          // container_create with num_models > 0 throws std::runtime_error
#define TK_DESTROY 8         // container_destroy of a runner's container throws std::logic_error
#define TK_INPUT_SPEC 9      // get_input_spec throws 3.5 (a double)

#ifndef THROW_AT
#error "define THROW_AT"
#endif

struct aotrun_pkg_container {
  int32_t num_models;
  const aotrun_pkg_host* host;
};

namespace {

thread_local const char* g_message = "";
const int64_t kSpecShape[2] = {-1, 4};

int32_t failure(int32_t code, const char* message) {
  g_message = message;
  return code;
}

int32_t fill_spec(const char* name, aotrun_pkg_tensor_spec* out) {
  aotrun_pkg_tensor_spec s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.name = name;
  s.dtype = DLDataType{kDLFloat, 32, 1};
  s.ndim = 2;
  s.shape = kSpecShape;
  const size_t n = out->struct_size < sizeof(s) ? out->struct_size : sizeof(s);
  std::memcpy(out, &s, n);
  out->struct_size = n;
  return AOTRUN_PKG_OK;
}

struct Copy {
  const float* x;
  float* y;
  size_t n;
};

int32_t copy_fn(void* p) {
  auto* c = static_cast<Copy*>(p);
#if THROW_AT == TK_LAUNCH_RUNTIME
  (void)c;
  throw std::runtime_error("the launched copy failed on purpose");
#elif THROW_AT == TK_LAUNCH_INT
  (void)c;
  throw 7;
#else
  if (c->n) std::memcpy(c->y, c->x, c->n * sizeof(float));
  return AOTRUN_PKG_OK;
#endif
}

void copy_destroy(void* p) {
  std::free(p);
#if THROW_AT == TK_CTX_DESTROY
  throw std::runtime_error("releasing the launch context failed on purpose");
#endif
}

int32_t run_impl(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
  if (c == nullptr || c->num_models == 0)
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "throw_kinds: metadata container");
  auto* w = static_cast<Copy*>(std::malloc(sizeof(Copy)));
  if (w == nullptr) return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "throw_kinds: malloc failed");
  w->x = static_cast<const float*>(args->inputs[0].data);
  w->y = static_cast<float*>(args->outputs[0].data);
  w->n = static_cast<size_t>(args->inputs[0].shape[0]) * 4;
  // The host owns w from here and releases it through copy_destroy.
  const int32_t rc = c->host->launch(c->host->host_ctx, args->stream, &copy_fn, w, &copy_destroy);
  return rc == AOTRUN_PKG_OK ? AOTRUN_PKG_OK : failure(rc, "throw_kinds: launch failed");
}

}  // namespace

EXPORT uint32_t aotrun_pkg_abi_version(void) { return AOTRUN_PKG_MAKE_VERSION(1, 1); }

EXPORT const char* aotrun_pkg_get_last_error(void) { return g_message; }

EXPORT int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) {
  if (out == nullptr || args == nullptr) return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "throw_kinds: NULL argument");
#if THROW_AT == TK_CREATE
  if (args->num_models > 0) throw std::runtime_error("no model instances today");
#endif
  auto* c = static_cast<aotrun_pkg_container*>(std::calloc(1, sizeof(aotrun_pkg_container)));
  if (c == nullptr) return failure(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "throw_kinds: calloc failed");
  c->num_models = args->num_models;
  c->host = args->host;
  *out = c;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c) {
#if THROW_AT == TK_DESTROY
  const bool throws = c != nullptr && c->num_models > 0;
  std::free(c);
  if (throws) throw std::logic_error("destroy failed on purpose");
#else
  std::free(c);
#endif
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container*, size_t* out) {
  *out = 1;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container*, size_t* out) {
  *out = 1;
  return AOTRUN_PKG_OK;
}

EXPORT int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container*, size_t, aotrun_pkg_tensor_spec* out) {
#if THROW_AT == TK_INPUT_SPEC
  (void)out;
  throw 3.5;
#else
  return fill_spec("x", out);
#endif
}

EXPORT int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container*, size_t, aotrun_pkg_tensor_spec* out) {
  return fill_spec("y", out);
}

EXPORT int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container*, const aotrun_pkg_shape_args* args) {
#if THROW_AT == TK_SHAPES
  (void)args;
  throw std::out_of_range("no shapes for you");
#else
  if (args->num_inputs != 1 || args->output_shapes_capacity < 2) {
    return failure(AOTRUN_PKG_ERR_INVALID_ARGUMENT, "throw_kinds: bad shape query");
  }
  args->output_shapes[0] = args->inputs[0].shape[0];
  args->output_shapes[1] = 4;
  return AOTRUN_PKG_OK;
#endif
}

EXPORT int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
#if THROW_AT == TK_RUN_INT
  (void)c;
  (void)args;
  throw 42;
#else
  return run_impl(c, args);
#endif
}

EXPORT int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args) {
#if THROW_AT == TK_ST_STRING
  (void)c;
  (void)args;
  throw std::string("single-threaded run failed on purpose");
#else
  return run_impl(c, args);
#endif
}
