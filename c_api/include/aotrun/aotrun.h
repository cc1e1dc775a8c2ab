/*
 * aotrun — host C API of libaotrun.so.1.
 *
 * aotrun loads ahead-of-time compiled model packages and runs them on CPU or
 * CUDA devices, threaded, single-threaded, or captured into graphs.
 *
 * Conventions (they hold for every function below unless its comment says
 * otherwise):
 *   - Functions that can fail return `aotrun_status*`: NULL means success; a
 *     non-NULL status carries a code and a message, and the caller owns it and
 *     releases it with aotrun_status_free(). When a function fails, its out
 *     parameters are left untouched.
 *   - Handles are opaque. Every object created by `*_create` / `*_open` is
 *     released by the matching `*_free` / `*_close` / `*_destroy`; passing NULL
 *     to those is a no-op.
 *   - Strings returned by the library are owned by the object they came from
 *     and stay valid until that object is released.
 *   - Structs passed across the boundary start with `size_t struct_size`. The
 *     caller sets it to sizeof(the struct) as its header declares it; the
 *     library reads or writes only min(struct_size, its own size) bytes.
 *     Fields are only ever appended.
 *   - Tensors are DLPack DLTensor. Input and output tensors must be on the
 *     runner's device, compact row-major (strides NULL or matching), and are
 *     owned by the caller. An input of a .pt2 model compiled for another
 *     layout (channels_last) may also have exactly those strides; a
 *     row-major one is converted (docs/PT2.md).
 *   - No C++ exception crosses this API; an internal failure becomes
 *     AOTRUN_ERR_INTERNAL.
 *   - Thread safety is stated per object: "any thread" means any thread may
 *     call it concurrently with any other "any thread" function on the same
 *     object; "serialised" means the caller must not overlap such calls on
 *     the same object.
 *   - No call waits for work that only the calling thread could finish: it
 *     either works or fails at once. The cases are listed under "Calls from
 *     callbacks" below (since 1.1.0; earlier versions could hang there).
 *
 * ABI: symbols carry GNU version nodes (AOTRUN_1.0, ...). Programs that dlopen
 * the library can use the single entry point aotrun_get_api() instead of
 * resolving each symbol.
 */
#ifndef AOTRUN_AOTRUN_H_
#define AOTRUN_AOTRUN_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(AOTRUN_BUILDING_LIBRARY)
#define AOTRUN_API __attribute__((visibility("default")))
#else
#define AOTRUN_API
#endif

/* ===========================================================================
 * Versions
 * ========================================================================= */

#define AOTRUN_VERSION_MAJOR 1
#define AOTRUN_VERSION_MINOR 3
#define AOTRUN_VERSION_PATCH 0
/* (major << 16) | (minor << 8) | patch */
#define AOTRUN_MAKE_VERSION(major, minor, patch) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor) << 8) | (uint32_t)(patch)))
#define AOTRUN_VERSION AOTRUN_MAKE_VERSION(AOTRUN_VERSION_MAJOR, AOTRUN_VERSION_MINOR, AOTRUN_VERSION_PATCH)

/* Version of the library actually loaded (AOTRUN_MAKE_VERSION encoding).
 * Compare with AOTRUN_VERSION to detect header/library skew. Any thread. */
AOTRUN_API uint32_t aotrun_version(void);
/* The same as a static string, e.g. "1.0.0". Any thread. */
AOTRUN_API const char* aotrun_version_string(void);

/* ===========================================================================
 * Status
 * ========================================================================= */

typedef enum aotrun_code {
  AOTRUN_OK = 0,
  AOTRUN_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, bad count, dtype, shape, device, option */
  AOTRUN_ERR_NOT_FOUND = 2,        /* a path that does not exist */
  AOTRUN_ERR_LOAD_FAILED = 3,      /* not an ELF, dlopen failed, unreadable file */
  AOTRUN_ERR_ABI_MISMATCH = 4,     /* package built for another ABI major */
  AOTRUN_ERR_MISSING_SYMBOL = 5,   /* required package entry points absent (all listed) */
  AOTRUN_ERR_INTEGRITY = 6,        /* a file's sha256 differs from the manifest */
  AOTRUN_ERR_BAD_PACKAGE = 7,      /* malformed manifest, weights missing or malformed */
  AOTRUN_ERR_UNSUPPORTED = 8,      /* mode or feature unavailable (e.g. strict fallback) */
  AOTRUN_ERR_PACKAGE = 9,          /* the package's own code returned an error */
  AOTRUN_ERR_OUT_OF_MEMORY = 10,
  AOTRUN_ERR_WOULD_BLOCK = 11, /* try-variant: the in-flight window is full */
  AOTRUN_ERR_TIMEOUT = 12,
  AOTRUN_ERR_CAPTURE_UNSUPPORTED = 13, /* operation not permitted when stream is capturing */
  AOTRUN_ERR_CAPTURE_INVALIDATED = 14, /* capture was invalidated by an illegal operation */
  AOTRUN_ERR_DEVICE = 15,              /* device or driver failure, no device present */
  AOTRUN_ERR_INTERNAL = 16,            /* a bug in aotrun */
  /* Not a code: makes every int32_t value a valid aotrun_code, so a value
   * from a newer library or a careless caller is never undefined behaviour. */
  AOTRUN_CODE_MAX_ENUM = 0x7FFFFFFF
} aotrun_code;

typedef struct aotrun_status aotrun_status;

/* Code of `status`; AOTRUN_OK for NULL. Any thread. */
AOTRUN_API aotrun_code aotrun_status_code(const aotrun_status* status);
/* Message of `status` ("" for NULL), owned by the status. Any thread. */
AOTRUN_API const char* aotrun_status_message(const aotrun_status* status);
/* Releases a status. NULL is a no-op. */
AOTRUN_API void aotrun_status_free(aotrun_status* status);
/* Stable name of a code, e.g. "INVALID_ARGUMENT"; "UNKNOWN" for others. */
AOTRUN_API const char* aotrun_code_name(aotrun_code code);

/* ===========================================================================
 * Logging
 *
 * Messages (warnings such as a fallback to an older package entry point) go to
 * the callback if one is set, else to stderr as "aotrun: <level>: <message>".
 * The level is taken from the AOTRUN_LOG environment variable at load
 * (error|warn|info|debug|off; default warn) and can be changed at run time.
 * ========================================================================= */

typedef enum aotrun_log_level {
  AOTRUN_LOG_ERROR = 0,
  AOTRUN_LOG_WARN = 1,
  AOTRUN_LOG_INFO = 2,
  AOTRUN_LOG_DEBUG = 3,
  AOTRUN_LOG_OFF = -1,
  AOTRUN_LOG_MAX_ENUM = 0x7FFFFFFF /* not a level; see AOTRUN_CODE_MAX_ENUM */
} aotrun_log_level;

/* Receives one message. `message` is valid only during the call. May be called
 * from any thread, including aotrun's worker threads, concurrently (calls are
 * serialised: one message at a time). It may call aotrun, including
 * aotrun_set_log_callback; messages aotrun emits during the call go to
 * stderr, so the callback is never re-entered. It must not throw (a C++
 * exception is caught and reported on stderr). */
typedef void (*aotrun_log_fn)(void* user_data, aotrun_log_level level, const char* message);

/* Installs a process-wide log callback (NULL restores stderr). The previous
 * callback is never called after this function returns; when called from
 * another thread, it waits for a running call of the previous callback to
 * return. Called from inside the callback itself, it takes effect at once
 * and does not wait. Any thread. */
