// The seam between a runner and the device it runs on. A runner asks its
// RunnerDevice for the host services table its container is created with,
// the stream its synchronous runs go on, how to wait for that stream, what a
// failed package call left behind, and the GraphDevice of graph mode. Each
// device is one folder (device/cpu, device/cuda) implementing this; adding a
// device means a new folder and one row in device_table.cpp.
//
// Threads: one RunnerDevice per runner; begin_call/explain_failed_call are
// called on the thread making the package call (their records are
// thread-local), everything else from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <aotrun/package_abi.h>
#include <dlpack/dlpack.h>

#include "base/error.hpp"
#include "device/graph_device.hpp"

namespace aotrun {

// What a device needs of the package it runs, as plain data (the device
// layer sits below the package layer). The package outlives its runners'
// devices.
struct DevicePackage {
  std::string name;                                       // for messages
  DLDevice device{kDLCPU, 0};                             // what it was compiled for
  aotrun_pkg_get_last_error_fn get_last_error = nullptr;  // its message for a failure
};

class RunnerDevice {
 public:
  virtual ~RunnerDevice() = default;

  // The host services table passed to container_create; valid as long as
  // this object, which must outlive the container.
  virtual const aotrun_pkg_host* host() const = 0;
  // The stream synchronous runs go on (a package-ABI stream handle: a
  // cpu::Stream* or a cudaStream_t).
  virtual void* own_stream() const = 0;
  // Waits for the own stream; an error names what launched work failed.
  // CPU: work on the own stream runs inline, so always OK.
  virtual Status finish_own_stream() = 0;
  // Whether work on the own stream is done when the call that launched it
  // returns, so that finish_own_stream has nothing to wait for and is
  // always OK (CPU): runs skip it.
  virtual bool own_stream_synchronous() const { return false; }

  // Before a package call on this thread: forget what earlier calls left.
  virtual void begin_call() = 0;
  // After a package call on this thread returned `rc` != OK: what the device
  // recorded about it (a failed launch, a capture violation), as a status
  // whose message continues "package 'x': run " ("failed in launched work:
  // ..."); OK when it recorded nothing and the package's own error stands.
  virtual Status explain_failed_call(int32_t rc) = 0;

  // Graph mode's static buffers, capture and replay on this device.
  virtual std::unique_ptr<GraphDevice> make_graph_device() = 0;

  // Which caller streams carry this device's work: aotrun CPU streams
  // (aotrun_runner_run_on_stream) or the device's own kind
  // (aotrun_runner_run_on_device_stream).
  virtual bool takes_aotrun_streams() const = 0;
  // Memory for an output that run_alloc hands over: `bytes` on this device,
  // aligned for any element type. `release(data)` frees it from any thread,
  // also after the runner is gone (the caller's DLPack deleter calls it).
  // Throws Error: OutOfMemory, Device.
  struct OutputMemory {
    void* data = nullptr;
    void (*release)(void* data) = nullptr;
  };
  virtual OutputMemory allocate_output(size_t bytes) = 0;
  // The in-flight window when the caller sets none.
  virtual int32_t default_max_inflight(int32_t num_models) const = 0;
};

}  // namespace aotrun
