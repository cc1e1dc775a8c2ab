// Runner::run_alloc: a run whose outputs aotrun allocates on the runner's
// device and hands over as DLManagedTensors (the memory comes from the
// RunnerDevice; the C layer only passes them on). Outputs are sized before
// the run from the package's output shapes, or, for a package whose output
// sizes depend on the values of the inputs, by the package while it runs.
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "runner/runner.hpp"
#include "runner/constants/constant_slots.hpp"
#include "runner/container/container.hpp"
#include "runner/container/validate.hpp"
#include "base/error.hpp"

namespace aotrun {
namespace {

// A DLManagedTensor that owns its shape and its data (host memory on the
// CPU, device memory on CUDA: released by the device's function, which
// needs no runner).
struct OwnedTensor {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  void (*release)(void*) = nullptr;
  ~OwnedTensor() {
    if (release != nullptr) release(managed.dl_tensor.data);
  }
  static void deleter(DLManagedTensor* m) { delete static_cast<OwnedTensor*>(m->manager_ctx); }
};

// Output `spec` of `shape` (spec's rank), allocated on `device`. Throws
// Error: PACKAGE for a shape that cannot be addressed, the device's error
// (OUT_OF_MEMORY) naming the output.
std::unique_ptr<OwnedTensor> allocate(const Package& pkg, const TensorSpec& spec, const int64_t* shape,
                                      RunnerDevice& device, DLDevice dl_device) {
  auto t = std::make_unique<OwnedTensor>();
  t->shape.assign(shape, shape + spec.shape.size());
  DLTensor& out = t->managed.dl_tensor;
  out.device = dl_device;
  out.ndim = static_cast<int>(t->shape.size());
  out.dtype = spec.dtype;
  out.shape = t->shape.data();
  uint64_t bytes = 0;
  if (!checked_bytes(out, &bytes)) {
    fail(Code::Package, "package '" + pkg.name() + "' reported output shape " + shape_string(out.shape, out.ndim) +
                            " for '" + spec.name + "', too large to address");
  }
  try {
    const RunnerDevice::OutputMemory m = device.allocate_output(static_cast<size_t>(bytes));
    out.data = m.data;
    t->release = m.release;
  } catch (const Error& e) {
    fail(e.code(), "run_alloc: output '" + spec.name + "' of package '" + pkg.name() + "' (" + std::to_string(bytes) +
                       " bytes): " + e.what());
  }
  t->managed.manager_ctx = t.get();
  t->managed.deleter = &OwnedTensor::deleter;
  return t;
}

std::vector<DLManagedTensor*> hand_over(std::vector<std::unique_ptr<OwnedTensor>>& owned) {
  std::vector<DLManagedTensor*> handed(owned.size());
  for (size_t i = 0; i < owned.size(); ++i) handed[i] = &owned[i].release()->managed;
  return handed;
}

// The outputs of a run that sizes them while it runs: each allocated as
// above once the package knows its shape, which is checked against the
// output's spec first (a package contradicting its own declaration is
// blamed, as for output_shapes). Called on the thread running the model;
// the first failure is kept whole, so the run reports it as it was.
class SizedOutputs final : public OutputSink {
 public:
  SizedOutputs(const Package& pkg, RunnerDevice& device, DLDevice dl_device)
      : pkg_(pkg), device_(device), dl_device_(dl_device), owned_(pkg.outputs().size()) {}

