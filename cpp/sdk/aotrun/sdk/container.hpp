// The model container behind every exported entry point: N instances of the
// author's Model class, spec reporting, output shapes, and both run functions.
//
// Threaded run (aotrun_pkg_container_run) follows AOTInductor's container:
//   1. lock; if no instance is available, reclaim pending instances whose
//      completion event has fired (event_query, oldest first);
//   2. if still none: wait (condition variable) until some instance is pending,
//      take the oldest, unlock, event_synchronize it, lock again;
//   3. unlock; forward() enqueues the model's work on args->stream;
//   4. event_record the instance's event on args->stream; lock; append the
//      instance to the pending list; unlock; notify one waiter.
// Step 1 queries events, which is illegal while a stream is being captured:
// with num_models = 1 the second threaded run finds the instance pending and
// its event_query fails with AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED (900), which
// this function returns unchanged. That is the behaviour the runner's
// run_single_threaded path exists to avoid, kept here on purpose.
//
// Event statuses during reclaim:
//   OK                         the instance is free
//   NOT_READY (query only)     still pending
//   900, 901, INVALID_ARGUMENT the host refused the operation: returned
//                              unchanged, the instance stays pending
//   any other failure          the instance's previous work failed; that run's
//                              waiter got the failure, so the instance is
//                              reclaimed (logged at debug level) instead of
//                              failing every later run.
// A failure in forward() or event_record returns the instance to the
// available list and the status to the caller.
//
// Single-threaded run uses instance 0 with no lock and no event: legal under
// capture. The caller serialises those calls and does not mix them with
// concurrent threaded runs on the same container.
//
// destroy does not wait for work: the host finishes (or discards) everything
// enqueued through the container, including captured graphs, first.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "aotrun/sdk/args.hpp"
#include "aotrun/sdk/config.hpp"
#include "aotrun/sdk/constants.hpp"
#include "aotrun/sdk/context.hpp"
#include "aotrun/sdk/error.hpp"
#include "aotrun/sdk/host.hpp"
#include "aotrun/sdk/instance_pool.hpp"
#include "aotrun/sdk/model_traits.hpp"
#include "aotrun/sdk/shape.hpp"
#include "aotrun/sdk/signature.hpp"
#include "aotrun/sdk/tensor.hpp"

namespace aotrun {
namespace sdk {

template <class Model>
class Container {
 public:
  static constexpr uint64_t kMagic = 0x61'6f'74'72'75'6e'43'31ULL;  // "aotrunC1"

  explicit Container(const aotrun_pkg_create_args& args)
      : signature_(Model::signature()),
        device_(args.device),
        num_models_(args.num_models),
        pool_(static_cast<size_t>(args.num_models > 0 ? args.num_models : 0)) {
    traits::check_model<Model>();
    if (args.num_models < 0) {
      fail_invalid("num_models is " + std::to_string(args.num_models) +
                   "; use 0 for a metadata-only container or >= 1 to run");
    }
    if (args.num_constants != 0 && args.constants == nullptr) {
      fail_invalid("constants is NULL but num_constants is " + std::to_string(args.num_constants));
    }
    check_signature(signature_);
    prepare_specs();
    if (!supports(device_)) {
      fail(AOTRUN_PKG_ERR_UNSUPPORTED, "this package does not run on device " + device_str(device_));
    }
    constants_ = Constants(args.constants, args.num_constants);
    // Metadata-only containers may come without constants; whenever constants
    // are given, or instances will use them, they are validated now.
    if constexpr (traits::has_validate_constants<Model>::value) {
      if (num_models_ > 0 || args.num_constants > 0) Model::validate_constants(constants_);
    }
    if (num_models_ == 0) {
      if (args.host != nullptr) {
        try {
          host_ = Host(args.host);  // only for logging; a metadata container needs no host
        } catch (const Error&) {
        }
      }
      magic_ = kMagic;
      return;
    }
    host_ = Host(args.host);
    if constexpr (traits::has_shared<Model>::value) {
      shared_ = std::shared_ptr<void>(new typename Model::Shared(),
                                      [](void* p) { delete static_cast<typename Model::Shared*>(p); });
    }
    instances_.reserve(static_cast<size_t>(num_models_));
    try {
      for (int32_t i = 0; i < num_models_; ++i) {
        const InstanceContext ctx(constants_, device_, host_, i, num_models_, args.package_dir, shared_.get());
        Instance inst;
        inst.index = i;
        inst.model = std::make_unique<Model>(ctx);
        instances_.push_back(std::move(inst));
        instances_.back().event = host_.event_create();
      }
    } catch (...) {
      destroy_instances();  // the destructor does not run for a failed constructor
      throw;
    }
    for (Instance& inst : instances_) pool_.make_available(&inst);
    magic_ = kMagic;
    host_.log_lazy(AOTRUN_PKG_LOG_DEBUG, [&] {
      return "package container created: " + std::to_string(num_models_) + " model instance(s) on " +
             device_str(device_);
    });
  }

