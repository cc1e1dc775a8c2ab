/*
 * aotrun package ABI — what a compiled model package (a shared library) exports.
 *
 * A package is a plain ELF shared object. The host (libaotrun) dlopens it with
 * RTLD_NOW | RTLD_LOCAL, resolves the required symbols below, probes the optional
 * ones, and talks to it only through these C functions and structs.
 *
 * Rules every package follows (see abi/ABI.md for the full policy):
 *   - Every function returns an int32_t status: 0 (AOTRUN_PKG_OK) on success.
 *     On failure the message is available from aotrun_pkg_get_last_error() on the
 *     same thread until the next call into the package on that thread.
 *   - No C++ exception, longjmp or signal ever leaves a package function.
 *   - Args structs start with `size_t struct_size`. The caller sets it to the size
 *     it knows; the callee reads only min(struct_size, its own size) bytes and
 *     defaults the rest. Out-structs (tensor specs) are zeroed by the caller, who
 *     sets struct_size to the capacity; the callee writes at most that many bytes
 *     and stores back in struct_size how many bytes it filled.
 *   - New operations are new symbols (probed with dlsym); new parameters are new
 *     fields at the end of an args struct. Nothing is ever removed or reordered.
 *   - aotrun_pkg_abi_version() reports the version the package was built against.
 *     The host refuses a different major and accepts any minor.
 *
 * Version history (the changelog is abi/ABI.md):
 *   1.0  required entry points, host services table.
 *   1.1  aotrun_pkg_container_run_single_threaded (probed).
 *
 * Tensors are DLPack DLTensor (dlpack.h, DLPACK_VERSION >= 60).
 *
 * What the host defends against (a package that breaks the rules above gets
 * an error, not a crash of the host process):
 *   - A C++ exception of any type escaping any entry point, a function given
 *     to launch, or a launch context's destroy: caught at the boundary and
 *     reported as the host API's PACKAGE error, naming the package and the
 *     entry point ("package 'p': run threw std::runtime_error: ..."; "threw
 *     an exception that is not a std::exception (int)"), on every path:
 *     synchronous and asynchronous runs, worker streams, graph capture and
 *     replay, metadata at open, output shapes, runner creation. Where nobody
 *     can be told (container_destroy when a runner is destroyed, the
 *     destroy of a context released with a captured graph) it is logged.
 *   - Sizes: every size the host derives from a package's request (alloc),
 *     a caller's tensor (element count x item size, strides, byte_offset +
 *     extent) or a file is overflow-checked. alloc of a size whose rounding
 *     to 256 bytes overflows (SIZE_MAX, SIZE_MAX - 100) fails with
 *     AOTRUN_PKG_ERR_OUT_OF_MEMORY and *out = NULL, never a small block.
 *   - Values returned: counts, tensor specs and output shapes are checked
 *     against the limits above and the package's own declarations.
 * What it does NOT defend against (undefined behaviour, as in any C library):
 *   - handles or pointers passed back to host services that the host did not
 *     hand out, or that were already freed or destroyed;
 *   - writes outside the buffers given (outputs, alloc'd blocks) and writes
 *     to constants;
 *   - calls of host services contrary to their contract: after the container
 *     was destroyed, from threads or work that outlive it, on a stream the
 *     host did not give;
 *   - crashes inside package code (SIGSEGV, abort), longjmp, or a package
 *     function that never returns.
 */
#ifndef AOTRUN_PACKAGE_ABI_H_
#define AOTRUN_PACKAGE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------- */

#define AOTRUN_PKG_ABI_MAJOR 1
#define AOTRUN_PKG_ABI_MINOR 1

/* Encodes a version as returned by aotrun_pkg_abi_version(). */
#define AOTRUN_PKG_MAKE_VERSION(major, minor) ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xFFFFu)))
#define AOTRUN_PKG_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define AOTRUN_PKG_VERSION_MINOR(v) ((uint32_t)(v)&0xFFFFu)