  int32_t allocate(size_t index, const int64_t* shape, int32_t ndim, DLTensor* out,
                   std::string* why) noexcept override {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      const auto& specs = pkg_.outputs();
      if (index >= specs.size() || owned_[index] != nullptr) {
        fail(Code::Internal,
             "package '" + pkg_.name() + "' asked for output " + std::to_string(index) + " twice or out of range");
      }
      const TensorSpec& spec = specs[index];
      const int nd = static_cast<int>(spec.shape.size());
      bool fits = ndim == nd;
      for (int k = 0; fits && k < nd; ++k) fits = shape[k] >= 0 && (spec.shape[k] < 0 || shape[k] == spec.shape[k]);
      if (!fits) {
        fail(Code::Package, "package '" + pkg_.name() + "' sized output '" + spec.name + "' as " +
                                shape_string(shape, ndim) + ", which contradicts its declared shape " +
                                shape_string(spec.shape.data(), nd) + " (-1 = any)");
      }
      owned_[index] = aotrun::allocate(pkg_, spec, shape, device_, dl_device_);
      *out = owned_[index]->managed.dl_tensor;
      return AOTRUN_PKG_OK;
    } catch (const Error& e) {
      return keep(e.code(), e.what(), why);
    } catch (const std::bad_alloc&) {
      return keep(Code::OutOfMemory, "run_alloc: out of memory", why);
    } catch (...) {
      return keep(Code::Internal, "run_alloc: unexpected exception", why);
    }
  }

  // The failure a run reported because of this sink, rethrown as it was.
  void rethrow_own_failure() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_ != Code::Ok) fail(failed_, message_);
  }
  std::vector<std::unique_ptr<OwnedTensor>>& owned() { return owned_; }

 private:
  int32_t keep(Code code, const char* message, std::string* why) noexcept {
    try {
      if (failed_ == Code::Ok) {
        failed_ = code;
        message_ = message;
      }
      *why = message;
    } catch (...) {
    }
    return code == Code::OutOfMemory ? AOTRUN_PKG_ERR_OUT_OF_MEMORY : AOTRUN_PKG_ERR_RUNTIME;
  }

  const Package& pkg_;
  RunnerDevice& device_;
  DLDevice dl_device_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<OwnedTensor>> owned_;
  Code failed_ = Code::Ok;
  std::string message_;
};

}  // namespace

std::vector<DLManagedTensor*> Runner::run_alloc(const DLTensor* inputs, size_t num_inputs) {
  // Inputs are checked in full before any output is allocated: a NULL-data
  // input of a huge shape must be an argument error, not an allocation.
  validate_run_inputs(inputs, num_inputs);
  if (pkg_->code().sizes_outputs_during_run()) return run_alloc_sized_by_run(inputs, num_inputs);
  std::vector<int64_t> shapes(out_dims_);
  output_shapes(inputs, num_inputs, shapes.data(), shapes.size());
  std::vector<std::unique_ptr<OwnedTensor>> owned;
  std::vector<DLTensor> views;
  const int64_t* d = shapes.data();
  for (const auto& spec : pkg_->outputs()) {
    owned.push_back(allocate(*pkg_, spec, d, *runner_device_, device_));
    d += spec.shape.size();
    views.push_back(owned.back()->managed.dl_tensor);
  }
  run(inputs, num_inputs, views.data(), views.size());
  return hand_over(owned);
}

std::vector<DLManagedTensor*> Runner::run_alloc_sized_by_run(const DLTensor* inputs, size_t num_inputs) {
  // No output shapes before the run (the model reads them from the inputs'
  // values), so no shape cache and no graph: every mode runs the model
  // eagerly, serial modes under their lock, on the runner's own stream.
  SizedOutputs sink(*pkg_, *runner_device_, device_);
  try {
    const bool serial = effective_ != RunMode::Threaded;
    std::unique_lock<std::mutex> lock(serial_, std::defer_lock);
    if (serial) lock.lock();  // before the lease, as dispatch() takes them
    ConstantSlots::Lease lease(*slots_);
    try {
      lease.set().container->call_sizing_outputs(serial, inputs, num_inputs, &sink);
    } catch (const Error&) {
      sink.rethrow_own_failure();
      throw;
    }
    for (const auto& t : sink.owned()) {
      if (t == nullptr) fail(Code::Internal, "package '" + pkg_->name() + "' ran without writing every output");
    }
    count_run();  // under the serial lock in serial modes, as dispatch() counts
  } catch (...) {
    RunnerCounters::add(counters_.failures);
    throw;
  }
  return hand_over(sink.owned());
}

}  // namespace aotrun