  ~Container() {
    magic_ = 0;
    destroy_instances();
  }

  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;

  aotrun_pkg_container* handle() { return reinterpret_cast<aotrun_pkg_container*>(this); }

  static Container* from_handle(aotrun_pkg_container* c) {
    if (c == nullptr) fail_invalid("container is NULL");
    auto* self = reinterpret_cast<Container*>(c);
    if (self->magic_ != kMagic) {
      fail_invalid("container handle is not a live container of this package");
    }
    return self;
  }

  size_t num_inputs() const { return signature_.inputs.size(); }
  size_t num_outputs() const { return signature_.outputs.size(); }

  void input_spec(size_t index, aotrun_pkg_tensor_spec* out) const {
    if (index >= input_specs_.size()) {
      fail_invalid("input index " + std::to_string(index) + " is out of range (the model has " +
                   std::to_string(input_specs_.size()) + " inputs)");
    }
    write_tensor_spec(input_specs_[index], out);
  }

  void output_spec(size_t index, aotrun_pkg_tensor_spec* out) const {
    if (index >= output_specs_.size()) {
      fail_invalid("output index " + std::to_string(index) + " is out of range (the model has " +
                   std::to_string(output_specs_.size()) + " outputs)");
    }
    write_tensor_spec(output_specs_[index], out);
  }

  void get_output_shapes(const aotrun_pkg_shape_args& args) const {
    check_count("input", args.num_inputs, num_inputs(), args.inputs != nullptr);
    for (size_t i = 0; i < args.num_inputs; ++i) {
      check_tensor_shape("input", i, signature_.inputs[i], args.inputs[i]);
    }
    if (args.output_shapes == nullptr || args.output_shapes_capacity < output_dims_total_) {
      fail_invalid("output_shapes needs room for " + std::to_string(output_dims_total_) + " elements, capacity is " +
                   std::to_string(args.output_shapes == nullptr ? 0 : args.output_shapes_capacity));
    }
    compute_output_shapes(args.inputs, args.output_shapes);
  }

  void run(const aotrun_pkg_run_args& args) {
    require_instances();
    ShapeBuffer shapes(output_dims_total_);
    check_run_args(args, shapes.data());
    Instance* inst = acquire();
    try {
      RunContext rc(host_, args.stream, inst->index);
      inst->model->forward(rc, args.inputs, args.outputs);
      host_.event_record(inst->event, args.stream);
    } catch (...) {
      release(inst, /*pending=*/false);
      throw;
    }
    release(inst, /*pending=*/true);
  }

  void run_single_threaded(const aotrun_pkg_run_args& args) {
    require_instances();
    ShapeBuffer shapes(output_dims_total_);
    check_run_args(args, shapes.data());
    Instance& inst = instances_[0];
    RunContext rc(host_, args.stream, inst.index);
    inst.model->forward(rc, args.inputs, args.outputs);
  }

 private:
  struct Instance {
    std::unique_ptr<Model> model;
    aotrun_pkg_event event = nullptr;
    int32_t index = 0;
  };

  // Expected output shapes during a run: on the stack for ordinary models.
  class ShapeBuffer {
   public:
    explicit ShapeBuffer(size_t n) {
      if (n > inline_.size()) heap_.resize(n);
    }
    int64_t* data() { return heap_.empty() ? inline_.data() : heap_.data(); }

   private:
    std::array<int64_t, 32> inline_;
    std::vector<int64_t> heap_;
  };

  void destroy_instances() noexcept {
    for (Instance& inst : instances_) {
      if (inst.event != nullptr) host_.event_destroy(inst.event);
      inst.event = nullptr;
      inst.model.reset();
    }
  }

