/* aotrun shim device layers (since aotrun-shim 1.1).
 *
 * libaotrun_shim.so.1 keeps tensors of any device type; the memory of a
 * device other than the CPU comes from a device layer, a library that
 * registers one table for its device type when it is loaded (the CUDA layer,
 * libaotrun_shim_cuda.so.1, does so from its ELF constructor). Tensors of a
 * device type with no layer are refused with an error naming the type.
 *
 * Who owns what: the table and its strings are the layer's and must stay
 * valid until the process exits (a layer must never be unloaded: aotrun keeps
 * the stand-ins that load the CUDA layer open for the process's life). Memory returned by allocate belongs to the
 * shim's storage object until it passes it back to release.
 *
 * Threads: every function may be called from any thread, concurrently.
 *
 * Errors: functions returning `const char*` return NULL on success, else a
 * message naming the failed call (owned by the layer, valid until the next
 * call of that function on the same thread). */
#ifndef AOTRUN_SHIM_DEVICE_LAYER_H_
#define AOTRUN_SHIM_DEVICE_LAYER_H_

#include <stddef.h>
#include <stdint.h>

#include "aotrun_shim/shim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aotrun_shim_device_layer {
  /* sizeof(aotrun_shim_device_layer) as the layer was compiled: fields are
   * only appended, and the shim reads none past struct_size. */
  size_t struct_size;
  /* c10's device type code served (1: CUDA). */
  int32_t device_type;
  /* "cuda": for messages. */
  const char* name;
  /* nbytes of device memory on device `device_index` (-1: the current
   * device). *data is NULL for 0 bytes. *record is the layer's own note of
   * the allocation (stream, capture), handed back to release. */
  const char* (*allocate)(int32_t device_index, size_t nbytes, void** data, void** record);
  /* Gives back what allocate returned. Never fails (a failure is logged). */
  void (*release)(int32_t device_index, void* data, void* record);
  /* Copies nbytes between dst and src, each of device type CPU (0) or this
   * layer's. Ordered on the current stream of the layer; returns once the
   * bytes are in place when either side is CPU memory. */
  const char* (*copy_bytes)(int32_t device_index, void* dst, int32_t dst_device_type, const void* src,
                            int32_t src_device_type, size_t nbytes);
  /* dst[i] = src[i] for every index i of `sizes` (ndim <= 8), both strided
   * views (element strides, src strides may be 0 to broadcast) of elements
   * of elem_size bytes (1, 2, 4 or 8) in this layer's memory. */
  const char* (*copy_strided)(int32_t device_index, void* dst, const void* src, size_t elem_size, int64_t ndim,
                              const int64_t* sizes, const int64_t* dst_strides, const int64_t* src_strides);
} aotrun_shim_device_layer;

/* Registers `layer` for layer->device_type. Returns AOTI_TORCH_FAILURE when
 * the table is NULL or too short, or another layer holds the type. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_register_device_layer(const aotrun_shim_device_layer* layer);

/* Sets this thread's last error (aotrun_shim_last_error) to a copy of
 * `message`: for a layer's own exported functions that fail. NULL or ""
 * clears it (the host does, before a run, so that a failed run reports its
 * own reason and never an earlier one). */
AOTRUN_SHIM_API void aotrun_shim_set_last_error(const char* message);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_DEVICE_LAYER_H_ */
