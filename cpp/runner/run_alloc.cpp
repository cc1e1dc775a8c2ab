// Runner::run_alloc: a run whose outputs aotrun allocates and hands over as
// DLManagedTensors (the host memory policy lives here, not in the C layer).
#include <memory>
#include <new>
#include <vector>

#include "runner/runner.hpp"
#include "runner/container/validate.hpp"
#include "base/error.hpp"
#include "base/host_alloc.hpp"

namespace aotrun {
namespace {

constexpr size_t kOutputAlign = 256;

// A DLManagedTensor that owns its shape and its aligned data.
struct OwnedTensor {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  ~OwnedTensor() { aligned_free(managed.dl_tensor.data, kOutputAlign); }
  static void deleter(DLManagedTensor* m) { delete static_cast<OwnedTensor*>(m->manager_ctx); }
};

}  // namespace

std::vector<DLManagedTensor*> Runner::run_alloc(const DLTensor* inputs, size_t num_inputs) {
  if (!runner_device_->host_accessible()) {
    fail(Code::Unsupported,
         "run_alloc allocates host memory; runners on CUDA devices take caller-allocated "
         "outputs (aotrun_runner_run)");
  }
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
    out.data = aligned_alloc_bytes(static_cast<size_t>(bytes), kOutputAlign);
    if (out.data == nullptr) {
      fail(Code::OutOfMemory, "run_alloc: cannot allocate " + std::to_string(bytes) + " bytes for output '" +
                                  spec.name + "' of package '" + pkg_->name() + "'");
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