  static bool supports(DLDevice device) {
    if constexpr (traits::has_supports_device<Model>::value) {
      return Model::supports_device(device);
    } else {
      return device.device_type == kDLCPU;
    }
  }

  void prepare_specs() {
    auto to_abi = [](const TensorSpec& s) {
      aotrun_pkg_tensor_spec t;
      t.struct_size = sizeof(t);
      t.name = s.name.c_str();
      t.dtype = s.dtype;
      t.ndim = s.ndim();
      t.shape = s.shape.data();
      return t;
    };
    for (const TensorSpec& s : signature_.inputs) input_specs_.push_back(to_abi(s));
    for (const TensorSpec& s : signature_.outputs) {
      output_specs_.push_back(to_abi(s));
      output_offsets_.push_back(output_dims_total_);
      output_ndims_.push_back(s.ndim());
      output_dims_total_ += s.shape.size();
      if constexpr (!traits::has_output_shapes<Model>::value) {
        for (int64_t d : s.shape) {
          if (d == kDynamic) {
            fail(AOTRUN_PKG_ERR_INTERNAL, "output '" + s.name +
                                              "' has a dynamic dimension but the model defines "
                                              "no static output_shapes()");
          }
        }
      }
    }
  }

  // Fills `flat` (output_dims_total_ elements) with the output shapes for
  // already validated inputs, and checks what the model produced.
  void compute_output_shapes(const DLTensor* inputs, int64_t* flat) const {
    for (size_t j = 0; j < signature_.outputs.size(); ++j) {
      const std::vector<int64_t>& spec = signature_.outputs[j].shape;
      for (size_t d = 0; d < spec.size(); ++d) flat[output_offsets_[j] + d] = spec[d];
    }
    if constexpr (traits::has_output_shapes<Model>::value) {
      Model::output_shapes(InputShapes(inputs, signature_.inputs.size()),
                           OutputShapes(flat, output_offsets_.data(), output_ndims_.data(), output_offsets_.size()));
    }
    for (size_t j = 0; j < signature_.outputs.size(); ++j) {
      const TensorSpec& spec = signature_.outputs[j];
      const int64_t* got = flat + output_offsets_[j];
      for (size_t d = 0; d < spec.shape.size(); ++d) {
        if (got[d] < 0 || (spec.shape[d] != kDynamic && got[d] != spec.shape[d])) {
          fail(AOTRUN_PKG_ERR_INTERNAL, "model output_shapes() produced " + format_shape(got, spec.ndim()) +
                                            " for output '" + spec.name + "', whose spec is " + spec.shape_str());
        }
      }
    }
  }

  static void check_count(const char* role, size_t got, size_t expected, bool pointer_set) {
    if (got != expected) {
      fail_invalid(std::string("expected ") + std::to_string(expected) + " " + role + "s, got " + std::to_string(got));
    }
    if (got != 0 && !pointer_set) fail_invalid(std::string(role) + "s pointer is NULL");
  }

  void check_run_args(const aotrun_pkg_run_args& args, int64_t* shapes) const {
    check_count("input", args.num_inputs, num_inputs(), args.inputs != nullptr);
    check_count("output", args.num_outputs, num_outputs(), args.outputs != nullptr);
    for (size_t i = 0; i < args.num_inputs; ++i) {
      check_run_tensor("input", i, signature_.inputs[i], args.inputs[i], device_);
    }
    compute_output_shapes(args.inputs, shapes);
    for (size_t j = 0; j < args.num_outputs; ++j) {
      const TensorSpec& spec = signature_.outputs[j];
      const DLTensor& t = args.outputs[j];
      check_run_tensor("output", j, spec, t, device_);
      const int64_t* want = shapes + output_offsets_[j];
      for (int32_t d = 0; d < t.ndim; ++d) {
        if (t.shape[d] != want[d]) {
          fail_invalid("output " + std::to_string(j) + " ('" + spec.name + "'): shape " +
                       format_shape(t.shape, t.ndim) + " differs from " + format_shape(want, t.ndim) +
                       " computed for these inputs");
        }
      }
    }
  }

  void require_instances() const {
    if (num_models_ == 0) {
      fail_invalid(
          "container was created with num_models = 0 (metadata only); create one with "
          "num_models >= 1 to run");
    }
  }

