// The PackageCode of a .pt2 archive and open_pt2: the archive read, the
// model extracted and loaded, its constants located; the entry points are
// the bridge's (bridge.hpp).
#include "base/error.hpp"
#include "base/log.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/device_table.hpp"
#include "package/pt2/archive/model_metadata.hpp"
#include "package/pt2/archive/model_sources.hpp"
#include "package/pt2/archive/pt2_archive.hpp"
#include "package/pt2/provider/link_check.hpp"
#include "package/pt2/provider/provider_choice.hpp"
#include "package/pt2/loading/unique_symbols.hpp"
#include "package/pt2/bridge/aoti_bridge.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/bridge/run_checks.hpp"

namespace aotrun::pt2 {
namespace {

using bridge::Bridge;

// The model's sources (for their checks); a file left out is named, since
// the checks in it are not made.
std::string checked_sources(const ZipArchive& zip, const Pt2Model& model, const std::string& display_name) {
  ModelSources sources = read_model_sources(zip, model);
  if (!sources.unread.empty() && log_enabled(LogLevel::Warn)) {
    std::string names;
    for (const auto& n : sources.unread) names += (names.empty() ? "'" : ", '") + n + "'";
    log_emit(LogLevel::Warn, "package '" + display_name + "': model source(s) " + names + " not read: the sources " +
                                 "would exceed " + std::to_string(kMaxModelSourceBytes >> 20) +
                                 " MiB; the request checks in them are not made");
  }
  return std::move(sources.text);
}

// The package ABI over one opened model: the PackageCode of a .pt2 archive.
class Pt2Code final : public PackageCode {
 public:
  Pt2Code(const std::string& archive, std::unique_ptr<Bridge> bridge) : bridge_(std::move(bridge)) {
    path_ = archive;
    abi_version_ = bridge::abi_version();
    fn_.abi_version = &bridge::abi_version;
    fn_.get_last_error = &bridge::last_error;
    fn_.destroy = &bridge::destroy;
    fn_.num_inputs = &bridge::num_inputs;
    fn_.num_outputs = &bridge::num_outputs;
    fn_.input_spec = &bridge::input_spec;
    fn_.output_spec = &bridge::output_spec;
    fn_.output_shapes = &bridge::output_shapes;
    fn_.run = &bridge::run;
    fn_.run_single_threaded =
        bridge_->lib->fn().run_single_threaded != nullptr ? &bridge::run_single_threaded : nullptr;
    symbols_ = bridge_->lib->symbols();
    info_.label = "AOTInductor .pt2";
    info_.subject = info_.label;
    info_.run_symbol = AotiLibrary::kRun;
    info_.run_single_threaded_symbol = AotiLibrary::kRunSingleThreaded;
    info_.may_leave_specs_unknown = true;
    info_.provider = bridge_->provider;
    info_.provider_reason = bridge_->provider_reason;
  }
  // Every runner's container is gone by now; open's, if no runner took it,
  // is the bridge's to destroy.
  ~Pt2Code() override { bridge::drop_spare(*bridge_); }
  int32_t create(aotrun_pkg_container** out, const aotrun_pkg_create_args* args) const override {
    return bridge::create(bridge_.get(), out, args);
  }
  // A CUDA model's index checks, which a graph replay would skip (the
  // bridge checks its own runs): settled with the specs, before any runner.
  int32_t check_input_values(const DLTensor* inputs, size_t num_inputs, void* stream, std::string* why) const override {
    const Bridge& b = *bridge_;
    if (!b.cuda || !b.specs_ready || b.index_checks.bounds.empty()) return AOTRUN_PKG_OK;
    const int32_t rc = bridge::check_cuda_index_values(b, inputs, num_inputs, stream);
    if (rc != AOTRUN_PKG_OK) *why = bridge::t_last_error;
    return rc;
  }
  // Settled with the specs by the first container (package open makes one).
  bool sizes_outputs_during_run() const override {
    std::lock_guard<std::mutex> lock(bridge_->mu);
    return bridge_->specs_ready && bridge_->any_data_dependent;
  }
  int32_t run_sizing_outputs(aotrun_pkg_container* c, bool single_threaded, const DLTensor* inputs, size_t num_inputs,
                             void* stream, OutputSink* sink) const override {
    return bridge::run_sizing_outputs(c, single_threaded, inputs, num_inputs, stream, sink);
  }
  // Filled by the first create (package open makes a metadata container).
  const std::vector<ConstantInfo>* model_constants() const override {
    return bridge_->constants_ready.load(std::memory_order_acquire) ? &bridge_->constants_infos : nullptr;
  }
  std::vector<int64_t> input_layout(size_t index) const override {
    // Settled by the first container (the host's metadata container).
    std::lock_guard<std::mutex> lock(bridge_->mu);
    return index < bridge_->layouts.size() ? bridge_->layouts[index] : std::vector<int64_t>();
  }
  std::string model_name(bool input, size_t index) const override {
    std::lock_guard<std::mutex> lock(bridge_->mu);
    const std::vector<TensorSpec>& specs = input ? bridge_->inputs : bridge_->outputs;
    return index < specs.size() ? specs[index].model_name : std::string();
  }