#define AOTRUN_PKG_ABI_VERSION AOTRUN_PKG_MAKE_VERSION(AOTRUN_PKG_ABI_MAJOR, AOTRUN_PKG_ABI_MINOR)

/* ---------------------------------------------------------------------------
 * Status codes. The capture codes carry CUDA's numbers on purpose: a package
 * running on CUDA may return the cudaError_t it got unchanged.
 * ------------------------------------------------------------------------- */

#define AOTRUN_PKG_OK 0
#define AOTRUN_PKG_ERR_INVALID_ARGUMENT 1 /* bad tensor, count, index, NULL */
#define AOTRUN_PKG_ERR_OUT_OF_MEMORY 2
#define AOTRUN_PKG_ERR_RUNTIME 3               /* the model itself failed */
#define AOTRUN_PKG_ERR_UNSUPPORTED 4           /* device / dtype / feature not built in */
#define AOTRUN_PKG_ERR_INTERNAL 5              /* a bug, or an exception caught at the edge */
#define AOTRUN_PKG_NOT_READY 600               /* event_query: work still pending (cudaErrorNotReady) */
#define AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED 900 /* cudaErrorStreamCaptureUnsupported */
#define AOTRUN_PKG_ERR_CAPTURE_INVALIDATED 901 /* cudaErrorStreamCaptureInvalidated */

/* Log levels, shared with the host API. */
#define AOTRUN_PKG_LOG_ERROR 0
#define AOTRUN_PKG_LOG_WARN 1
#define AOTRUN_PKG_LOG_INFO 2
#define AOTRUN_PKG_LOG_DEBUG 3

/* ---------------------------------------------------------------------------
 * Handles
 * ------------------------------------------------------------------------- */

/* A package's model container: N model instances plus their bookkeeping.
 * Defined by the package; the host only holds pointers to it. */
typedef struct aotrun_pkg_container aotrun_pkg_container;

/* Streams and events belong to the host. On CUDA devices they are the
 * cudaStream_t / cudaEvent_t themselves, and the host always passes a real
 * stream in run args (never NULL: CUDA's NULL is the legacy stream); on CPU
 * they are host objects that only the host services below can operate on.
 * A NULL stream given to a host service = the container's own stream. */
typedef void* aotrun_pkg_stream;
typedef void* aotrun_pkg_event;

/* Work enqueued with aotrun_pkg_host.launch. Returns a status; on failure the
 * host reads aotrun_pkg_get_last_error() on the thread that ran it, records
 * the error on the stream, and reports it to whoever waits for that work. */
typedef int32_t (*aotrun_pkg_host_fn)(void* ctx);
/* Releases a launch context. The host calls it exactly once for every launch,
 * whatever happens: after fn ran (even if fn failed), when a graph that
 * recorded the launch is destroyed, or before launch returns if the launch is
 * refused. The package never releases a launched context itself. */
typedef void (*aotrun_pkg_ctx_destroy_fn)(void* ctx);

/* ---------------------------------------------------------------------------
 * Host services: passed by the host at container creation, valid until the
 * container is destroyed. All function pointers are non-NULL. Every function
 * may be called from any thread.
 *
 * On CPU devices, the stream and event operations follow CUDA's stream capture
 * rules in global mode: while any stream is capturing, event_query,
 * event_synchronize and stream_synchronize fail with
 * AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED and invalidate the capture; launch and
 * event_record on a capturing stream are recorded, not executed.
 * ------------------------------------------------------------------------- */
