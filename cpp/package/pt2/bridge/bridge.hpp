// The .pt2 bridge's shared state and its entry points, inside the bridge
// only (bridge/*.cpp): the package ABI over an AOTInductor container.
// aoti_bridge.hpp is what the rest of aotrun sees.
//
//   entry_points.cpp     the package ABI's functions, create .. output_shapes
//   specs_probe.cpp      specs and constants worked out from the first container
//   run_checks.hpp       what a run is refused for before it is launched
//   launch_contexts.cpp  the launched call, its reusable contexts and input views
//   pt2_code.cpp         Pt2Code and open_pt2
//   spare_container.cpp  package open's container, kept for the first runner
//   proxy_executor.cpp   the model's proxy executor, made at open
#pragma once

#include <aotrun/package_abi.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/guard.hpp"
#include "package/package_code.hpp"
#include "package/pt2/archive/extern_nodes.hpp"
#include "package/pt2/archive/private_dir.hpp"
#include "package/pt2/loading/aoti_library.hpp"
#include "package/pt2/provider/tensor_convert.hpp"
#include "package/pt2/constants/constant_list.hpp"
#include "package/pt2/constants/model_constant_update.hpp"
#include "package/pt2/constants/model_constants.hpp"
#include "package/pt2/specs/index_bounds.hpp"
#include "package/pt2/specs/output_dims.hpp"
#include "package/pt2/specs/symbolic_shapes.hpp"
#include "package/pt2/specs/wrapper_specs.hpp"
#include "package/tensor_spec.hpp"

namespace aotrun::pt2::bridge {

constexpr uint64_t kMagic = 0x7074325f62726467ull;  // "pt2_brdg"
constexpr size_t kMaxShapeKeys = 256;

// The message of the last failure on this thread (the package ABI's
// get_last_error).
extern thread_local std::string t_last_error;

inline int32_t fail_with(int32_t code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

// The bridge is a package: nothing may leave its entry points as an
// exception. It calls foreign C++ (the model, libtorch's shim) behind C
// functions that should not throw, and allocates; whatever escapes anyway
// becomes a status (bad_alloc: OUT_OF_MEMORY) with its text as last error.
template <class F>
int32_t bridge_guard(const char* where, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    const bool oom = caught().kind == Caught::Kind::OutOfMemory;
    try {
      t_last_error =
          oom ? std::string(where) + ": out of memory" : std::string(where) + " " + detail::describe_thrown();
    } catch (...) {
      t_last_error.clear();
    }
    return oom ? AOTRUN_PKG_ERR_OUT_OF_MEMORY : AOTRUN_PKG_ERR_RUNTIME;
  }
}

struct BridgeContainer;

// Shared by every container of one opened .pt2.
struct Bridge {
  std::unique_ptr<PrivateDir> dir;
  // The model's code: unloaded with the last holder (aoti_library.hpp),
  // this bridge, a container or a launch context.
  std::shared_ptr<const AotiLibrary> lib;
  std::unique_ptr<ModelConstants> constants;  // where the weights are; provided to every container
  const TorchShim* shim = nullptr;
  // A CUDA model (AOTI_DEVICE_KEY "cuda"): run on the caller's stream on the
  // calling thread, its tensors in device memory; cuda_shim is then set.
  bool cuda = false;
  const CudaShim* cuda_shim = nullptr;
  std::string provider, provider_reason;  // which shim provider serves the model, and why
  // AOTInductor's proxy executor for the ops the model calls through it
  // (aotrun's shim makes it from the model's extern kernel node list; null
  // when the model has none), passed to every run. Immutable once made.
  std::shared_ptr<void> proxy_executor;
  std::string name;

  UpdatePlan update_plan;  // how this release takes replacement constants (read at open)