 private:
  std::unique_ptr<Bridge> bridge_;  // every container of this code points into it
};

// The model's device: AOTInductor's device keys are the device table's names.
const DeviceKind* model_device(const ModelMetadata& metadata, const std::string& display_name) {
  const DeviceKind* kind = find_device(metadata.device_key);
  if (kind == nullptr) {
    fail(Code::Unsupported, "package '" + display_name + "' is an AOTInductor model for device '" +
                                metadata.device_key + "'; aotrun runs .pt2 packages on " + device_labels());
  }
  return kind;
}

// What the options and the environment ask of the provider; a bad setting
// fails before any extraction.
ProviderRequest provider_request_for(const Pt2Options& options, bool cuda_model, const std::string& display_name) {
  ProviderRequest provider = provider_request(options);
  if (cuda_model) {
    // CUDA models run on aotrun's shim and its CUDA layer only (libtorch's
    // allocator gives graph capture no sound pool: docs/SHIM.md "CUDA").
    if (provider.mode == ProviderMode::Libtorch) {
      fail(Code::Unsupported, "package '" + display_name +
                                  "' is a CUDA AOTInductor model, and aotrun runs CUDA "
                                  ".pt2 packages on its own shim only, but " +
                                  provider.mode_source +
                                  " asks for libtorch (set the provider to auto or shim for this package)");
    }
    if (options.pad_batch) {
      fail(Code::Unsupported, "package '" + display_name + "': pad_batch is not supported for CUDA models yet");
    }
    provider.shim_only = "aotrun runs CUDA models on its own shim only (docs/SHIM.md, \"CUDA\")";
  }
  return provider;
}

}  // namespace

ProviderPreview preview_pt2(const std::string& path, const std::string& display_name, const Pt2Options& options) {
  const std::unique_ptr<ZipArchive> zip = ZipArchive::open(path);
  const Pt2Model model = find_model(*zip, options.model.empty() ? kDefaultModel : options.model);
  const ModelMetadata metadata = parse_model_metadata(model.metadata_json);
  const bool cuda_model = model_device(metadata, display_name)->type == kDLCUDA;
  const ProviderRequest request = provider_request_for(options, cuda_model, display_name);
  const PrivateDir dir;
  const std::string so = "model.so";
  zip->extract(model.library, dir.fd(), so, 0500);  // its imports are read, not loaded
  return preview_provider(request, dir.path() + "/" + so, display_name);
}

std::unique_ptr<PackageCode> open_pt2(const std::string& path, const std::string& display_name,
                                      const Pt2Options& options, DLDevice* device) {
  const std::unique_ptr<ZipArchive> zip = ZipArchive::open(path);
  const Pt2Model model = find_model(*zip, options.model.empty() ? kDefaultModel : options.model);
  // {"AOTI_DEVICE_KEY": "cpu" | "cuda", "AOTI_CPU_ISA": ..., ...}, as inspect shows it.
  const ModelMetadata metadata = parse_model_metadata(model.metadata_json);
  const DeviceKind* device_kind = model_device(metadata, display_name);
  const bool cuda_model = device_kind->type == kDLCUDA;

  auto b = std::make_unique<Bridge>();
  b->name = display_name;
  b->pad_batch = options.pad_batch;
  b->above_compiled_max = options.above_compiled_max;
  b->cuda = cuda_model;
  const ProviderRequest provider = provider_request_for(options, cuda_model, display_name);
  b->sources = checked_sources(*zip, model, display_name);  // parsed with the model's input count (settle_specs)
  b->dir = std::make_unique<PrivateDir>();
  // A weights blob stored uncompressed is mapped from the archive itself:
  // open time does not grow with the weights.
  const std::string so =
      extract_model(*zip, model, *b->dir, cuda_model ? std::string() : ModelConstants::blob_in_place(path, model));
  // Per package, from what the model library imports (read, not loaded).
  const ProviderChoice choice = choose_provider(provider, so, display_name);
  b->shim = choice.shim;
  b->provider = provider_name(choice.kind);
  b->provider_reason = choice.reason;
  // Before the first container: opening runs the model once.
  b->proxy_executor =
      bridge::make_proxy_executor(read_extern_nodes(*zip, model), *b->shim, display_name, choice.reason);
  if (cuda_model) {
    if (choice.kind != Provider::Shim) {
      fail(Code::Unsupported, "package '" + display_name +
                                  "' is a CUDA AOTInductor model, and aotrun runs CUDA "
                                  ".pt2 packages on its own shim only; this process uses libtorch (" +
                                  choice.reason + ")");
    }
    std::string why;
    if (!cuda::usable(0, &why)) {
      fail(cuda::compiled_in() ? Code::Device : Code::Unsupported,
           "package '" + display_name +
               "' is a CUDA AOTInductor model and needs CUDA device 0, which is not usable "
               "here: " +
               why);
    }
    b->cuda_shim = &load_cuda_shim();
  }
  check_model_requirements(so, display_name, *b->shim, metadata.required_cpu_isa());  // before dlopen
  // So that dlclose can unload it once nothing of it is alive (unique_symbols.hpp).
  (void)demote_unique_symbols(b->dir->fd(), so.substr(so.find_last_of('/') + 1));
  b->lib = AotiLibrary::load(so);
  b->update_plan = plan_constant_updates(*b->lib, so);
  b->constants = std::make_unique<ModelConstants>(path, *zip, model, b->dir->path(), *b->lib);
  if (cuda_model && !b->constants->inside_library()) {
    fail(Code::Unsupported, "package '" + display_name +
                                "' is a CUDA AOTInductor model whose weights are stored "
                                "outside its library; aotrun runs CUDA models with their weights inside only, so far");
  }
  // The library is loaded and a weights blob mapped: nothing reads the
  // extracted files by name any more (unless the model maps its own file, or
  // loads its CUDA kernels from the .cubin files beside it when they first
  // run), so they go now, and a process killed later leaves no directory behind.
  if (!cuda_model && !b->constants->library_reads_itself()) b->dir->remove();
  if (device != nullptr) *device = DLDevice{static_cast<DLDeviceType>(device_kind->type), 0};

  return std::make_unique<Pt2Code>(path, std::move(b));
}

}  // namespace aotrun::pt2