  // Refusals fail this call and keep the instance pending. Anything else
  // reclaims it: INVALID_ARGUMENT in particular is what CUDA (and the CPU
  // host) answer for an event last recorded in a capture that has ended —
  // refusing it would leave the instance pending for ever.
  static bool host_refused(int32_t status) {
    return status == AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED || status == AOTRUN_PKG_ERR_CAPTURE_INVALIDATED;
  }

  [[noreturn]] void fail_event(const char* op, const Instance& inst, int32_t status) const {
    std::string msg = std::string("threaded run: host ") + op + " on the completion event of model instance " +
                      std::to_string(inst.index) + " failed with status " + std::to_string(status) + " (" +
                      status_name(status) + ")";
    if (status == AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED || status == AOTRUN_PKG_ERR_CAPTURE_INVALIDATED) {
      msg +=
          ": the threaded run tracks instances with events, which is not permitted while a "
          "stream is capturing; capture aotrun_pkg_container_run_single_threaded instead";
    }
    fail(status, msg);
  }

  void log_previous_failure(const char* op, const Instance& inst, int32_t status) const {
    if (status == AOTRUN_PKG_ERR_INVALID_ARGUMENT) {
      host_.log_lazy(AOTRUN_PKG_LOG_WARN, [&] {
        return std::string("threaded run: the completion event of model instance ") + std::to_string(inst.index) +
               " is invalid (" + op +
               "), as after the threaded run was captured into a graph; reclaiming "
               "the instance. Capture run_single_threaded instead: a replay of that graph would share it";
      });
      return;
    }
    host_.log_lazy(AOTRUN_PKG_LOG_DEBUG, [&] {
      return std::string("threaded run: ") + op + " of model instance " + std::to_string(inst.index) +
             " reported status " + std::to_string(status) + " from its previous run; reclaiming the instance";
    });
  }

  Instance* acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (pool_.has_available()) return pool_.take_available();

      // Reclaim finished instances (event_query: illegal under capture).
      const Instance* refused = nullptr;
      int32_t refused_status = AOTRUN_PKG_OK;
      pool_.reclaim(
          [&](Instance* inst) {
            const int32_t st = host_.event_query(inst->event);
            if (st == AOTRUN_PKG_OK) return true;
            if (st == AOTRUN_PKG_NOT_READY) return false;
            if (host_refused(st)) {
              refused = inst;
              refused_status = st;
              return false;
            }
            log_previous_failure("event_query", *inst, st);
            return true;
          },
          [&] { return refused != nullptr; });
      if (refused != nullptr) fail_event("event_query", *refused, refused_status);
      if (pool_.has_available()) continue;

      if (pool_.num_pending() == 0) {
        // Every instance is inside forward() on another thread.
        cv_.wait(lock, [&] { return pool_.num_pending() != 0 || pool_.has_available(); });
        continue;
      }

      // Wait for the oldest pending instance without holding the lock.
      Instance* oldest = pool_.pop_pending_front();
      lock.unlock();
      const int32_t st = host_.event_synchronize(oldest->event);
      lock.lock();
      if (st == AOTRUN_PKG_OK) return oldest;
      if (host_refused(st)) {
        pool_.push_pending_front(oldest);
        fail_event("event_synchronize", *oldest, st);
      }
      log_previous_failure("event_synchronize", *oldest, st);
      return oldest;
    }
  }

  void release(Instance* inst, bool pending) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pending) {
        pool_.push_pending(inst);
      } else {
        pool_.make_available(inst);
      }
    }
    cv_.notify_one();
  }

  uint64_t magic_ = 0;
  Signature signature_;
  std::vector<aotrun_pkg_tensor_spec> input_specs_;
  std::vector<aotrun_pkg_tensor_spec> output_specs_;
  std::vector<size_t> output_offsets_;
  std::vector<int32_t> output_ndims_;
  size_t output_dims_total_ = 0;
  DLDevice device_;
  int32_t num_models_;
  Host host_;
  Constants constants_;
  std::shared_ptr<void> shared_;
  std::vector<Instance> instances_;  // never resized after creation
  InstancePool<Instance> pool_;
  std::mutex mutex_;
  std::condition_variable cv_;
};

}  // namespace sdk
}  // namespace aotrun