  std::mutex mu;  // guards everything below
  // Package open's metadata container, kept at its destroy for the next
  // create that asks for what it is (spare_container.cpp); owned here.
  BridgeContainer* spare = nullptr;
  // The model's constants, read from the first container (package open
  // creates one). Never changed once constants_ready is set.
  std::atomic<bool> constants_ready{false};
  std::vector<Pt2Constant> constants_list;
  std::vector<ConstantInfo> constants_infos;  // what model_constants() hands out
  bool has_folded = false;
  std::string sources;             // the model's C++ sources, until settle_specs parses them
  std::vector<InputCheck> checks;  // empty when the sources carry none
  // What else the sources say about valid inputs (issue #29): which dims
  // must agree, and the values integer inputs index tables with. Read with
  // the checks; never changed once specs_ready is set.
  SymbolicShapes symbolic;
  IndexChecks index_checks;
  // Per output: its size depends on the values of the inputs (issue #40: an
  // unbacked size such as x[:, :lengths.max()]), so a probe on zeros cannot
  // tell it: output-shape queries run the model on the request's values.
  std::vector<bool> data_dependent;
  bool any_data_dependent = false;
  // Batch padding (Pt2Options::pad_batch): asked for at open; settled by
  // settle_specs (settle_batch). Every input's dim 0 belongs to one batch:
  // the inputs whose dim 0 share a size symbol (CLIP's texts and images are
  // two batches). A batch compiled for batch_min[g] > 1 and up runs a
  // request of 1..batch_min[g]-1 rows padded, and the output dims that
  // follow it (follows) are cut back. Empty: no padding.
  bool pad_batch = false;
  bool above_compiled_max = false;        // Pt2Options::above_compiled_max
  std::vector<int> batch_of;              // per input: its batch
  std::vector<int64_t> batch_min;         // per batch: its compiled minimum
  std::vector<std::vector<int>> follows;  // per output, per dim: the batch it follows, or -1
  // Per input: the strides the model was compiled for; empty = row-major.
  std::vector<std::vector<int64_t>> layouts;
  std::string no_checks_reason;
  bool specs_ready = false;
  std::vector<TensorSpec> inputs, outputs;                      // the storage the ABI specs point into
  std::vector<std::string> input_names;                         // inputs[i].name, for messages
  std::map<std::vector<int64_t>, std::vector<int64_t>> shapes;  // input shapes -> output shapes
};

// A container's spare launch contexts (launch_contexts.cpp).
struct WorkPool;

struct BridgeContainer {
  uint64_t magic = kMagic;
  Bridge* b = nullptr;
  // The code `h` belongs to, held until the container is deleted.
  std::shared_ptr<const AotiLibrary> lib;
  AotiContainerHandle h = nullptr;
  const aotrun_pkg_host* host = nullptr;
  // Tensor handles the model's container uses without owning them (its
  // user-managed constants): deleted after the container.
  std::vector<AtenTensorHandle> kept;
  // This container's view of the weights blob its kept handles point into
  // (none when the constants are elsewhere or were copied).
  std::unique_ptr<BlobMapping> weights;
  // Launch contexts released by finished runs, for the next runs (shared
  // with every context made here, which may outlive the container).
  std::shared_ptr<WorkPool> pool;
  // A CUDA model's memory pool (aotrun_shim_cuda_pool): the model's tensors
  // come from it during this container's runs, so a runner's cached memory
  // is its own and returns to the device with the container (destroyed
  // last, in the destructor). Null for CPU.
  void* cuda_pool = nullptr;
  // OpenMP threads each of this container's CPU runs uses (omp_threads.hpp:
  // the CPUs shared among its model instances); 0: the thread's own setting.
  int omp_threads = 0;
  // How many of its parameters the shim took as constant at create
  // (constants/parameters.hpp): 0 on libtorch, for a CUDA model, or a model
  // older than torch 2.13.
  size_t declared_parameters = 0;
  // Created as package open's metadata container (num_models 0, no
  // constants, CPU): destroy keeps it as the bridge's spare.
  bool spare_kind = false;
  // The input ranks and dims of this container's last single-threaded run
  // that passed check_input_shapes, a pure function of them once
  // specs_ready (run_checks.hpp): a serving loop repeats its shapes, and
  // compares instead of checking again. Single-threaded runs of a
  // container are serialised by their caller (package_abi.h), so it needs
  // no lock; threaded runs neither read nor write it.
  struct AcceptedShapes {
    static constexpr size_t kDims = 32;
    size_t len = 0;       // 0: none
    int64_t dims[kDims];  // per input: its rank, then its dims
  } accepted;
  BridgeContainer();
  ~BridgeContainer();
  BridgeContainer(const BridgeContainer&) = delete;
  BridgeContainer& operator=(const BridgeContainer&) = delete;
};

// A container's own CUDA pool for the calling thread's allocations, for a
// scope: its runs and its probes (nothing for CPU models).
class CudaPoolScope {
 public:
  CudaPoolScope(const CudaShim* cuda, void* pool) : cuda_(pool != nullptr ? cuda : nullptr) {
    if (cuda_ != nullptr) (void)cuda_->pool_use(pool, &previous_);
  }
  ~CudaPoolScope() {
    if (cuda_ != nullptr) (void)cuda_->pool_use(previous_, nullptr);
  }
  CudaPoolScope(const CudaPoolScope&) = delete;
  CudaPoolScope& operator=(const CudaPoolScope&) = delete;

