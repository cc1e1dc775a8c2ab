#include "runner/async/async_event.hpp"

#include <chrono>

#include "device/cpu/stream.hpp"
#include "base/log.hpp"
#include "base/dltensor.hpp"

namespace aotrun {
namespace {

// The callback is the user's: a C++ exception thrown through the C function
// pointer must not unwind into aotrun's worker (std::terminate).
void call_user(EventCallback cb, void* user, const Status& st) noexcept {
  try {
    cb(user, static_cast<int32_t>(st.code), st.message.c_str());
  } catch (...) {
    try {
      log(LogLevel::Error, "an event callback threw an exception; aotrun ignored it (callbacks must not throw)");
    } catch (...) {
    }
  }
}

}  // namespace

bool AsyncEvent::wait_would_deadlock() const {
  return queue_ != nullptr && cpu::Stream::current_worker() == queue_ && !ready();
}

void AsyncEvent::complete(Status status) {
  EventCallback cb;
  void* user;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(status);
    done_ = true;
    cb = callback_;
    user = callback_user_;
    callback_ = nullptr;
  }
  cv_.notify_all();
  if (cb != nullptr) call_user(cb, user, status_);
}

bool AsyncEvent::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool AsyncEvent::wait(int64_t timeout_ns) const {
  std::unique_lock<std::mutex> lock(mu_);
  if (timeout_ns < 0) {
    cv_.wait(lock, [this] { return done_; });
    return true;
  }
  return cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns), [this] { return done_; });
}

Status AsyncEvent::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void AsyncEvent::set_callback(EventCallback fn, void* user) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) {
      callback_ = fn;
      callback_user_ = user;
      return;
    }
  }
  // status_ is immutable once done_.
  call_user(fn, user, status_);
}

void AsyncEvent::keep_descriptors(const DLTensor* in, size_t nin, const DLTensor* out, size_t nout) {
  size_t dims = 0;
  // An input may come in its spec's strides (validated); those are kept too.
  for (size_t i = 0; i < nin; ++i) dims += static_cast<size_t>(in[i].ndim) * (in[i].strides != nullptr ? 2 : 1);
  for (size_t i = 0; i < nout; ++i) dims += static_cast<size_t>(out[i].ndim);
  dims_.resize(dims);
  inputs_.assign(in, in + nin);
  outputs_.assign(out, out + nout);
  int64_t* d = dims_.data();
  auto fix = [&d](DLTensor& t) {
    for (int k = 0; k < t.ndim; ++k) d[k] = t.shape[k];
    t.shape = d;
    d += t.ndim;
    if (t.strides != nullptr && !is_compact(t)) {
      for (int k = 0; k < t.ndim; ++k) d[k] = t.strides[k];
      t.strides = d;
      d += t.ndim;
    } else {
      t.strides = nullptr;  // compact
    }
  };
  for (auto& t : inputs_) fix(t);
  for (auto& t : outputs_) fix(t);
}

}  // namespace aotrun
