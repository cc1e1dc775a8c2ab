/* The tensor spec the plain C test packages declare: float32 `shape` of rank
 * `ndim`, copied into the host's spec as far as its struct_size reaches
 * (package_abi.h: the package fills min(struct_size, its own size) bytes
 * and says how many it filled). */
#ifndef AOTRUN_TESTS_SPEC_FILL_H_
#define AOTRUN_TESTS_SPEC_FILL_H_

#include <string.h>

#include <aotrun/package_abi.h>

static inline int32_t fill_f32_spec(const char* name, int32_t ndim, const int64_t* shape, aotrun_pkg_tensor_spec* out) {
  aotrun_pkg_tensor_spec s;
  memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.name = name;
  s.dtype.code = kDLFloat;
  s.dtype.bits = 32;
  s.dtype.lanes = 1;
  s.ndim = ndim;
  s.shape = shape;
  size_t n = out->struct_size < sizeof(s) ? out->struct_size : sizeof(s);
  memcpy(out, &s, n);
  out->struct_size = n;
  return AOTRUN_PKG_OK;
}

#endif
