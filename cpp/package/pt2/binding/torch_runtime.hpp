// libtorch's stable C shim (torch/csrc/inductor/aoti_torch/c/shim.h), the
// only part of libtorch aotrun uses: AOTInductor models take and return
// AtenTensorHandle, and these functions convert them to and from DLPack.
// Resolved with dlsym at run time; libaotrun itself never links libtorch and
// loads on machines without it.
#pragma once

#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

namespace aotrun::pt2 {

struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;

struct TorchShim {
  using CreateFromBlob = int32_t (*)(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                                     int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
                                     AtenTensorHandle* out);
  using Delete = int32_t (*)(AtenTensorHandle);
  using GetDataPtr = int32_t (*)(AtenTensorHandle, void**);
  using GetInts = int32_t (*)(AtenTensorHandle, int64_t**);
  using GetInt64 = int32_t (*)(AtenTensorHandle, int64_t*);
  using GetInt32 = int32_t (*)(AtenTensorHandle, int32_t*);
  using Constant = int32_t (*)();
  using NewHandle = int32_t (*)(AtenTensorHandle orig, AtenTensorHandle* out);

  CreateFromBlob create_tensor_from_blob = nullptr;
  Delete delete_tensor_object = nullptr;
  GetDataPtr get_data_ptr = nullptr;
  GetInts get_sizes = nullptr;
  GetInts get_strides = nullptr;
  GetInt64 get_dim = nullptr;
  GetInt32 get_dtype = nullptr;
  // Optional (NULL where libtorch lacks it): a new handle to the same tensor,
  // i.e. one more reference, not a new tensor. The bridge hands a model such
  // references to input views it keeps between runs.
  NewHandle new_tensor_handle = nullptr;
  int32_t device_type_cpu = 0;

  // torch dtype code (c10::ScalarType, read from the shim's
  // aoti_torch_dtype_* functions) <-> DLPack; -1 / false when it has none.
  int32_t torch_dtype(DLDataType dt) const;
  bool dlpack_dtype(int32_t torch_dtype, DLDataType* out) const;

  struct DtypePair {
    int32_t torch;
    DLDataType dl;
  };
  DtypePair dtypes[12] = {};
  int num_dtypes = 0;
};

// The DLPack dtype of torch's dtype `name` ("float32", "int64", ...: the
// suffix of the shim's aoti_torch_dtype_<name>()); false when aotrun has none.
bool dlpack_dtype_named(const std::string& name, DLDataType* out);

// The word that names aotrun's own shim instead of a libtorch, in the
// `libtorch` option and $AOTRUN_LIBTORCH (since 1.2).
inline constexpr const char* kAotrunShim = "shim";

// Where aotrun's own shim's stand-ins (libtorch.so, libtorch_cpu.so,
// libc10.so, named like libtorch's; cpp/shim) lie beside this libaotrun:
// <libaotrun's directory>/aotrun/torch-standins, in the build tree as
// installed. "" when this libaotrun was built without them.
std::string bundled_shim_dir();

// Returns the process's shim, loading libtorch on first use. `hint` (from
// the package options; "" = none) or else $AOTRUN_LIBTORCH names
// libtorch_cpu.so or the directory holding it (e.g. <site-packages>/torch/lib),
// or is "shim": aotrun's own implementation (bundled_shim_dir(), docs/SHIM.md),
// loaded like a libtorch; if torch is already loaded in the process (a Python
// host), that copy is used. libtorch is loaded RTLD_LOCAL (torch_runtime.cpp says why) and never
// unloaded. Thread-safe. Throws Error LOAD_FAILED naming what was tried and
// how to point aotrun at a libtorch.
const TorchShim& torch_shim(const std::string& hint);

}  // namespace aotrun::pt2
