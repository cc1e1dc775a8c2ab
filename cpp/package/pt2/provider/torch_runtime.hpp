// libtorch's stable C shim (torch/csrc/inductor/aoti_torch/c/shim.h), the
// only part of libtorch aotrun uses: AOTInductor models take and return
// AtenTensorHandle, and these functions convert them to and from DLPack.
// Resolved with dlsym at run time; libaotrun itself never links libtorch and
// loads on machines without it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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
  int32_t device_type_cuda = 1;  // c10's code; read from the shim where it exports it
  // Optional: a copy between any two tensors (aoti_torch_copy_), which on
  // aotrun's shim also moves CUDA memory (on the current stream).
  using Copy = int32_t (*)(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking);
  Copy copy = nullptr;
  // Optional: a new tensor (aoti_torch_empty_strided).
  using EmptyStrided = int32_t (*)(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                   int32_t device_type, int32_t device_index, AtenTensorHandle* out);
  EmptyStrided empty_strided = nullptr;
  // Optional: the last failure's message (aotrun's shim only).
  using LastError = const char* (*)();
  LastError last_error = nullptr;
  // aotrun's shim only: sets (clears, with "") this thread's last error, so
  // a failed run reports the shim's reason and never a stale one.
  using SetLastError = void (*)(const char*);
  SetLastError set_last_error = nullptr;
  // aotrun's shim only (since shim 1.4): AOTInductor's proxy executor for a
  // model's extern kernel node list (archive/extern_nodes.hpp), which runs
  // the ops the model calls through aoti_torch_proxy_executor_call_function.
  using ProxyCreate = int32_t (*)(const char* nodes_json, size_t size, void** out);
  using ProxyDelete = void (*)(void*);
  ProxyCreate proxy_executor_create = nullptr;
  ProxyDelete proxy_executor_delete = nullptr;
  // aotrun's shim only (since shim 1.5): declares that nothing writes a
  // tensor's memory any more (a model's parameters), so the shim keeps its
  // packed copies (constants/parameters.hpp).
  using DeclareConstant = int32_t (*)(AtenTensorHandle);
  DeclareConstant declare_constant = nullptr;
  // aotrun's shim only (since shim 1.5): a function the shim calls on this
  // thread after each tensor it makes over caller memory (each constant
  // AOTInductor has copied out of the library, at a container's creation).
  using BlobHook = void (*)(void* context);
  using SetBlobHook = void (*)(BlobHook hook, void* context);
  SetBlobHook set_blob_hook = nullptr;
  // aotrun's shim only (since shim 1.6): whether this thread's constants may
  // slide in place within the model's blob as they are made (aligned
  // without a copy); only where nothing writes the blob afterwards.
  using SetConstantSlides = void (*)(int allowed);
  SetConstantSlides set_constant_slides = nullptr;

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

// ": <the shim's last error>" when the shim can say it, else "".
std::string shim_error(const TorchShim& shim);

// The word that names aotrun's own shim instead of a libtorch, in the
// `libtorch` option and $AOTRUN_LIBTORCH (since 1.2).
inline constexpr const char* kAotrunShim = "shim";

// Where aotrun's own shim's stand-ins (libtorch.so, libtorch_cpu.so,
// libc10.so, named like libtorch's; cpp/shim) lie beside this libaotrun:
// <libaotrun's directory>/aotrun/torch-standins, in the build tree as
// installed. "" when this libaotrun was built without them.
std::string bundled_shim_dir();
// The library behind those stand-ins, libaotrun_shim.so.1 (two directories
// up, what they NEED): the one whose exports say what the shim implements.
// "" when there is none.
std::string bundled_shim_library();

// The CUDA layer of aotrun's shim (libaotrun_shim_cuda.so.1, docs/SHIM.md
// "CUDA"): its library beside the shim's, "" when this build has none.
std::string bundled_shim_cuda_library();

