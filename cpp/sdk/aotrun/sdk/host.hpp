// Typed wrapper over the host services table (aotrun_pkg_host).
//
// Each method calls one host function. Methods that can fail throw Error with
// the host's status unchanged (so 900 from an event query under capture comes
// out of the package as 900). launch() takes any callable: the callable is
// moved into a heap context that the host owns until it calls destroy; the
// work runs later (worker stream), inline (inline stream), or on every replay
// of a captured graph, so it must capture values (pointers, sizes), never
// references to the caller's stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <aotrun/package_abi.h>

#include "aotrun/sdk/error.hpp"

namespace aotrun {
namespace sdk {

namespace detail {

template <class F>
struct LaunchBox {
  F fn;
};

// Runs on whatever thread the host executes the stream on.
template <class F>
int32_t launch_trampoline(void* ctx) noexcept {
  auto* box = static_cast<LaunchBox<F>*>(ctx);
  return guarded("launched work", [box]() -> int32_t {
    if constexpr (std::is_void_v<decltype(box->fn())>) {
      box->fn();
      return AOTRUN_PKG_OK;
    } else {
      const int32_t status = static_cast<int32_t>(box->fn());
      if (status != AOTRUN_PKG_OK && last_error()[0] == '\0') {
        set_last_error("launched work failed with status %d (%s)", static_cast<int>(status), status_name(status));
      }
      return status;
    }
  });
}

template <class F>
void launch_destroy(void* ctx) noexcept {
  delete static_cast<LaunchBox<F>*>(ctx);
}

}  // namespace detail

class Host {
 public:
  Host() { std::memset(&table_, 0, sizeof(table_)); }

  // Copies the table (min of both sizes, as package_abi.h prescribes).
  // Throws INVALID_ARGUMENT if it is NULL or smaller than ABI 1.0's table.
  explicit Host(const aotrun_pkg_host* host) : Host() {
    if (host == nullptr) fail_invalid("host services table is NULL");
    if (host->struct_size < AOTRUN_PKG_HOST_STRUCT_SIZE_1_0) {
      fail_invalid("host services table struct_size " + std::to_string(host->struct_size) +
                   " is smaller than ABI 1.0's " + std::to_string(AOTRUN_PKG_HOST_STRUCT_SIZE_1_0));
    }
    std::memcpy(&table_, host, host->struct_size < sizeof(table_) ? host->struct_size : sizeof(table_));
    const bool complete = table_.log_enabled && table_.log && table_.alloc && table_.free && table_.launch &&
                          table_.event_create && table_.event_destroy && table_.event_record && table_.event_query &&
                          table_.event_synchronize && table_.stream_synchronize && table_.stream_is_capturing;
    if (!complete) fail_invalid("host services table has NULL function pointers");
    valid_ = true;
  }

  bool valid() const { return valid_; }
  const aotrun_pkg_host& raw() const { return table_; }

  // Logging. Cheap when disabled: make_message only runs if the level is on.
  bool log_enabled(int32_t level) const noexcept { return valid_ && table_.log_enabled(table_.host_ctx, level) != 0; }
  void log(int32_t level, const char* message) const noexcept {
    if (log_enabled(level)) table_.log(table_.host_ctx, level, message);
  }
  template <class MakeMessage>
  void log_lazy(int32_t level, MakeMessage&& make_message) const noexcept {
    if (!log_enabled(level)) return;
    try {
      const std::string m = make_message();
      table_.log(table_.host_ctx, level, m.c_str());
    } catch (...) {
      // Logging never turns into a failure of the operation it describes.
    }
  }

  void* alloc(size_t bytes, aotrun_pkg_stream stream) const {
    void* p = nullptr;
    check(table_.alloc(table_.host_ctx, bytes, stream, &p), "alloc");
    if (p == nullptr && bytes != 0) fail(AOTRUN_PKG_ERR_OUT_OF_MEMORY, "host alloc returned NULL");
    return p;
  }
  void free(void* p, aotrun_pkg_stream stream) const { check(table_.free(table_.host_ctx, p, stream), "free"); }
  // Raw status, for destructors that must not throw.
  int32_t free_nothrow(void* p, aotrun_pkg_stream stream) const noexcept {
    return table_.free(table_.host_ctx, p, stream);
  }

  template <class F>
  void launch(aotrun_pkg_stream stream, F&& fn) const {
    using Fn = std::decay_t<F>;
    auto* box = new detail::LaunchBox<Fn>{std::forward<F>(fn)};
    // From here the host owns the box whatever launch returns: it calls
    // destroy exactly once (package_abi.h, aotrun_pkg_ctx_destroy_fn).
    const int32_t status =
        table_.launch(table_.host_ctx, stream, &detail::launch_trampoline<Fn>, box, &detail::launch_destroy<Fn>);
    check(status, "launch");
  }

  aotrun_pkg_event event_create() const {
    aotrun_pkg_event e = nullptr;
    check(table_.event_create(table_.host_ctx, &e), "event_create");
    return e;
  }
  int32_t event_destroy(aotrun_pkg_event e) const noexcept { return table_.event_destroy(table_.host_ctx, e); }
  void event_record(aotrun_pkg_event e, aotrun_pkg_stream stream) const {
    check(table_.event_record(table_.host_ctx, e, stream), "event_record");
  }
  // Raw status: AOTRUN_PKG_OK, AOTRUN_PKG_NOT_READY or a failure.
  int32_t event_query(aotrun_pkg_event e) const noexcept { return table_.event_query(table_.host_ctx, e); }
  int32_t event_synchronize(aotrun_pkg_event e) const noexcept { return table_.event_synchronize(table_.host_ctx, e); }
  void stream_synchronize(aotrun_pkg_stream stream) const {
    check(table_.stream_synchronize(table_.host_ctx, stream), "stream_synchronize");
  }
  bool stream_is_capturing(aotrun_pkg_stream stream) const {
    int32_t out = 0;
    check(table_.stream_is_capturing(table_.host_ctx, stream, &out), "stream_is_capturing");
    return out != 0;
  }

  // Throws Error(status) unless status is OK; the host's status is kept.
  static void check(int32_t status, const char* what) {
    if (status != AOTRUN_PKG_OK) {
      fail(status, std::string("host ") + what + " failed with status " + std::to_string(status) + " (" +
                       status_name(status) + ")");
    }
  }

 private:
  aotrun_pkg_host table_;
  bool valid_ = false;
};

}  // namespace sdk
}  // namespace aotrun
