// One container of a package's model instances on a runner's device, and
// every call a runner makes into it: runs (threaded or single-threaded, on
// the device's own stream or a caller's), the output-shape function, and
// destruction. The runner's modes and the graph executor reach the package
// only through here, each call behind the exception barrier of
// base/guard.hpp. Owned by its Runner; created and destroyed with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <aotrun/package_abi.h>
#include <dlpack/dlpack.h>

#include "device/runner_device.hpp"
#include "package/package.hpp"
#include "base/error.hpp"

namespace aotrun {

class Container {
 public:
  // container_create with `num_models` instances on `device` (whose host
  // table the package gets) and `constants` (the package's table, or a
  // constant set's entries; they outlive the container). `pkg` and `device`
  // outlive the container. Throws OUT_OF_MEMORY, or PACKAGE with the
  // package's message (`unsupported` instead when the package answers
  // AOTRUN_PKG_ERR_UNSUPPORTED).
  Container(const Package& pkg, RunnerDevice& device, DLDevice dl_device, int32_t num_models,
            const std::vector<aotrun_pkg_constant>& constants, Code unsupported = Code::Package);
  // Waits for the device's own stream (nothing of the container may still
  // run), then destroys the container; a failure there is logged.
  ~Container();
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;

  const Package& package() const { return pkg_; }
  DLDevice dl_device() const { return dl_device_; }

  // Calls the package's run (or run_single_threaded) on the calling thread,
  // on `stream` (a caller's stream of this device; NULL = the device's own).
  // Work may still be pending on the stream when it returns (CUDA). Throws
  // Error with the package's message, or the device's account of it.
  void call(bool single_threaded, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
            void* stream);
  // A run whose outputs the package sizes while it runs
  // (PackageCode::run_sizing_outputs), each allocated by `sink`, on the
  // device's own stream; returns once the run is done and the outputs
  // written. Throws as call() does.
  void call_sizing_outputs(bool single_threaded, const DLTensor* inputs, size_t num_inputs, OutputSink* sink);
  // Waits for the device's own stream; throws what launched work failed with.
  // Nothing to wait for on a device whose own stream is synchronous (CPU).
  void finish_own_stream() {
    if (!own_stream_synchronous_) wait_own_stream();
  }
  // The package's checks of input values for a run that does not pass
  // through it (PackageCode::check_input_values), on the device's own
  // stream. Throws INVALID_ARGUMENT / PACKAGE naming the package.
  void check_input_values(const DLTensor* inputs, size_t num_inputs);
  // The package's output shapes for inputs already validated, checked
  // against its output specs (PACKAGE when they contradict them).
  void output_shapes(const DLTensor* inputs, size_t num_inputs, int64_t* shapes, size_t capacity);

 private:
  // call() on copies of the descriptors with byte_offset folded into data.
  void call_folding_offsets(bool single_threaded, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                            size_t num_outputs, void* stream);
  void wait_own_stream();

  const Package& pkg_;
  RunnerDevice& device_;
  DLDevice dl_device_;
  const bool own_stream_synchronous_;  // device_.own_stream_synchronous()
  aotrun_pkg_container* c_ = nullptr;
};

}  // namespace aotrun
