// A CUDA device as a runner's device, over the CUDA backend's Context
// (cuda_context.hpp: no CUDA header here, so this compiles into the core
// whether or not CUDA was built in).
#include "base/guard.hpp"
#include "base/log.hpp"
#include "device/cpu/host_services.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/device_table.hpp"
#include "device/runner_device.hpp"

namespace aotrun::cuda {

std::unique_ptr<GraphDevice> make_graph_device(Context& ctx);

namespace {

class CudaRunnerDevice final : public RunnerDevice {
 public:
  // The Context outlives the runner's container and graphs, which use its
  // pool and streams: the runner destroys them first (member order).
  CudaRunnerDevice(const DevicePackage& pkg, std::unique_ptr<Context> ctx)
      : get_last_error_(pkg.get_last_error), ctx_(std::move(ctx)) {}

  const aotrun_pkg_host* host() const override { return ctx_->host(); }
  void* own_stream() const override { return ctx_->stream(); }
  Status finish_own_stream() override { return ctx_->synchronize(ctx_->stream()); }

  void begin_call() override { clear_last_failure(); }
  Status explain_failed_call(int32_t rc) override {
    if (last_failure().empty()) return Status::Ok();
    return Status{cpu::from_pkg_code(rc),
                  "failed: " + last_failure() + " [package: " + package_last_error(get_last_error_) + "]"};
  }

  std::unique_ptr<GraphDevice> make_graph_device() override { return cuda::make_graph_device(*ctx_); }
  bool takes_aotrun_streams() const override { return false; }
  OutputMemory allocate_output(size_t bytes) override {
    OutputMemory m{nullptr, &release_device_memory};
    const Status st = allocate_device_memory(ctx_->device_id(), bytes, &m.data);
    if (!st.ok()) fail(st.code, "cannot allocate an output: " + st.message);
    return m;
  }
  // A GPU keeps a deeper queue busy: launch latency hides behind it.
  int32_t default_max_inflight(int32_t) const override { return 32; }

 private:
  aotrun_pkg_get_last_error_fn get_last_error_;
  std::unique_ptr<Context> ctx_;
};

}  // namespace

std::unique_ptr<RunnerDevice> make_runner_device(const DevicePackage& pkg, int device_id) {
  std::string why;
  if (!usable(device_id, &why)) {
    fail(compiled_in() ? Code::Device : Code::Unsupported,
         "package '" + pkg.name + "' cannot run on CUDA device " + std::to_string(device_id) + ": " + why);
  }
  LogHooks hooks;
  hooks.enabled = [](int32_t l) { return log_enabled(static_cast<LogLevel>(l)); };
  hooks.emit = [](int32_t l, const std::string& m) { log_emit(static_cast<LogLevel>(l), m); };
  return std::make_unique<CudaRunnerDevice>(pkg, Context::create(device_id, pkg.name, pkg.get_last_error, hooks));
}

}  // namespace aotrun::cuda