typedef struct aotrun_pkg_host {
  size_t struct_size;
  void* host_ctx; /* first argument of every function below */

  /* Logging. log_enabled is cheap; call it before formatting a message. */
  int32_t (*log_enabled)(void* host_ctx, int32_t level);
  void (*log)(void* host_ctx, int32_t level, const char* message);

  /* Device memory for the container's device, 256-byte aligned. Stream-ordered:
   * safe to call while `stream` is capturing (the host serves it from the
   * runner's pool). */
  int32_t (*alloc)(void* host_ctx, size_t bytes, aotrun_pkg_stream stream, void** out);
  int32_t (*free)(void* host_ctx, void* ptr, aotrun_pkg_stream stream);

  /* Enqueue fn(ctx) on stream (CPU analogue of a kernel launch /
   * cudaLaunchHostFunc). destroy (may be NULL) follows the rule of
   * aotrun_pkg_ctx_destroy_fn. On an inline stream fn runs before launch
   * returns and its failure is launch's result; on a worker stream a failure
   * of fn is reported to whoever waits for the work. */
  int32_t (*launch)(void* host_ctx, aotrun_pkg_stream stream, aotrun_pkg_host_fn fn, void* ctx,
                    aotrun_pkg_ctx_destroy_fn destroy);

  int32_t (*event_create)(void* host_ctx, aotrun_pkg_event* out);
  int32_t (*event_destroy)(void* host_ctx, aotrun_pkg_event event);
  /* Marks the point in `stream` after all work enqueued so far. */
  int32_t (*event_record)(void* host_ctx, aotrun_pkg_event event, aotrun_pkg_stream stream);
  /* AOTRUN_PKG_OK when complete (or never recorded), AOTRUN_PKG_NOT_READY when not.
   * Events report completion only: a failure of work enqueued before the
   * event is not reported by event_query / event_synchronize but to the host's
   * waiter of that work (so a package never inherits another run's failure). */
  int32_t (*event_query)(void* host_ctx, aotrun_pkg_event event);
  int32_t (*event_synchronize)(void* host_ctx, aotrun_pkg_event event);
  int32_t (*stream_synchronize)(void* host_ctx, aotrun_pkg_stream stream);
  /* *out = 1 while `stream` is being captured, else 0. Always legal. */
  int32_t (*stream_is_capturing)(void* host_ctx, aotrun_pkg_stream stream, int32_t* out);
} aotrun_pkg_host;

#define AOTRUN_PKG_HOST_STRUCT_SIZE_1_0 (offsetof(aotrun_pkg_host, stream_is_capturing) + sizeof(void*))

/* ---------------------------------------------------------------------------
 * Container creation
 * ------------------------------------------------------------------------- */

/* A named constant (weight). Owned by the host; valid until the container is
 * destroyed. On CPU the data is typically an mmap of the package's weights
 * file (read-only: packages must not write to constants). */
typedef struct aotrun_pkg_constant {
  const char* name;
  DLTensor tensor;
} aotrun_pkg_constant;

typedef struct aotrun_pkg_create_args {
  size_t struct_size;
  /* Number of model instances. 0 asks for a metadata-only container: specs and
   * output shapes work, run functions fail with INVALID_ARGUMENT, no device
   * resources are taken and constants may be absent. */
  int32_t num_models;
  DLDevice device;
  const aotrun_pkg_host* host;
  const aotrun_pkg_constant* constants;
  size_t num_constants;
  /* Directory holding the package's files, or NULL for a bare .so. */
  const char* package_dir;
} aotrun_pkg_create_args;

#define AOTRUN_PKG_CREATE_ARGS_STRUCT_SIZE_1_0 (offsetof(aotrun_pkg_create_args, package_dir) + sizeof(const char*))

/* ---------------------------------------------------------------------------
 * Tensor specs. shape[i] == -1 marks a dynamic dimension. Pointers are owned
 * by the container and valid until it is destroyed. A package fills at least
 * the 1.0 layout (AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0 bytes); the host
 * refuses a package that reports less.
 * ------------------------------------------------------------------------- */
typedef struct aotrun_pkg_tensor_spec {
  size_t struct_size;
  const char* name;
  DLDataType dtype;
  int32_t ndim;
  const int64_t* shape;
} aotrun_pkg_tensor_spec;

#define AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0 (offsetof(aotrun_pkg_tensor_spec, shape) + sizeof(const int64_t*))