AOTRUN_API void aotrun_set_log_callback(aotrun_log_fn fn, void* user_data);
/* Sets the most verbose level that is emitted. Any thread. */
AOTRUN_API void aotrun_set_log_level(aotrun_log_level level);
AOTRUN_API aotrun_log_level aotrun_get_log_level(void);

/* ===========================================================================
 * Packages
 *
 * A package is either a bare shared library exporting the package ABI
 * (package_abi.h), or a directory holding manifest.json, that library and
 * its weights (.safetensors). Opening one dlopens it, checks its ABI version,
 * resolves its required entry points (all missing ones are reported in one
 * error), probes the optional ones, verifies the manifest's sha256 hashes,
 * maps the weights, and reads the input/output specs.
 * ========================================================================= */

typedef struct aotrun_package aotrun_package;
typedef struct aotrun_package_options aotrun_package_options;

/* Options for aotrun_package_open. Serialised per object; free with
 * aotrun_package_options_free. Errors: INVALID_ARGUMENT (out NULL). */
AOTRUN_API aotrun_status* aotrun_package_options_create(aotrun_package_options** out);
AOTRUN_API void aotrun_package_options_free(aotrun_package_options* options);
/* Check the manifest's sha256 for each file before loading it (default 1). */
AOTRUN_API aotrun_status* aotrun_package_options_set_verify_hashes(aotrun_package_options* options, int verify);

/* Pins the package's identity: lower-case or upper-case hex sha256 of the
 * bare .so, or of manifest.json for a package directory (which in turn pins
 * every file's hash; those are then verified whatever verify_hashes says).
 * Checked before any code of the package is loaded. NULL clears the pin.
 * Errors: INVALID_ARGUMENT (not 64 hex digits). */
AOTRUN_API aotrun_status* aotrun_package_options_set_expected_sha256(aotrun_package_options* options,
                                                                     const char* sha256_hex);
/* Loading a package runs its code, so by default aotrun refuses package files
 * (and the package directory) that are group- or world-writable or owned by a
 * user other than the caller's effective user or root (INTEGRITY). 1 allows
 * them (default 0). */
AOTRUN_API aotrun_status* aotrun_package_options_set_allow_untrusted_files(aotrun_package_options* options, int allow);

/* Since 1.1. For a .pt2 archive (a PyTorch AOTInductor package): which model
 * of the archive to open, by its directory under data/aotinductor/ (default
 * "model", the name torch._inductor.aoti_compile_and_package writes). The
 * string is copied; NULL restores the default. Ignored for other packages.
 * Opening a name the archive lacks gives NOT_FOUND, listing the models it has.
 * Errors: INVALID_ARGUMENT (options NULL; name empty or containing '/'). */
AOTRUN_API aotrun_status* aotrun_package_options_set_pt2_model(aotrun_package_options* options, const char* name);
/* Since 1.1. For a .pt2 archive: where libtorch is — libtorch_cpu.so, or the
 * directory holding it (e.g. <site-packages>/torch/lib) — or, since 1.2,
 * "shim" for aotrun's own implementation of libtorch's C shim (docs/SHIM.md).
 * A .pt2's model calls a C shim provider (aotrun's shim or libtorch);
 * libaotrun never links libtorch. Setting a path forces libtorch for this
 * package (unless aotrun_package_options_set_provider says "auto": then the
 * path is only the fallback), "shim" forces aotrun's shim. Without this
 * option the environment variable AOTRUN_LIBTORCH is read the same way.
 * The first .pt2 opened in the process loads its provider (RTLD_LOCAL) and it
 * stays loaded: a process runs all its .pt2 models on one provider, and a
 * libtorch the host loaded itself (a Python host) is that provider
 * (docs/PT2.md, "The C shim provider"). The string is copied; NULL restores
 * the default. Errors: INVALID_ARGUMENT (options NULL; path empty). */
AOTRUN_API aotrun_status* aotrun_package_options_set_libtorch(aotrun_package_options* options, const char* path);
/* Since 1.3. For a .pt2 archive: which provider of the C shim runs it:
 * "auto" (aotrun's own shim when it implements every aoti_* function the
 * model library imports, else the configured libtorch, else LOAD_FAILED
 * naming each missing function and the torch release that first has it),
 * "shim" (aotrun's shim; LOAD_FAILED if it lacks one) or "libtorch" (the
 * libtorch of aotrun_package_options_set_libtorch / AOTRUN_LIBTORCH, or the
 * one already loaded in the process). Without it: the libtorch option, then
 * the environment variable AOTRUN_PROVIDER (same words), then
 * AOTRUN_LIBTORCH; nothing set is "auto". A package that needs another
 * provider than the one the process already uses is LOAD_FAILED, naming it.
 * The string is copied; NULL restores the default.
 * Errors: INVALID_ARGUMENT (options NULL; not one of the three words). */
AOTRUN_API aotrun_status* aotrun_package_options_set_provider(aotrun_package_options* options, const char* provider);
/* Since 1.3. For a .pt2 archive: 1 states that dim 0 of every input is a
 * batch of independent rows (default 0); inputs whose dim 0 share a size
 * symbol are one batch, and a model may have several (CLIP's texts and
 * images). A model exported with a dynamic batch is compiled for 2 rows and
 * up whatever minimum the export declared (torch's 0/1 specialisation);
 * with this option a request with fewer rows in a batch than its compiled
 * minimum runs padded to it (its last row repeated) and the output dims that
 * follow that batch keep the request's size. Never set it for a model that
 * mixes rows (batch statistics, sums over dim 0): its numbers would change.
 * Opening a package whose inputs do not all have a dynamic dim 0 with one
 * compiled minimum per batch, or whose outputs do not each follow a batch
 * row for row, is UNSUPPORTED naming the input or output. Ignored for other
 * packages.
 * Errors: INVALID_ARGUMENT (options NULL). */
AOTRUN_API aotrun_status* aotrun_package_options_set_pt2_pad_batch(aotrun_package_options* options, int pad);
/* Since 1.3. For a .pt2 archive: 1 runs sizes above a dynamic dim's
 * compiled maximum (default 0: refused, INVALID_ARGUMENT naming the input
 * and the range). The maximum in a model's input checks can be narrower
 * than the one the export declared: torch narrows a size's range for
 * decisions its lowering asks about, some of which the compiled code does
 * not depend on (a convolution asks whether the batch is 16 or more for
 * oneDNN's memory-format choice, and an example batch below 16 caps it at
 * 15; docs/PT2.md, "Upper bounds"). Setting this states that the model
 * computes right above it, as PyTorch's own loader runs it (it checks no
 * bound unless AOTI_RUNTIME_CHECK_INPUTS=1); verify that with `aotrun
 * check --reference` at those sizes. Lower bounds, dims that must agree and
 * index checks still apply. Ignored for other packages.
 * Errors: INVALID_ARGUMENT (options NULL). */
AOTRUN_API aotrun_status* aotrun_package_options_set_pt2_above_compiled_max(aotrun_package_options* options, int allow);

/* Opens the package at `path`. `options` may be NULL (defaults); it is not
 * retained. On success *out owns the package; close it with
 * aotrun_package_close(). Any thread.
 * Errors: INVALID_ARGUMENT (path/out NULL), NOT_FOUND, LOAD_FAILED (not an ELF
 * shared object, dlopen error), ABI_MISMATCH (other major), MISSING_SYMBOL,
 * INTEGRITY (hash mismatch, expected_sha256 mismatch, untrusted file
 * permissions or owner), BAD_PACKAGE (manifest or weights malformed or
 * missing), PACKAGE (the package failed to report its specs). */
AOTRUN_API aotrun_status* aotrun_package_open(const char* path, const aotrun_package_options* options,
                                              aotrun_package** out);

