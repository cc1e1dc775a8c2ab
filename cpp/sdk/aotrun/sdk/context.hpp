// What a model instance sees: InstanceContext at construction, RunContext on
// every forward.
#pragma once

#include <cstddef>
#include <cstdint>

#include <aotrun/package_abi.h>

#include "aotrun/sdk/constants.hpp"
#include "aotrun/sdk/error.hpp"
#include "aotrun/sdk/host.hpp"

namespace aotrun {
namespace sdk {

// Valid during the model's constructor. The constants it refers to stay valid
// for the container's lifetime, so a model may keep pointers into them.
class InstanceContext {
 public:
  InstanceContext(const Constants& constants, DLDevice device, const Host& host, int32_t index, int32_t num_models,
                  const char* package_dir, void* shared = nullptr)
      : constants_(constants),
        device_(device),
        host_(host),
        index_(index),
        num_models_(num_models),
        package_dir_(package_dir),
        shared_(shared) {}

  const Constants& constants() const { return constants_; }
  DLDevice device() const { return device_; }
  const Host& host() const { return host_; }
  int32_t index() const { return index_; }                  // 0 .. num_models-1
  int32_t num_models() const { return num_models_; }        // instances in this container
  const char* package_dir() const { return package_dir_; }  // NULL for a bare .so

  // The container-wide Model::Shared object (see model_traits.hpp). It lives
  // as long as the container; instances may keep a reference.
  template <class T>
  T& shared() const {
    if (shared_ == nullptr) fail(AOTRUN_PKG_ERR_INTERNAL, "model declares no Shared type");
    return *static_cast<T*>(shared_);
  }

 private:
  const Constants& constants_;
  DLDevice device_;
  const Host& host_;
  int32_t index_;
  int32_t num_models_;
  const char* package_dir_;
  void* shared_;
};

// Scratch memory for one forward, from the host's stream-ordered allocator.
// Allocated at enqueue time; its free is enqueued on the same stream when the
// Scratch goes out of scope, i.e. after the work launched before it. A captured
// graph then records alloc, compute and free together, instead of keeping raw
// pointers into a buffer that a later run could reallocate.
class Scratch {
 public:
  Scratch(const Host& host, aotrun_pkg_stream stream, size_t bytes)
      : host_(&host), stream_(stream), ptr_(host.alloc(bytes, stream)) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch(Scratch&& o) noexcept : host_(o.host_), stream_(o.stream_), ptr_(o.ptr_) { o.ptr_ = nullptr; }
  ~Scratch() {
    if (ptr_ == nullptr) return;
    const int32_t status = host_->free_nothrow(ptr_, stream_);
    if (status != AOTRUN_PKG_OK) {
      host_->log_lazy(AOTRUN_PKG_LOG_ERROR,
                      [&] { return "scratch free failed with status " + std::to_string(status); });
    }
  }

  // Enqueues the free now and reports its failure (the destructor can only log).
  void release() {
    void* p = ptr_;
    ptr_ = nullptr;
    if (p != nullptr) host_->free(p, stream_);
  }

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  const Host* host_;
  aotrun_pkg_stream stream_;
  void* ptr_;
};

// Valid during one forward call.
class RunContext {
 public:
  RunContext(const Host& host, aotrun_pkg_stream stream, int32_t instance)
      : host_(host), stream_(stream), instance_(instance) {}

  const Host& host() const { return host_; }
  aotrun_pkg_stream stream() const { return stream_; }
  int32_t instance() const { return instance_; }

  // Enqueue fn() on the run's stream. See Host::launch for what fn may capture.
  template <class F>
  void launch(F&& fn) const {
    host_.launch(stream_, std::forward<F>(fn));
  }

  Scratch scratch(size_t bytes) const { return Scratch(host_, stream_, bytes); }

  bool is_capturing() const { return host_.stream_is_capturing(stream_); }

 private:
  const Host& host_;
  aotrun_pkg_stream stream_;
  int32_t instance_;
};

}  // namespace sdk
}  // namespace aotrun