/* ---------------------------------------------------------------------------
 * Output shapes for given input shapes. A pure function of the input shapes
 * and dtypes (the host may cache its results), callable from any thread.
 * ------------------------------------------------------------------------- */
typedef struct aotrun_pkg_shape_args {
  size_t struct_size;
  /* Only ndim, shape and dtype of each input are read; data may be NULL. */
  const DLTensor* inputs;
  size_t num_inputs;
  /* Out: the shapes of all outputs, concatenated in output order; output i
   * has the ndim of its spec. */
  int64_t* output_shapes;
  size_t output_shapes_capacity; /* elements available in output_shapes */
} aotrun_pkg_shape_args;

#define AOTRUN_PKG_SHAPE_ARGS_STRUCT_SIZE_1_0 (offsetof(aotrun_pkg_shape_args, output_shapes_capacity) + sizeof(size_t))

/* ---------------------------------------------------------------------------
 * Running. Inputs and outputs live on the container's device, are contiguous
 * (strides NULL or compact row-major) and are owned by the caller. Outputs
 * have the shapes get_output_shapes reports. The run is enqueued on `stream`:
 * when the function returns, the work may still be pending on that stream.
 * ------------------------------------------------------------------------- */
typedef struct aotrun_pkg_run_args {
  size_t struct_size;
  const DLTensor* inputs;
  size_t num_inputs;
  DLTensor* outputs;
  size_t num_outputs;
  aotrun_pkg_stream stream;
} aotrun_pkg_run_args;

#define AOTRUN_PKG_RUN_ARGS_STRUCT_SIZE_1_0 (offsetof(aotrun_pkg_run_args, stream) + sizeof(aotrun_pkg_stream))

/* ---------------------------------------------------------------------------
 * Entry points. Symbol names are the contract; the typedefs are what the host
 * casts dlsym results to.
 * ------------------------------------------------------------------------- */

/* 1.0, required. (major << 16) | minor the package was built against. */
typedef uint32_t (*aotrun_pkg_abi_version_fn)(void);
/* 1.0, required. Message of the last failure on the calling thread ("" if
 * none). Owned by the package; valid until the next call on this thread. */
typedef const char* (*aotrun_pkg_get_last_error_fn)(void);

/* 1.0, required. */
typedef int32_t (*aotrun_pkg_container_create_fn)(aotrun_pkg_container** out, const aotrun_pkg_create_args* args);
typedef int32_t (*aotrun_pkg_container_destroy_fn)(aotrun_pkg_container* c);
typedef int32_t (*aotrun_pkg_container_get_num_inputs_fn)(aotrun_pkg_container* c, size_t* out);
typedef int32_t (*aotrun_pkg_container_get_num_outputs_fn)(aotrun_pkg_container* c, size_t* out);
typedef int32_t (*aotrun_pkg_container_get_input_spec_fn)(aotrun_pkg_container* c, size_t index,
                                                          aotrun_pkg_tensor_spec* out);
typedef int32_t (*aotrun_pkg_container_get_output_spec_fn)(aotrun_pkg_container* c, size_t index,
                                                           aotrun_pkg_tensor_spec* out);
typedef int32_t (*aotrun_pkg_container_get_output_shapes_fn)(aotrun_pkg_container* c,
                                                             const aotrun_pkg_shape_args* args);
/* Thread-safe: any number of threads may call it concurrently. Takes a free
 * model instance (waiting on its completion event if all are pending), enqueues
 * the forward on args->stream, records the instance's event, returns it to the
 * pool. Uses event query/synchronize, so it is NOT legal under stream capture. */
typedef int32_t (*aotrun_pkg_container_run_fn)(aotrun_pkg_container* c, const aotrun_pkg_run_args* args);

/* 1.1, optional (probed). Uses instance 0 with no locks and no events; the
 * caller serialises calls. Legal under stream capture. */