/* Since 1.3. Which provider of libtorch's C shim aotrun_package_open(path,
 * options) would choose now, without opening the package: nothing is loaded
 * or run (a .pt2's model library is extracted into a private directory, its
 * imports read, and removed). For diagnosis before open, also of a package
 * open refuses: `aotrun inspect` checks a model's imports against *library.
 * A later open decides again, and differs if a provider is loaded between.
 *   *provider  "shim" (aotrun's own) or "libtorch"; "" when open would refuse
 *              for want of a provider, and for packages that call no C shim
 *              (aotrun's own);
 *   *library   the file whose exports the model would bind to (aotrun's
 *              libaotrun_shim.so.1, or a libtorch_cpu.so); "" when none;
 *   *reason    one sentence: why (as aotrun_package_get_provider gives it
 *              after open), or the refusal open would give.
 * The strings are owned by `options` and stay valid until its next preview
 * or aotrun_package_options_free; any of the three pointers may be NULL.
 * Serialised per options object, like its setters. The trust and pin checks
 * of open are not made (nothing is loaded).
 * Errors: INVALID_ARGUMENT (path or options NULL, a bad provider setting),
 * and what aotrun_package_open gives for a path it cannot read as a
 * package (NOT_FOUND, BAD_PACKAGE, UNSUPPORTED: a model for another
 * device). */
AOTRUN_API aotrun_status* aotrun_package_preview_provider(const char* path, aotrun_package_options* options,
                                                          const char** provider, const char** library,
                                                          const char** reason);

/* Releases the caller's reference. Runners created from the package keep it
 * loaded until they are destroyed, so closing early is safe. Not concurrently
 * with other calls on the same package. */
AOTRUN_API void aotrun_package_close(aotrun_package* package);

typedef enum aotrun_mode {
  AOTRUN_MODE_THREADED = 0,         /* thread-safe `run`, N model instances */
  AOTRUN_MODE_SINGLE_THREADED = 1,  /* `run_single_threaded`, callers serialised */
  AOTRUN_MODE_GRAPH = 2,            /* capture per input shape, replay */
  AOTRUN_MODE_MAX_ENUM = 0x7FFFFFFF /* not a mode; see AOTRUN_CODE_MAX_ENUM */
} aotrun_mode;

/* Name of a mode: "threaded", "single_threaded", "graph"; "unknown" else. */
AOTRUN_API const char* aotrun_mode_name(aotrun_mode mode);

typedef struct aotrun_package_info {
  size_t struct_size;
  const char* name;     /* manifest name, or the file name without extension */
  const char* path;     /* as opened */
  const char* format;   /* "aotrun-dir", "aotrun-so", or "pt2" (a PyTorch
                           AOTInductor archive; since 1.1.0) */
  uint32_t abi_version; /* the package's (major << 16) | minor */
  DLDevice device;      /* device the package was compiled for */
  size_t num_inputs;
  size_t num_outputs;
  size_t num_constants;
  uint64_t constant_bytes;
  size_t num_symbols;  /* entries for aotrun_package_get_symbol */
  int hashes_verified; /* 1 if every manifest hash was checked */
  /* Load-phase timings, nanoseconds. */
  uint64_t open_ns;     /* whole aotrun_package_open */
  uint64_t verify_ns;   /* hashing */
  uint64_t dlopen_ns;   /* dlopen + symbol resolution */
  uint64_t weights_ns;  /* mapping and indexing the weights */
  uint64_t metadata_ns; /* metadata container create + spec reads */
} aotrun_package_info;

/* Fills *info (set info->struct_size first). Any thread.
 * Errors: INVALID_ARGUMENT. */
AOTRUN_API aotrun_status* aotrun_package_get_info(const aotrun_package* package, aotrun_package_info* info);

typedef struct aotrun_tensor_info {
  size_t struct_size;
  const char* name;
  DLDataType dtype;     /* all zero when unknown (see ndim) */
  int32_t ndim;         /* -1: dtype and rank unknown (a .pt2 package whose
                           archive states no input checks) */
  const int64_t* shape; /* ndim entries; -1 = dynamic dimension */
} aotrun_tensor_info;

/* Describes input / output `index`. Any thread.
 * Errors: INVALID_ARGUMENT (NULL, index out of range). */
AOTRUN_API aotrun_status* aotrun_package_get_input(const aotrun_package* package, size_t index,
                                                   aotrun_tensor_info* info);
AOTRUN_API aotrun_status* aotrun_package_get_output(const aotrun_package* package, size_t index,
                                                    aotrun_tensor_info* info);

/* Since 1.3. The model's own name for input / output `index`, where it has
 * one besides aotrun_tensor_info.name: a .pt2's keyword argument or output
 * key as the call signature in its archive records it ("input_ids",
 * "last_hidden_state", nested ones as "extra.mask" or "past[0]"). *name is
 * the tensor's aotrun_tensor_info.name when the model gives none (aotrun
 * packages; a .pt2's positional arguments, whose names torch does not
 * record, and a plain tensor or tuple output). Owned by the package. Both
 * names select the tensor wherever a name does (the CLI's --input, the
 * Triton backend's requests). Any thread.
 * Errors: INVALID_ARGUMENT (NULL, index out of range). */
AOTRUN_API aotrun_status* aotrun_package_get_input_model_name(const aotrun_package* package, size_t index,
                                                              const char** name);
AOTRUN_API aotrun_status* aotrun_package_get_output_model_name(const aotrun_package* package, size_t index,
                                                               const char** name);

typedef struct aotrun_symbol_info {
  size_t struct_size;
  const char* name;
  int required;   /* 1 if the package cannot load without it */
  int found;      /* 1 if the package exports it */
  uint32_t since; /* ABI version that introduced it, (major << 16) | minor;
                     0 for the entry points of a bridged format (a .pt2's
                     AOTInductor functions), which have no aotrun version */
} aotrun_symbol_info;

/* Describes the package entry point `index` (< info.num_symbols) that the
 * loader looked for. `found` says whether the library exports it, not
 * whether aotrun calls it: an entry point newer than the ABI the package
 * declares (since > aotrun_package_info.abi_version) is ignored even if
 * exported, and aotrun_package_mode_available's reason says so.
 * Any thread. Errors: INVALID_ARGUMENT. */
AOTRUN_API aotrun_status* aotrun_package_get_symbol(const aotrun_package* package, size_t index,
                                                    aotrun_symbol_info* info);

/* Since 1.3. Which provider of libtorch's C shim serves the package and why:
 * *provider "shim" (aotrun's own) or "libtorch"; *reason one sentence (e.g.
 * "aotrun's shim implements all 12 aoti_* function(s) the model library
 * imports", "forced by AOTRUN_PROVIDER=libtorch"). Both "" for a package that
 * calls no C shim (aotrun's own packages). Owned by the package. Either
 * pointer may be NULL. Any thread. Errors: INVALID_ARGUMENT (package NULL). */
AOTRUN_API aotrun_status* aotrun_package_get_provider(const aotrun_package* package, const char** provider,
                                                      const char** reason);

/* Returns 1 if `mode` runs natively with this package, 0 if it would fall
 * back (or is unknown). If `reason` is non-NULL it receives a sentence saying
 * why not ("" when available), owned by the package. Any thread. */
AOTRUN_API int aotrun_package_mode_available(const aotrun_package* package, aotrun_mode mode, const char** reason);

/* ===========================================================================
 * Runners
 *
 * A runner owns a container of the package's model instances on one device
 * and runs them in one mode.
 * ========================================================================= */

typedef struct aotrun_runner aotrun_runner;
typedef struct aotrun_runner_options aotrun_runner_options;

/* Options for aotrun_runner_create. Serialised per object.
 * Errors: INVALID_ARGUMENT. */