// What the bridge calls of the shim's CUDA layer.
struct CudaShim {
  using CreateStreamGuard = int32_t (*)(void* stream, int32_t device_index, void** guard);
  using DeleteStreamGuard = int32_t (*)(void* guard);
  CreateStreamGuard create_stream_guard = nullptr;
  DeleteStreamGuard delete_stream_guard = nullptr;
  // Pools of their own (aotrun_shim/cuda.h): one per container, so that a
  // runner's cached memory is its own and goes back with it.
  using PoolCreate = int32_t (*)(int32_t device_index, void** pool);
  using PoolDestroy = int32_t (*)(void* pool);
  using PoolUse = int32_t (*)(void* pool, void** previous);
  PoolCreate pool_create = nullptr;
  PoolDestroy pool_destroy = nullptr;
  PoolUse pool_use = nullptr;
  // Device memory to the host, outside captures (the index checks).
  using ReadToHost = int32_t (*)(void* stream, const void* src, void* dst, size_t bytes, int32_t* done);
  ReadToHost read_to_host = nullptr;
};

// Loads the CUDA stand-ins (libc10_cuda.so, libtorch_cuda.so: they bring the
// CUDA layer and the CUDA runtime) beside the CPU ones, once, and returns the
// layer's functions. Only with aotrun's shim in use. Throws Error LOAD_FAILED
// naming what could not be loaded (e.g. no libcudart.so.13 on this machine).
const CudaShim& load_cuda_shim();

// Who implements the C shim for the process's .pt2 models.
enum class Provider { Shim, Libtorch };
// "shim" or "libtorch": the words of the provider option and of reports.
const char* provider_name(Provider p);

// The provider this process has: loaded by aotrun for an earlier package, or
// a libtorch the host loaded itself (a Python host that imported torch).
// One per process: a model's DT_NEEDED libtorch_cpu.so binds to the first
// loaded object with that soname, whichever provider it belongs to.
struct ProviderInUse {
  Provider kind;
  std::string source;  // what was loaded: a path, or the library found in the process
  bool by_host;        // loaded by the host, not by aotrun
};

// What a policy (provider_choice.cpp) decides under the provider lock: the
// provider to use and, for libtorch, where it is ("" = the one in use).
struct ProviderPick {
  Provider kind;
  std::string libtorch;
};

// Calls decide(in_use) with the process's provider (nullopt when none yet)
// and loads what it picks, if not loaded already; decide may throw to refuse.
// Serialised: two packages opened at once cannot load two providers. Loaded
// RTLD_LOCAL (torch_runtime.cpp says why) and never unloaded. Throws Error
// LOAD_FAILED / MISSING_SYMBOL naming what was tried; returns the shim's
// functions and the provider actually serving (a libtorch path that holds
// aotrun's stand-ins is the shim).
struct SettledProvider {
  const TorchShim* shim;
  ProviderInUse in_use;
};
SettledProvider settle_provider(const std::function<ProviderPick(const std::optional<ProviderInUse>&)>& decide);

// The provider this process has now, without loading anything: what
// settle_provider would pass to its policy (nullopt when none yet).
std::optional<ProviderInUse> provider_in_use();

// The library whose exports serve a provider loaded from `source` (a
// ProviderInUse's or a ProviderPick's: libtorch_cpu.so, its directory, or a
// library found in the process), and which provider that is: libtorch_cpu.so
// itself, or aotrun's libaotrun_shim.so.1 when `source` holds the shim's
// stand-ins (which NEED it); for the shim with no source, the one beside this
// libaotrun. `file` is "" when there is no such file.
struct ServingLibrary {
  Provider kind;
  std::string file;
};
ServingLibrary serving_library(Provider kind, const std::string& source);

// The process's shim chosen by name only (bench/hotpath.cpp): `hint` (or else
// $AOTRUN_LIBTORCH) is a libtorch path or "shim"; a provider already in use
// wins. Throws Error LOAD_FAILED naming what to set when nothing is named.
const TorchShim& torch_shim(const std::string& hint);

}  // namespace aotrun::pt2
