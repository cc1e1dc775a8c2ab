// Asynchronous runs and their events.
#include <limits>

#include "handles.hpp"
#include "status.hpp"

using aotrun::Code;
using aotrun::fail;
using aotrun::capi::guarded;
using aotrun::capi::require;

namespace {

using Submit = aotrun::Runner::Submit;

aotrun_status* submit(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                      size_t num_outputs, Submit how, uint64_t timeout_ns, aotrun_event** event) {
  return guarded([&] {
    require(runner, "runner");
    require(event, "event");
    auto handle = std::make_unique<aotrun_event>();
    handle->ev = runner->runner->run_async(inputs, num_inputs, outputs, num_outputs, how, timeout_ns);
    *event = handle.release();
  });
}

aotrun_status* outcome(const aotrun::AsyncEvent& ev) {
  aotrun::Status s = ev.status();
  return s.ok() ? nullptr : aotrun::capi::make_status(s.code, s.message);
}

int64_t clamp_timeout(uint64_t ns) {
  return ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                         : static_cast<int64_t>(ns);
}

// The event's run is queued on the worker that runs this callback, behind
// it: waiting (even with a bound) cannot see it complete.
aotrun_status* self_wait(const aotrun_event*) {
  return aotrun::capi::make_status(Code::InvalidArgument,
                                   "event wait called from an event callback running on the worker that must run "
                                   "this event; it is queued behind the callback, so the wait could never end");
}

}  // namespace

extern "C" {

aotrun_status* aotrun_runner_run_async(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                       DLTensor* outputs, size_t num_outputs, aotrun_event** event) {
  return submit(runner, inputs, num_inputs, outputs, num_outputs, Submit::Block, 0, event);
}

aotrun_status* aotrun_runner_try_run_async(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                           DLTensor* outputs, size_t num_outputs, aotrun_event** event) {
  return submit(runner, inputs, num_inputs, outputs, num_outputs, Submit::Try, 0, event);
}

aotrun_status* aotrun_runner_run_async_timeout(aotrun_runner* runner, const DLTensor* inputs, size_t num_inputs,
                                               DLTensor* outputs, size_t num_outputs, uint64_t timeout_ns,
                                               aotrun_event** event) {
  // A zero bound is a bound (TIMEOUT, "within 0 ns"), not "try" (WOULD_BLOCK).
  return submit(runner, inputs, num_inputs, outputs, num_outputs, Submit::Timed, timeout_ns, event);
}

aotrun_status* aotrun_runner_wait_all(aotrun_runner* runner) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->wait_all();
  });
}

int aotrun_event_is_ready(const aotrun_event* event) { return event != nullptr && event->ev->ready() ? 1 : 0; }

aotrun_status* aotrun_event_wait(aotrun_event* event) {
  if (event == nullptr) return aotrun::capi::make_status(Code::InvalidArgument, "event is NULL");
  if (event->ev->wait_would_deadlock()) return self_wait(event);
  event->ev->wait(-1);
  return outcome(*event->ev);
}

aotrun_status* aotrun_event_wait_timeout(aotrun_event* event, uint64_t timeout_ns) {
  if (event == nullptr) return aotrun::capi::make_status(Code::InvalidArgument, "event is NULL");
  if (event->ev->wait_would_deadlock()) return self_wait(event);
  if (!event->ev->wait(clamp_timeout(timeout_ns))) {
    return aotrun::capi::make_status(Code::Timeout, "run still in flight after " + std::to_string(timeout_ns) + " ns");
  }
  return outcome(*event->ev);
}

aotrun_status* aotrun_event_set_callback(aotrun_event* event, aotrun_event_callback fn, void* user_data) {
  return guarded([&] {
    require(event, "event");
    require(reinterpret_cast<const void*>(fn), "callback");
    if (event->callback_set) fail(Code::InvalidArgument, "the event already has a callback");
    struct Adapter {
      aotrun_event_callback fn;
      void* user;
    };
    // The core's callback type takes int32_t codes; adapt without casting
    // function pointers. Allocated before the event is marked, so that a
    // failed allocation leaves the event without a callback, free to retry.
    auto* a = new Adapter{fn, user_data};
    event->callback_set = true;
    event->ev->set_callback(
        [](void* p, int32_t code, const char* message) {
          std::unique_ptr<Adapter> ad(static_cast<Adapter*>(p));
          ad->fn(ad->user, static_cast<aotrun_code>(code), message);
        },
        a);
  });
}

void aotrun_event_free(aotrun_event* event) { delete event; }

}  // extern "C"