AOTRUN_API aotrun_status* aotrun_runner_options_create(aotrun_runner_options** out);
AOTRUN_API void aotrun_runner_options_free(aotrun_runner_options* options);
/* Default AOTRUN_MODE_THREADED. */
AOTRUN_API aotrun_status* aotrun_runner_options_set_mode(aotrun_runner_options* options, aotrun_mode mode);
/* Model instances in the container, 1..1024 (default 1). */
AOTRUN_API aotrun_status* aotrun_runner_options_set_num_models(aotrun_runner_options* options, int32_t num_models);
/* 1: a mode the package cannot run natively fails with UNSUPPORTED instead of
 * falling back with a warning (default 0). */
AOTRUN_API aotrun_status* aotrun_runner_options_set_strict(aotrun_runner_options* options, int strict);
/* Device to run on (default: the package's device).
 * Errors: INVALID_ARGUMENT (a negative device_id; a CPU device_id other
 * than 0). Whether the type is supported and a CUDA device is present is
 * decided by aotrun_runner_create (UNSUPPORTED, DEVICE). */
AOTRUN_API aotrun_status* aotrun_runner_options_set_device(aotrun_runner_options* options, DLDevice device);

/* Graph mode: eager runs of each new input-shape set before it is captured
 * (default 1, 0..1000). */
AOTRUN_API aotrun_status* aotrun_runner_options_set_graph_warmup_runs(aotrun_runner_options* options, int32_t runs);
/* Graph mode: most input-shape sets kept captured (default 16, 1..4096).
 * Shapes beyond it run eagerly, counted in stats.eager_cache_full. */
AOTRUN_API aotrun_status* aotrun_runner_options_set_graph_cache_limit(aotrun_runner_options* options, int32_t limit);
/* Graph mode, for production: capture only the shape sets given with
 * aotrun_runner_options_add_capture_shapes (at runner creation, largest
 * first); never capture afterwards. Unseen shapes run eagerly, counted in
 * stats.eager_frozen. Default 0. */
AOTRUN_API aotrun_status* aotrun_runner_options_set_graph_frozen(aotrun_runner_options* options, int frozen);
/* Graph mode: one input-shape set to warm up and capture when the runner is
 * created. `ndims[i]` and the concatenated `dims` give input i's shape; the
 * arrays are copied. Call once per set. */
AOTRUN_API aotrun_status* aotrun_runner_options_add_capture_shapes(aotrun_runner_options* options, const int32_t* ndims,
                                                                   size_t num_inputs, const int64_t* dims);
/* Asynchronous runs: most runs queued or executing at once (1..65536;
 * default 2 x num_models on CPU, 32 on CUDA). */
AOTRUN_API aotrun_status* aotrun_runner_options_set_max_inflight(aotrun_runner_options* options, int32_t max_inflight);

/* Creates a runner. `options` may be NULL and is not retained. The runner
 * holds a reference to `package`. Any thread.
 * Errors: INVALID_ARGUMENT, UNSUPPORTED (strict and mode unavailable, device
 * type unsupported), DEVICE, PACKAGE (container creation failed),
 * OUT_OF_MEMORY. */
AOTRUN_API aotrun_status* aotrun_runner_create(aotrun_package* package, const aotrun_runner_options* options,
                                               aotrun_runner** out);

/* Destroys a runner. Waits for every asynchronous run still in flight (their
 * events complete normally), then releases the container. Must not overlap
 * other calls on the same runner. From an event callback of this runner it
 * returns at once and the runner is destroyed on another thread once the
 * callback has returned and the runs in flight have completed (since 1.1.0;
 * see "Calls from callbacks"). NULL is a no-op. */
AOTRUN_API void aotrun_runner_destroy(aotrun_runner* runner);

/* The mode the runner actually uses (after any fallback). Any thread. */
AOTRUN_API aotrun_mode aotrun_runner_mode(const aotrun_runner* runner);

/* Output shapes for the given inputs (only ndim, shape and dtype are read).
 * Writes all output shapes concatenated in output order into `shapes`
 * (capacity `capacity` elements; output i has the ndim of its info). Any
 * thread. Errors: INVALID_ARGUMENT (count, dtype, rank, shape, capacity),
 * PACKAGE. */
AOTRUN_API aotrun_status* aotrun_runner_get_output_shapes(aotrun_runner* runner, const DLTensor* inputs,
                                                          size_t num_inputs, int64_t* shapes, size_t capacity);

/* Runs the model synchronously: when it returns, outputs hold the results.
 * Inputs and outputs are caller-owned; outputs must have the shapes
 * aotrun_runner_get_output_shapes reports. An output whose size the model
 * reads from the input values (a .pt2 slicing to lengths.max()) has no such
 * shape before the run: refused (PACKAGE, naming the output); run it with
 * aotrun_runner_run_alloc.
 * Threads: threaded mode — any thread, concurrently (up to num_models run at
 * once, others wait for a free instance). single_threaded and graph modes —
 * any thread; calls are serialised by the runner.
 * Errors: INVALID_ARGUMENT (NULL, count, dtype, rank, shape, device,
 * non-contiguous), PACKAGE (the model failed; the runner stays usable),
 * CAPTURE_UNSUPPORTED, DEVICE. */
AOTRUN_API aotrun_status* aotrun_runner_run(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                            DLTensor* outputs, size_t num_outputs);

/* Like aotrun_runner_run, but aotrun allocates the outputs: outputs[i]
 * receives a DLManagedTensor the caller owns and releases by calling its
 * deleter (from any thread, also after the runner is destroyed). The memory
 * is on the runner's device: host memory (256-byte aligned) on the CPU;
 * on CUDA, device memory from cudaMalloc (since 1.3; before, UNSUPPORTED),
 * written by the time the call returns. On failure no output is handed
 * over. Same threads and errors, plus OUT_OF_MEMORY. Outputs whose sizes
 * depend on the input values are allocated once the model has sized them,
 * in every mode (graph mode runs such a package eagerly): the way to run
 * such a package (a .pt2 on the CPU; since 1.3, before PACKAGE). */
AOTRUN_API aotrun_status* aotrun_runner_run_alloc(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                                  DLManagedTensor** outputs, size_t num_outputs);

typedef struct aotrun_runner_stats {
  size_t struct_size;
  aotrun_mode requested_mode;
  aotrun_mode effective_mode;
  int32_t num_models;
  int32_t max_inflight;
  const char* fallback_reason; /* "" when none; owned by the runner */
  uint64_t runs;               /* completed successfully (sync and async) */
  uint64_t failures;           /* failed in the package (argument errors not counted) */
  uint64_t fallback_runs;      /* runs executed through a fallback entry point */
  /* Graph mode. */
  uint64_t graph_captures;
  uint64_t graph_replays;
  uint64_t graph_warmups;    /* eager warm-up runs before a capture */
  uint64_t graph_capture_ns; /* total time spent capturing */
  uint64_t graph_pool_bytes; /* static buffers + memory held by graphs */
  uint64_t graphs_cached;
  uint64_t eager_cache_full;       /* eager: graph_cache_limit reached */
  uint64_t eager_frozen;           /* eager: frozen and shape not captured */
  uint64_t eager_capture_failed;   /* eager: this shape's capture failed */
  uint64_t eager_caller_capturing; /* recorded into the caller's capturing stream */
  /* Asynchronous runs. */
  uint64_t inflight; /* queued or executing now */
  uint64_t peak_inflight;
  uint64_t async_submitted;
  uint64_t async_completed; /* completed successfully */
  uint64_t async_failed;
  uint64_t submit_blocked_ns; /* total time submitters waited for a slot */
  uint64_t would_block;       /* try-submissions refused */
} aotrun_runner_stats;