 private:
  const CudaShim* cuda_;
  void* previous_ = nullptr;
};

inline BridgeContainer* as_container(aotrun_pkg_container* c) {
  auto* k = reinterpret_cast<BridgeContainer*>(c);
  return k != nullptr && k->magic == kMagic ? k : nullptr;
}

// Specs and constants, settled from the first container (specs_probe.cpp).
bool probe(Bridge& b, AotiContainerHandle h, const std::vector<DLDataType>& dtypes,
           const std::vector<std::vector<int64_t>>& shapes, std::vector<OutputMeta>* out, std::string* why);
void settle_constants(Bridge& b, AotiContainerHandle h);
void settle_specs(Bridge& b, AotiContainerHandle h);
// Deletes a container's kept handles (after the container itself).
void release_kept(const TorchShim& shim, std::vector<AtenTensorHandle>* kept);

// Package open's metadata container, kept (spare_container.cpp). Opening a
// package creates a container to read its specs and destroys it, and the
// first runner creates one at once: for a .pt2 each loads every weight
// (frozen ResNet-18: 45 MB copied, half of open). A metadata container of a
// CPU model made with no replacement constants is kept at its destroy, and
// the next create of one model instance with no replacement constants takes
// it, bound to its host; any other create first destroys it, so a model's
// weights are never resident twice for it. The Bridge's owner drops it.
//   park_spare: from destroy; true when it kept `c` (not destroyed).
//   take_spare: from create; the kept container, bound to args->host, when
//     it fits `args`; otherwise null, after destroying one that did not.
//   drop_spare: destroys the kept container, if any.
// Any thread; each takes b.mu.
bool park_spare(BridgeContainer* c);
BridgeContainer* take_spare(Bridge& b, const aotrun_pkg_create_args& args);
void drop_spare(Bridge& b);
// Destroys the model's container and `c` (destroy, drop_spare).
int32_t destroy_container(BridgeContainer* c);

// The proxy executor for `nodes` (made by aotrun's shim), or null when the
// model has no extern kernel nodes. Throws Error UNSUPPORTED naming the ops
// when the provider cannot run them: aotrun's shim refuses an op it does not
// run; libtorch's executor cannot be made from C (provider_reason says why
// the package runs on libtorch).
std::shared_ptr<void> make_proxy_executor(const ExternNodes& nodes, const TorchShim& shim, const std::string& name,
                                          const std::string& provider_reason);

// Calls the model's run entry point `run` (the threaded or single-threaded
// one, named `what` in messages); false with *why on failure. AOTInductor's
// message names only the shim call that failed ("... API call failed at");
// aotrun's shim says why (an argument its kernel does not take), so its
// last error, cleared before the call, goes with it (launch_contexts.cpp).
bool call_model(const Bridge& b, AotiFunctions::Run run, const char* what, AotiContainerHandle h, AtenTensorHandle* in,
                size_t n_in, AtenTensorHandle* out, size_t n_out, void* stream, std::string* why);

// A run: its checks against the model (run_checks.hpp), then its launch on
// the host's stream (launch_contexts.cpp). The package's status, with
// t_last_error set on failure. With a `sink`, a->outputs is NULL and each
// output is written into what the sink allocates for the shape the model
// gave it (PackageCode::run_sizing_outputs: data-dependent sizes).
int32_t run_common(aotrun_pkg_container* pc, const aotrun_pkg_run_args* a, bool single_threaded,
                   OutputSink* sink = nullptr);

// The package ABI (entry_points.cpp).
uint32_t abi_version();
const char* last_error();
int32_t create(void* binding, aotrun_pkg_container** out, const aotrun_pkg_create_args* args);
int32_t destroy(aotrun_pkg_container* pc);
int32_t num_inputs(aotrun_pkg_container* c, size_t* out);
int32_t num_outputs(aotrun_pkg_container* c, size_t* out);
int32_t input_spec(aotrun_pkg_container* c, size_t i, aotrun_pkg_tensor_spec* s);
int32_t output_spec(aotrun_pkg_container* c, size_t i, aotrun_pkg_tensor_spec* s);
int32_t output_shapes(aotrun_pkg_container* pc, const aotrun_pkg_shape_args* a);
int32_t run(aotrun_pkg_container* c, const aotrun_pkg_run_args* a);
int32_t run_single_threaded(aotrun_pkg_container* c, const aotrun_pkg_run_args* a);
// PackageCode::run_sizing_outputs (data-dependent output sizes).
int32_t run_sizing_outputs(aotrun_pkg_container* c, bool single_threaded, const DLTensor* inputs, size_t num_inputs,
                           void* stream, OutputSink* sink);

}  // namespace aotrun::pt2::bridge
