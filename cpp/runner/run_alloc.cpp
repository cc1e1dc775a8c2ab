// Runner::run_alloc: a run whose outputs aotrun allocates on the runner's
// device and hands over as DLManagedTensors (the memory comes from the
// RunnerDevice; the C layer only passes them on).
#include <memory>
#include <new>
#include <vector>

#include "runner/runner.hpp"
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

}  // namespace

std::vector<DLManagedTensor*> Runner::run_alloc(const DLTensor* inputs, size_t num_inputs) {
  // Inputs are checked in full before any output is allocated: a NULL-data
  // input of a huge shape must be an argument error, not an allocation.
  validate_run_inputs(inputs, num_inputs);
  std::vector<int64_t> shapes(out_dims_);
  output_shapes(inputs, num_inputs, shapes.data(), shapes.size());
  std::vector<std::unique_ptr<OwnedTensor>> owned;
  std::vector<DLTensor> views;
  const int64_t* d = shapes.data();
  for (const auto& spec : pkg_->outputs()) {
    auto t = std::make_unique<OwnedTensor>();
    t->shape.assign(d, d + spec.shape.size());
    d += spec.shape.size();
    DLTensor& out = t->managed.dl_tensor;
    out.device = device_;
    out.ndim = static_cast<int>(t->shape.size());
    out.dtype = spec.dtype;
    out.shape = t->shape.data();
    uint64_t bytes = 0;
    if (!checked_bytes(out, &bytes)) {
      fail(Code::Package, "package '" + pkg_->name() + "' reported output shape " + shape_string(out.shape, out.ndim) +
                              " for '" + spec.name + "', too large to address");
    }
    try {
      const RunnerDevice::OutputMemory m = runner_device_->allocate_output(static_cast<size_t>(bytes));
      out.data = m.data;
      t->release = m.release;
    } catch (const Error& e) {
      fail(e.code(), "run_alloc: output '" + spec.name + "' of package '" + pkg_->name() + "' (" +
                         std::to_string(bytes) + " bytes): " + e.what());
    }
    t->managed.manager_ctx = t.get();
    t->managed.deleter = &OwnedTensor::deleter;
    views.push_back(out);
    owned.push_back(std::move(t));
  }
  run(inputs, num_inputs, views.data(), views.size());
  std::vector<DLManagedTensor*> handed(owned.size());
  for (size_t i = 0; i < owned.size(); ++i) handed[i] = &owned[i].release()->managed;
  return handed;
}

}  // namespace aotrun