/* Snapshot of the runner's counters (set stats->struct_size first). Any
 * thread. Errors: INVALID_ARGUMENT. */
AOTRUN_API aotrun_status* aotrun_runner_get_stats(const aotrun_runner* runner, aotrun_runner_stats* stats);

/* Graph mode: drops every captured graph and its static buffers; later runs
 * warm up and capture again. Serialised with runs by the runner. No-op in
 * other modes. Errors: INVALID_ARGUMENT. */
AOTRUN_API aotrun_status* aotrun_runner_evict_graphs(aotrun_runner* runner);
/* Graph mode: from now on no capture happens; shapes without a graph run
 * eagerly (stats.eager_frozen). No-op in other modes. */
AOTRUN_API aotrun_status* aotrun_runner_freeze_graphs(aotrun_runner* runner);

/* ===========================================================================
 * Asynchronous runs with a bounded in-flight window
 *
 * run_async validates its arguments, takes one of the runner's max_inflight
 * slots, enqueues the run and returns an event. The slot is given back when
 * the run completes (successfully or not), never when enqueueing returns, so
 * at most max_inflight runs are queued or executing per runner.
 *
 * The caller must keep the DATA of every input and output tensor alive and
 * unmodified (inputs) / untouched (outputs) until the event completes. The
 * DLTensor structs and shape arrays are copied and may be released at once.
 * ========================================================================= */

typedef struct aotrun_event aotrun_event;

/* Enqueues a run. Blocks while the window is full. On success *event is the
 * caller's to free. Any thread, concurrently.
 * Errors: those of aotrun_runner_run for arguments (no slot is taken); the
 * run's own failure is reported by its event, not here. */
AOTRUN_API aotrun_status* aotrun_runner_run_async(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                                  DLTensor* outputs, size_t num_outputs, aotrun_event** event);
/* Like run_async but never blocks: WOULD_BLOCK when the window is full. */
AOTRUN_API aotrun_status* aotrun_runner_try_run_async(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                                      DLTensor* outputs, size_t num_outputs, aotrun_event** event);
/* Like run_async but waits at most timeout_ns for a slot: TIMEOUT after
 * (timeout_ns 0: TIMEOUT at once when the window is full). */
AOTRUN_API aotrun_status* aotrun_runner_run_async_timeout(aotrun_runner* runner, const DLTensor* inputs,
                                                          size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                                                          uint64_t timeout_ns, aotrun_event** event);
/* Waits until no asynchronous run of THIS runner is in flight; other runners
 * are unaffected. Returns at once when idle. Any thread.
 * Errors: INVALID_ARGUMENT (NULL; called from an event callback of this
 * runner). */
AOTRUN_API aotrun_status* aotrun_runner_wait_all(aotrun_runner* runner);

/* 1 if the run has completed (successfully or not), else 0. Any thread. */
AOTRUN_API int aotrun_event_is_ready(const aotrun_event* event);
/* Waits for completion and returns the run's outcome: NULL on success, else
 * its status (PACKAGE, ...). Any thread, any number of times. */
AOTRUN_API aotrun_status* aotrun_event_wait(aotrun_event* event);
/* Waits at most timeout_ns: TIMEOUT if still running, else like wait. */
AOTRUN_API aotrun_status* aotrun_event_wait_timeout(aotrun_event* event, uint64_t timeout_ns);

/* Receives the outcome of a run: code AOTRUN_OK or the failure's code and
 * message (valid during the call only). Runs on an aotrun worker thread, or
 * on the registering thread if the run already completed. It should not
 * block for long: runs queued behind it on the same worker wait for it. It
 * must not throw (a C++ exception is caught and logged as an error).
 *
 * Calls from callbacks. An event callback runs on the worker that ran its
 * run; that run retires only after the callback returns, and later runs
 * queued on the same worker start only then. So, on a worker of runner R (an
 * event callback of R, or a log callback called during one of R's
 * asynchronous runs; since 1.1.0):
 *   - aotrun_runner_wait_all(R) fails at once with INVALID_ARGUMENT;
 *   - aotrun_event_wait / _wait_timeout on an event of a run still queued on
 *     the same worker fail at once with INVALID_ARGUMENT (events of other
 *     workers and runners can be waited for);
 *   - aotrun_runner_run_async / _run_async_timeout on R do not wait for a
 *     slot: WOULD_BLOCK at once when the window is full (try_run_async as
 *     usual);
 *   - aotrun_runner_destroy(R) returns at once; R is destroyed on another
 *     thread afterwards;
 *   - synchronous runs, stats and every call on other runners work as usual.
 * A log callback may call aotrun too (see aotrun_log_fn). */
typedef void (*aotrun_event_callback)(void* user_data, aotrun_code code, const char* message);
/* Registers the completion callback (at most one per event; it fires exactly
 * once, even if the event is freed first). Waiters are woken before the
 * callback runs, so aotrun_event_wait may return in another thread while the
 * callback is still running; runner_wait_all and runner_destroy return only
 * after it returned. Errors: INVALID_ARGUMENT (NULL,
 * already set). */
AOTRUN_API aotrun_status* aotrun_event_set_callback(aotrun_event* event, aotrun_event_callback fn, void* user_data);
/* Releases the caller's handle. The run itself is unaffected: it completes
 * and frees its slot whether or not the event was freed. NULL is a no-op. */
AOTRUN_API void aotrun_event_free(aotrun_event* event);

/* ===========================================================================
 * Streams and graphs (caller-driven capture)
 *
 * An aotrun_stream is a CPU stream that behaves like a CUDA stream under
 * capture: between begin_capture and end_capture, work launched on it is
 * recorded, not executed, and prohibited calls (event query / synchronize,
 * stream synchronize; in global mode on any thread) fail with
 * CAPTURE_UNSUPPORTED ("operation not permitted when stream is capturing")
 * and invalidate the capture; end_capture then fails with
 * CAPTURE_INVALIDATED. A graph replays the recorded work with the buffers
 * fixed at capture.
 * ========================================================================= */

typedef struct aotrun_stream aotrun_stream;
typedef struct aotrun_graph aotrun_graph;

typedef enum aotrun_stream_kind {
  AOTRUN_STREAM_INLINE = 0, /* work runs on the launching thread */
  AOTRUN_STREAM_WORKER = 1, /* work runs in order on the stream's own thread */
  AOTRUN_STREAM_KIND_MAX_ENUM = 0x7FFFFFFF
} aotrun_stream_kind;

typedef enum aotrun_capture_mode {
  AOTRUN_CAPTURE_GLOBAL = 0,       /* cudaStreamCaptureModeGlobal */
  AOTRUN_CAPTURE_THREAD_LOCAL = 1, /* cudaStreamCaptureModeThreadLocal */
  AOTRUN_CAPTURE_RELAXED = 2,      /* cudaStreamCaptureModeRelaxed */
  AOTRUN_CAPTURE_MODE_MAX_ENUM = 0x7FFFFFFF
} aotrun_capture_mode;

/* Creates a CPU stream. Errors: INVALID_ARGUMENT. */
AOTRUN_API aotrun_status* aotrun_stream_create(aotrun_stream_kind kind, aotrun_stream** out);
/* Finishes the stream's queued work, then frees it. A capture still open is
 * discarded. NULL is a no-op. */
AOTRUN_API void aotrun_stream_free(aotrun_stream* stream);
/* Waits for all work on the stream and returns the first failure of that work
 * since the last synchronize (NULL if none). Prohibited while capturing.
 * Errors: CAPTURE_UNSUPPORTED, PACKAGE. */