typedef int32_t (*aotrun_pkg_container_run_single_threaded_fn)(aotrun_pkg_container* c,
                                                               const aotrun_pkg_run_args* args);

#define AOTRUN_PKG_SYM_ABI_VERSION "aotrun_pkg_abi_version"
#define AOTRUN_PKG_SYM_GET_LAST_ERROR "aotrun_pkg_get_last_error"
#define AOTRUN_PKG_SYM_CONTAINER_CREATE "aotrun_pkg_container_create"
#define AOTRUN_PKG_SYM_CONTAINER_DESTROY "aotrun_pkg_container_destroy"
#define AOTRUN_PKG_SYM_GET_NUM_INPUTS "aotrun_pkg_container_get_num_inputs"
#define AOTRUN_PKG_SYM_GET_NUM_OUTPUTS "aotrun_pkg_container_get_num_outputs"
#define AOTRUN_PKG_SYM_GET_INPUT_SPEC "aotrun_pkg_container_get_input_spec"
#define AOTRUN_PKG_SYM_GET_OUTPUT_SPEC "aotrun_pkg_container_get_output_spec"
#define AOTRUN_PKG_SYM_GET_OUTPUT_SHAPES "aotrun_pkg_container_get_output_shapes"
#define AOTRUN_PKG_SYM_RUN "aotrun_pkg_container_run"
#define AOTRUN_PKG_SYM_RUN_SINGLE_THREADED "aotrun_pkg_container_run_single_threaded"

/* Declarations for package authors (define the functions with these names). */
#ifndef AOTRUN_PKG_NO_DECLARATIONS
uint32_t aotrun_pkg_abi_version(void);
const char* aotrun_pkg_get_last_error(void);
int32_t aotrun_pkg_container_create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args);
int32_t aotrun_pkg_container_destroy(aotrun_pkg_container* c);
int32_t aotrun_pkg_container_get_num_inputs(aotrun_pkg_container* c, size_t* out);
int32_t aotrun_pkg_container_get_num_outputs(aotrun_pkg_container* c, size_t* out);
int32_t aotrun_pkg_container_get_input_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out);
int32_t aotrun_pkg_container_get_output_spec(aotrun_pkg_container* c, size_t index, aotrun_pkg_tensor_spec* out);
int32_t aotrun_pkg_container_get_output_shapes(aotrun_pkg_container* c, const aotrun_pkg_shape_args* args);
int32_t aotrun_pkg_container_run(aotrun_pkg_container* c, const aotrun_pkg_run_args* args);
int32_t aotrun_pkg_container_run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* args);
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Layout pins: a change here is an ABI break. */
#if defined(__cplusplus)
#define AOTRUN_PKG_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define AOTRUN_PKG_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
AOTRUN_PKG_STATIC_ASSERT(sizeof(aotrun_pkg_host) == AOTRUN_PKG_HOST_STRUCT_SIZE_1_0, "aotrun_pkg_host layout changed");
AOTRUN_PKG_STATIC_ASSERT(sizeof(aotrun_pkg_create_args) == AOTRUN_PKG_CREATE_ARGS_STRUCT_SIZE_1_0,
                         "aotrun_pkg_create_args layout changed");
AOTRUN_PKG_STATIC_ASSERT(sizeof(aotrun_pkg_tensor_spec) == AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0,
                         "aotrun_pkg_tensor_spec layout changed");
AOTRUN_PKG_STATIC_ASSERT(sizeof(aotrun_pkg_shape_args) == AOTRUN_PKG_SHAPE_ARGS_STRUCT_SIZE_1_0,
                         "aotrun_pkg_shape_args layout changed");
AOTRUN_PKG_STATIC_ASSERT(sizeof(aotrun_pkg_run_args) == AOTRUN_PKG_RUN_ARGS_STRUCT_SIZE_1_0,
                         "aotrun_pkg_run_args layout changed");

#endif /* AOTRUN_PACKAGE_ABI_H_ */
