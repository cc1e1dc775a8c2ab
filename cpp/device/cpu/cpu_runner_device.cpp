// The CPU as a runner's device: synchronous runs go on an inline stream (the
// package's launches run on the calling thread), host services from
// host_services.cpp, graph mode over the CPU graph emulation.
#include "base/guard.hpp"
#include "base/host_alloc.hpp"
#include "device/cpu/capture.hpp"
#include "device/cpu/host_services.hpp"
#include "device/cpu/stream.hpp"
#include "device/device_table.hpp"
#include "device/runner_device.hpp"

namespace aotrun::cpu {

std::unique_ptr<GraphDevice> make_graph_device();

namespace {

constexpr size_t kOutputAlign = 256;  // run_alloc's outputs: aligned for any vector width

class CpuRunnerDevice final : public RunnerDevice {
 public:
  explicit CpuRunnerDevice(const DevicePackage& pkg)
      : get_last_error_(pkg.get_last_error), stream_(Stream::Kind::Inline) {
    ctx_.default_stream = &stream_;
    ctx_.last_error = pkg.get_last_error;
    ctx_.package_name = pkg.name;
    host_ = make_host_services(&ctx_);
  }

  const aotrun_pkg_host* host() const override { return &host_; }
  void* own_stream() const override { return const_cast<Stream*>(&stream_); }
  Status finish_own_stream() override { return Status::Ok(); }
  bool own_stream_synchronous() const override { return true; }  // an inline stream

  void begin_call() override { clear_launch_failure(); }

  Status explain_failed_call(int32_t rc) override {
    if (!last_launch_failure().empty()) {
      return Status{from_pkg_code(rc), "failed in launched work: " + last_launch_failure()};
    }
    if (rc == AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED && !capture_rules::last_violation().empty()) {
      return Status{Code::CaptureUnsupported, "failed under stream capture: " + capture_rules::last_violation() +
                                                  " [package: " + package_last_error(get_last_error_) + "]"};
    }
    return Status::Ok();
  }

  std::unique_ptr<GraphDevice> make_graph_device() override { return cpu::make_graph_device(); }
  bool takes_aotrun_streams() const override { return true; }
  OutputMemory allocate_output(size_t bytes) override {
    OutputMemory m{aligned_alloc_bytes(bytes, kOutputAlign), [](void* p) { aligned_free(p, kOutputAlign); }};
    if (m.data == nullptr) {
      fail(Code::OutOfMemory, "cannot allocate " + std::to_string(bytes) + " bytes of host memory for an output");
    }
    return m;
  }
  // Each instance has one run executing and one queued.
  int32_t default_max_inflight(int32_t num_models) const override { return 2 * num_models; }

 private:
  aotrun_pkg_get_last_error_fn get_last_error_;
  Stream stream_;
  HostContext ctx_;
  aotrun_pkg_host host_{};
};

}  // namespace

std::unique_ptr<RunnerDevice> make_runner_device(const DevicePackage& pkg, int) {
  return std::make_unique<CpuRunnerDevice>(pkg);
}

}  // namespace aotrun::cpu