AOTRUN_API aotrun_status* aotrun_stream_synchronize(aotrun_stream* stream);
/* Errors: INVALID_ARGUMENT (already capturing). */
AOTRUN_API aotrun_status* aotrun_stream_begin_capture(aotrun_stream* stream, aotrun_capture_mode mode);
/* Ends the capture (on the thread that began it, except in relaxed mode).
 * On success *graph is the caller's. Errors: CAPTURE_INVALIDATED,
 * INVALID_ARGUMENT (not capturing, wrong thread). */
AOTRUN_API aotrun_status* aotrun_stream_end_capture(aotrun_stream* stream, aotrun_graph** graph);
/* 1 while capturing, else 0. Any thread. */
AOTRUN_API int aotrun_stream_is_capturing(const aotrun_stream* stream);
/* Replays `graph` on `stream` (inline: before returning; worker: enqueued).
 * The graph may be freed right after. Errors: CAPTURE_UNSUPPORTED (stream
 * capturing), PACKAGE (recorded work failed, inline streams). */
AOTRUN_API aotrun_status* aotrun_graph_launch(aotrun_graph* graph, aotrun_stream* stream);
/* Number of recorded operations. */
AOTRUN_API size_t aotrun_graph_num_nodes(const aotrun_graph* graph);
/* NULL is a no-op. Work already enqueued keeps the graph alive. */
AOTRUN_API void aotrun_graph_free(aotrun_graph* graph);

/* Runs on the caller's stream instead of the runner's own: the package's
 * work is enqueued on `stream` (and recorded, if it is capturing). Mode rules:
 *  - threaded: the package's thread-safe run; under capture it fails with
 *    CAPTURE_UNSUPPORTED as soon as it must query an instance's event (second
 *    call of a num_models = 1 runner), exactly as with CUDA;
 *  - single_threaded: no locks or events, legal under capture;
 *  - graph: if `stream` is capturing, the run is recorded into the caller's
 *    graph (no graph of the runner is launched into it); otherwise the runner's
 *    graph logic runs after the stream's earlier work, before returning.
 * On a worker stream the run's failure may surface at aotrun_stream_synchronize.
 * Same threads and errors as aotrun_runner_run. */
AOTRUN_API aotrun_status* aotrun_runner_run_on_stream(aotrun_runner* runner, aotrun_stream* stream,
                                                      const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                                      size_t num_outputs);

/* Runs on a caller's CUDA stream (`cuda_stream` is a cudaStream_t) with the
 * mode rules of aotrun_runner_run_on_stream: the package's work is enqueued on
 * the stream (recorded, if the caller is capturing it) and the call returns
 * once it is enqueued — synchronize the stream before reading outputs. A
 * threaded runner fails with CAPTURE_UNSUPPORTED under capture as soon as it
 * must query an instance's event; single_threaded is legal under capture;
 * graph mode records the run into a capturing caller stream, and otherwise
 * waits for the stream's earlier work, replays its own graph and returns when
 * done. Failures of the package's launched host work on a caller stream are
 * not reported here (kernels report through CUDA as usual).
 * Threads and errors as aotrun_runner_run_on_stream; INVALID_ARGUMENT also for
 * a NULL stream or a runner that is not on a CUDA device; DEVICE. */
AOTRUN_API aotrun_status* aotrun_runner_run_on_cuda_stream(aotrun_runner* runner, void* cuda_stream,
                                                           const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                                                           size_t num_outputs);

/* ===========================================================================
 * Constants (weights): listing them, and updating them while serving
 * (since 1.2).
 *
 * A package's constants are its weights: the tensors of its .safetensors
 * files (aotrun packages), or those the model library holds (a .pt2, whose
 * weights are linked into its .so or stored beside it in the archive).
 *
 * Updating while serving. A runner has an active set of constants, which
 * runs use, and at most one inactive set. aotrun_runner_update_constants
 * builds a new set from named tensors (or a .safetensors file) and makes it
 * the inactive one; aotrun_runner_swap_constants makes it active, and the
 * set it replaces becomes the inactive one (so a second swap rolls back);
 * aotrun_runner_free_inactive_constants releases the inactive set. Each set
 * has its own container of the package, created with that set's constants:
 * the package needs no entry point for this, so packages of every ABI
 * version and .pt2 archives support it. Rules, for every mode:
 *  - A run uses one set from start to end: all old or all new weights,
 *    never a mix. A run uses the set that is active when it starts
 *    executing (for an asynchronous run: when a worker starts it, not when
 *    it was submitted).
 *  - A swap does not wait: runs in flight finish on the set they started
 *    with while later runs use the new one. Runs never wait for updates.
 *  - An update or a free waits only for the runs still executing on the
 *    inactive set it replaces or frees (runs that started before the last
 *    swap); an update does not touch the active set.
 *  - Graph mode: each set has its own graphs, captured on its own container,
 *    so no replay reads another set's weights. After a swap to a new set its
 *    shapes warm up and capture again, like a new runner's (counted in
 *    graph_warmups and graph_captures, and in aotrun_constants_state's
 *    graph_recaptures; up-front capture shapes are captured
 *    on its first run); swapping back finds the old set's graphs still valid.
 *  - aotrun_runner_get_constants_state says which set is active.
 *  - Memory: an update copies named tensors into memory of the runner's (a
 *    .safetensors file is mapped instead: its pages are read as runs touch
 *    them), shares the constants it does not name with the active set, and
 *    creates a container: until the inactive set is freed, the runner holds
 *    both. For a .pt2 the model library also keeps its own copy of the
 *    constants in each container.
 *  - Update, swap and free are serialised with each other; call them from
 *    any thread, including an event callback, but not from inside a run of
 *    the same runner (a log callback during its package code):
 *    INVALID_ARGUMENT, since the call could wait for itself.
 * ========================================================================= */

/* One constant of a package (aotrun_package_get_constant). */
typedef struct aotrun_constant_info {
  size_t struct_size;
  const char* name;          /* the name updates use; owned by the package */
  const char* original_name; /* the model's own name for it (a .pt2's
                                parameter or buffer name); == name if none */
  DLDataType dtype;
  int32_t ndim;         /* -1: the package does not state the shape */
  const int64_t* shape; /* ndim dims, owned by the package */
  uint64_t nbytes;      /* bytes the package keeps for it: its shape's, or
                           more (a .pt2 rounds each up to 64); 0 when the
                           package cannot say */
  int folded;           /* 1: computed from other constants when a container
                           is created (a .pt2's constant folding); it cannot
                           be updated, and updating the constants it is folded
                           from recomputes it */
} aotrun_constant_info;

/* Fills *info for constant `index` (< aotrun_package_info.num_constants; set
 * info->struct_size first). Strings and shape stay valid while the package
 * is open. Any thread. Errors: INVALID_ARGUMENT (NULL, index out of range,
 * struct_size not set). Since 1.2. */
AOTRUN_API aotrun_status* aotrun_package_get_constant(const aotrun_package* package, size_t index,
                                                      aotrun_constant_info* info);

/* A new value for one constant: host memory (kDLCPU, kDLCUDAHost or
 * kDLCUDAManaged), contiguous, of the constant's dtype and shape. Borrowed
 * for the duration of the call. */
typedef struct aotrun_named_tensor {
  const char* name;
  DLTensor tensor;
} aotrun_named_tensor;

/* Flags of the update calls. */
#define AOTRUN_CONSTANTS_FULL_UPDATE       \
  1u /* every constant that can be updated \
        must be named (not folded ones) */

/* Builds the runner's inactive set of constants: the active set's, with the
 * `count` named tensors in place of the constants they name (copied: the
 * caller may free them when the call returns), and a new container created
 * with it. Replaces an inactive set the runner had. Runs go on using the
 * active set meanwhile. Any thread (see the rules above).
 * Errors: INVALID_ARGUMENT naming the constant (unknown name, folded, given
 * twice, wrong dtype/shape/size, not host memory, not contiguous, NULL data,
 * unknown flags, with FULL_UPDATE the constants left out; or called from a
 * run of this runner); UNSUPPORTED naming the constant (one a .pt2 cannot
 * take a replacement for: its shape not stated by the archive, kept with
 * strides that overlap or leave gaps, or packed in oneDNN's blocked layout
 * by a frozen export; one kept channels-last is laid out so);
 * OUT_OF_MEMORY; PACKAGE (the package's container creation failed; nothing
 * changed). Since 1.2. */
AOTRUN_API aotrun_status* aotrun_runner_update_constants(aotrun_runner* runner, const aotrun_named_tensor* tensors,
                                                         size_t count, uint32_t flags);

/* As aotrun_runner_update_constants, with every tensor of a .safetensors
 * file as the new values; the file is mapped, not copied, and stays mapped
 * while a set uses it. Errors: as above (the message names the file), and
 * NOT_FOUND (no such file), LOAD_FAILED (cannot be read or mapped),
 * INVALID_ARGUMENT (not a valid .safetensors file). Since 1.2. */
AOTRUN_API aotrun_status* aotrun_runner_update_constants_from_file(aotrun_runner* runner, const char* path,
                                                                   uint32_t flags);

/* Makes the inactive set active, atomically for every later run; the active
 * one becomes inactive. Does not wait for runs in flight. Any thread.
 * Errors: INVALID_ARGUMENT (no inactive set, or called from a run of this
 * runner). Since 1.2. */
AOTRUN_API aotrun_status* aotrun_runner_swap_constants(aotrun_runner* runner);

/* Releases the inactive set (its container, copies and mappings) once the
 * runs still executing on it have finished; OK when there is none. Any
 * thread. Errors: INVALID_ARGUMENT (called from a run of this runner).
 * Since 1.2. */
AOTRUN_API aotrun_status* aotrun_runner_free_inactive_constants(aotrun_runner* runner);

/* Which constant sets a runner has, and what was done to them. Sets are
 * numbered by generation: 0 is the package's own constants, then 1, 2, ...
 * in the order the runner's updates built them. */
typedef struct aotrun_constants_state {
  size_t struct_size;
  uint64_t active_generation;   /* the set runs use now */
  int has_inactive;             /* 1: an inactive set exists (swap would use it) */
  uint64_t inactive_generation; /* when has_inactive */
  uint64_t updates;             /* successful update calls */
  uint64_t swaps;               /* successful swaps */
  uint64_t graph_recaptures;    /* graph mode: graphs captured for sets made by
                                   updates (each set captures its own) */
} aotrun_constants_state;

/* Snapshot of *state (set state->struct_size first). Any thread, never
 * waits for updates or runs; while a writer works, fields may come from
 * either side of it. Errors: INVALID_ARGUMENT. Since 1.2. */
AOTRUN_API aotrun_status* aotrun_runner_get_constants_state(const aotrun_runner* runner, aotrun_constants_state* state);

/* ===========================================================================
 * Function table for dlopen users (ONNX Runtime's OrtGetApiBase pattern).
 *
 * dlsym one symbol, `aotrun_get_api`, and call it with the API version your
 * header declares (AOTRUN_API_VERSION). It returns NULL if the loaded library
 * is older than that version. The table is append-only: slots of an older
 * version never move, so a client built against 1.0 works with any 1.x.
 * ========================================================================= */

#define AOTRUN_API_VERSION_1_0 AOTRUN_MAKE_VERSION(1, 0, 0)
#define AOTRUN_API_VERSION_1_1 AOTRUN_MAKE_VERSION(1, 1, 0)
#define AOTRUN_API_VERSION_1_2 AOTRUN_MAKE_VERSION(1, 2, 0)
#define AOTRUN_API_VERSION_1_3 AOTRUN_MAKE_VERSION(1, 3, 0)
#define AOTRUN_API_VERSION AOTRUN_API_VERSION_1_3

typedef struct aotrun_api {
  uint32_t version; /* the version of the table actually returned */
  /* 1.0 */
  uint32_t (*version_number)(void);
  const char* (*version_string)(void);
  aotrun_code (*status_code)(const aotrun_status*);
  const char* (*status_message)(const aotrun_status*);
  void (*status_free)(aotrun_status*);
  const char* (*code_name)(aotrun_code);
  void (*set_log_callback)(aotrun_log_fn, void*);
  void (*set_log_level)(aotrun_log_level);
  aotrun_log_level (*get_log_level)(void);
  aotrun_status* (*package_options_create)(aotrun_package_options**);
  void (*package_options_free)(aotrun_package_options*);
  aotrun_status* (*package_options_set_verify_hashes)(aotrun_package_options*, int);
  aotrun_status* (*package_open)(const char*, const aotrun_package_options*, aotrun_package**);
  void (*package_close)(aotrun_package*);
  const char* (*mode_name)(aotrun_mode);
  aotrun_status* (*package_get_info)(const aotrun_package*, aotrun_package_info*);
  aotrun_status* (*package_get_input)(const aotrun_package*, size_t, aotrun_tensor_info*);
  aotrun_status* (*package_get_output)(const aotrun_package*, size_t, aotrun_tensor_info*);
  aotrun_status* (*package_get_symbol)(const aotrun_package*, size_t, aotrun_symbol_info*);
  int (*package_mode_available)(const aotrun_package*, aotrun_mode, const char**);
  aotrun_status* (*runner_options_create)(aotrun_runner_options**);
  void (*runner_options_free)(aotrun_runner_options*);
  aotrun_status* (*runner_options_set_mode)(aotrun_runner_options*, aotrun_mode);
  aotrun_status* (*runner_options_set_num_models)(aotrun_runner_options*, int32_t);
  aotrun_status* (*runner_options_set_strict)(aotrun_runner_options*, int);
  aotrun_status* (*runner_options_set_device)(aotrun_runner_options*, DLDevice);
  aotrun_status* (*runner_create)(aotrun_package*, const aotrun_runner_options*, aotrun_runner**);
  void (*runner_destroy)(aotrun_runner*);
  aotrun_mode (*runner_mode)(const aotrun_runner*);
  aotrun_status* (*runner_get_output_shapes)(aotrun_runner*, const DLTensor*, size_t, int64_t*, size_t);
  aotrun_status* (*runner_run)(aotrun_runner*, const DLTensor*, size_t, DLTensor*, size_t);
  aotrun_status* (*runner_run_alloc)(aotrun_runner*, const DLTensor*, size_t, DLManagedTensor**, size_t);
  aotrun_status* (*runner_get_stats)(const aotrun_runner*, aotrun_runner_stats*);
  aotrun_status* (*runner_options_set_graph_warmup_runs)(aotrun_runner_options*, int32_t);
  aotrun_status* (*runner_options_set_graph_cache_limit)(aotrun_runner_options*, int32_t);
  aotrun_status* (*runner_options_set_graph_frozen)(aotrun_runner_options*, int);
  aotrun_status* (*runner_options_add_capture_shapes)(aotrun_runner_options*, const int32_t*, size_t, const int64_t*);
  aotrun_status* (*runner_options_set_max_inflight)(aotrun_runner_options*, int32_t);
  aotrun_status* (*runner_evict_graphs)(aotrun_runner*);
  aotrun_status* (*runner_freeze_graphs)(aotrun_runner*);
  aotrun_status* (*runner_run_async)(aotrun_runner*, const DLTensor*, size_t, DLTensor*, size_t, aotrun_event**);
  aotrun_status* (*runner_try_run_async)(aotrun_runner*, const DLTensor*, size_t, DLTensor*, size_t, aotrun_event**);
  aotrun_status* (*runner_run_async_timeout)(aotrun_runner*, const DLTensor*, size_t, DLTensor*, size_t, uint64_t,
                                             aotrun_event**);
  aotrun_status* (*runner_wait_all)(aotrun_runner*);
  int (*event_is_ready)(const aotrun_event*);
  aotrun_status* (*event_wait)(aotrun_event*);
  aotrun_status* (*event_wait_timeout)(aotrun_event*, uint64_t);
  aotrun_status* (*event_set_callback)(aotrun_event*, aotrun_event_callback, void*);
  void (*event_free)(aotrun_event*);
  aotrun_status* (*stream_create)(aotrun_stream_kind, aotrun_stream**);
  void (*stream_free)(aotrun_stream*);
  aotrun_status* (*stream_synchronize)(aotrun_stream*);
  aotrun_status* (*stream_begin_capture)(aotrun_stream*, aotrun_capture_mode);
  aotrun_status* (*stream_end_capture)(aotrun_stream*, aotrun_graph**);
  int (*stream_is_capturing)(const aotrun_stream*);
  aotrun_status* (*graph_launch)(aotrun_graph*, aotrun_stream*);
  size_t (*graph_num_nodes)(const aotrun_graph*);
  void (*graph_free)(aotrun_graph*);
  aotrun_status* (*runner_run_on_stream)(aotrun_runner*, aotrun_stream*, const DLTensor*, size_t, DLTensor*, size_t);
  aotrun_status* (*package_options_set_expected_sha256)(aotrun_package_options*, const char*);
  aotrun_status* (*package_options_set_allow_untrusted_files)(aotrun_package_options*, int);
  aotrun_status* (*runner_run_on_cuda_stream)(aotrun_runner*, void*, const DLTensor*, size_t, DLTensor*, size_t);
  /* 1.1 */
  aotrun_status* (*package_options_set_pt2_model)(aotrun_package_options*, const char*);
  aotrun_status* (*package_options_set_libtorch)(aotrun_package_options*, const char*);
  /* 1.2 */
  aotrun_status* (*package_get_constant)(const aotrun_package*, size_t, aotrun_constant_info*);
  aotrun_status* (*runner_update_constants)(aotrun_runner*, const aotrun_named_tensor*, size_t, uint32_t);
  aotrun_status* (*runner_update_constants_from_file)(aotrun_runner*, const char*, uint32_t);
  aotrun_status* (*runner_swap_constants)(aotrun_runner*);
  aotrun_status* (*runner_free_inactive_constants)(aotrun_runner*);
  aotrun_status* (*runner_get_constants_state)(const aotrun_runner*, aotrun_constants_state*);
  /* 1.3 */
  aotrun_status* (*package_options_set_provider)(aotrun_package_options*, const char*);
  aotrun_status* (*package_get_provider)(const aotrun_package*, const char**, const char**);
  aotrun_status* (*package_options_set_pt2_pad_batch)(aotrun_package_options*, int);
  aotrun_status* (*package_get_input_model_name)(const aotrun_package*, size_t, const char**);
  aotrun_status* (*package_get_output_model_name)(const aotrun_package*, size_t, const char**);
  aotrun_status* (*package_options_set_pt2_above_compiled_max)(aotrun_package_options*, int);
  aotrun_status* (*package_preview_provider)(const char*, aotrun_package_options*, const char**, const char**,
                                             const char**);
} aotrun_api;

/* Returns the function table for API `version`, or NULL if this library does
 * not provide it (newer than the library, or another major). The table is
 * static; never free it. Any thread. */
AOTRUN_API const aotrun_api* aotrun_get_api(uint32_t version);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Layout pins: a failure here is an ABI break, not a build problem. */
#if defined(__cplusplus)
#define AOTRUN_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define AOTRUN_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#define AOTRUN_PACKAGE_INFO_STRUCT_SIZE_1_0 (offsetof(aotrun_package_info, metadata_ns) + sizeof(uint64_t))
#define AOTRUN_TENSOR_INFO_STRUCT_SIZE_1_0 (offsetof(aotrun_tensor_info, shape) + sizeof(const int64_t*))
/* Rounds n up to the alignment a (a power of two): the size of a struct whose
 * last field ends at n and whose strictest member has alignment a. */
#define AOTRUN_ALIGN_UP(n, a) (((n) + (a)-1) & ~((size_t)(a)-1))
#define AOTRUN_SYMBOL_INFO_STRUCT_SIZE_1_0 \
  AOTRUN_ALIGN_UP(offsetof(aotrun_symbol_info, since) + sizeof(uint32_t), sizeof(size_t))
#define AOTRUN_RUNNER_STATS_STRUCT_SIZE_1_0 (offsetof(aotrun_runner_stats, would_block) + sizeof(uint64_t))
#define AOTRUN_CONSTANTS_STATE_STRUCT_SIZE_1_2 (offsetof(aotrun_constants_state, graph_recaptures) + sizeof(uint64_t))
#define AOTRUN_CONSTANT_INFO_STRUCT_SIZE_1_2 \
  AOTRUN_ALIGN_UP(offsetof(aotrun_constant_info, folded) + sizeof(int), sizeof(size_t))
AOTRUN_STATIC_ASSERT(sizeof(aotrun_package_info) == AOTRUN_PACKAGE_INFO_STRUCT_SIZE_1_0,
                     "aotrun_package_info layout changed");
AOTRUN_STATIC_ASSERT(sizeof(aotrun_tensor_info) == AOTRUN_TENSOR_INFO_STRUCT_SIZE_1_0,
                     "aotrun_tensor_info layout changed");
AOTRUN_STATIC_ASSERT(sizeof(aotrun_symbol_info) == AOTRUN_SYMBOL_INFO_STRUCT_SIZE_1_0,
                     "aotrun_symbol_info layout changed");
AOTRUN_STATIC_ASSERT(sizeof(aotrun_runner_stats) == AOTRUN_RUNNER_STATS_STRUCT_SIZE_1_0,
                     "aotrun_runner_stats layout changed");
AOTRUN_STATIC_ASSERT(sizeof(aotrun_constants_state) == AOTRUN_CONSTANTS_STATE_STRUCT_SIZE_1_2,
                     "aotrun_constants_state layout changed");
AOTRUN_STATIC_ASSERT(sizeof(aotrun_constant_info) == AOTRUN_CONSTANT_INFO_STRUCT_SIZE_1_2,
                     "aotrun_constant_info layout changed");
AOTRUN_STATIC_ASSERT(sizeof(aotrun_named_tensor) == sizeof(void*) + sizeof(DLTensor),
                     "aotrun_named_tensor layout changed");
/* Last slot of each API version. */
AOTRUN_STATIC_ASSERT(offsetof(aotrun_api, runner_run_on_cuda_stream) == 62 * sizeof(void*),
                     "aotrun_api 1.0 table changed");
AOTRUN_STATIC_ASSERT(offsetof(aotrun_api, package_options_set_libtorch) == 64 * sizeof(void*),
                     "aotrun_api 1.1 table changed");
AOTRUN_STATIC_ASSERT(offsetof(aotrun_api, runner_get_constants_state) == 70 * sizeof(void*),
                     "aotrun_api 1.2 table changed");
AOTRUN_STATIC_ASSERT(offsetof(aotrun_api, package_preview_provider) == 77 * sizeof(void*),
                     "aotrun_api 1.3 table changed");

#endif /* AOTRUN_AOTRUN_H_ */
