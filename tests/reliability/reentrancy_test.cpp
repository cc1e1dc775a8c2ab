// Calls that could wait on the calling thread's own work (aotrun.h, "Calls
// from callbacks"): each either works or fails at once with a clear status,
// never hangs. Every scenario runs in a forked child under alarm(), so a
// regression shows up as a failed test (SIGALRM = hang, SIGABRT = terminate)
// instead of a stuck or dead suite.
#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "rel_util.hpp"

using namespace aotrun_test;

namespace {

constexpr unsigned kAlarmSeconds = 20;  // a child still running then is hung
// How long each run of the counting package spins: long enough that the
// callback is registered (or the next run queued) before a run completes,
// also on a loaded 2-core machine under ASan (20 ms was not, once).
constexpr const char* kSpinUs = "300000";

#define CHILD_CHECK(cond)                                                           \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

// What a callback saw when it called back into aotrun.
struct Seen {
  std::atomic<bool> done{false};
  aotrun_code code = AOTRUN_OK;
  std::string message;
  aotrun_runner* runner = nullptr;
  aotrun_event* other = nullptr;  // an event the callback waits for
  Tensor* x = nullptr;
  Tensor* y = nullptr;
  void record(aotrun_status* s) {
    Outcome o = outcome(s);
    code = o.code;
    message = o.message;
    done = true;
  }
};

bool wait_until(const std::atomic<bool>& flag, int ms = 10000) {
  for (int i = 0; i < ms && !flag.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return flag.load();
}

// The counting package spins this long per run (read at container creation),
// so a submission made right after another is still queued behind it.
struct SpinUs {
  explicit SpinUs(const char* us) { ::setenv("AOTRUN_TEST_SPIN_US", us, 1); }
  ~SpinUs() { ::unsetenv("AOTRUN_TEST_SPIN_US"); }
};

}  // namespace

TEST(Reentrancy, WaitAllFromAnEventCallbackOfTheSameRunnerFailsAtOnce) {
  SpinUs spin(kSpinUs);  // the callback is registered before the run completes
  rel::ChildResult r = rel::in_child(
      [] {
        Package pkg(bare_so("counting"));
        Runner run(pkg, RunnerOptions());
        Tensor x({1, 4}, 1.f), y({1, 4});
        static Seen seen;
        seen.runner = run.get();
        aotrun_event* ev = nullptr;
        CHILD_CHECK(aotrun_runner_run_async(run.get(), &x.dl, 1, &y.dl, 1, &ev) == nullptr);
        CHILD_CHECK(aotrun_event_set_callback(
                        ev, [](void*, aotrun_code, const char*) { seen.record(aotrun_runner_wait_all(seen.runner)); },
                        nullptr) == nullptr);
        CHILD_CHECK(wait_until(seen.done));
        CHILD_CHECK(seen.code == AOTRUN_ERR_INVALID_ARGUMENT);
        CHILD_CHECK(contains(seen.message, "wait_all called from an event callback"));
        CHILD_CHECK(contains(seen.message, "'counting'"));
        // From an ordinary thread it still waits, and the runner still works.
        CHILD_CHECK(aotrun_runner_wait_all(run.get()) == nullptr);
        CHILD_CHECK(aotrun_runner_run(run.get(), &x.dl, 1, &y.dl, 1) == nullptr);
        aotrun_event_free(ev);
        return 0;
      },
      kAlarmSeconds);
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(Reentrancy, DestroyFromAnEventCallbackOfTheSameRunnerCompletesLater) {
  SpinUs spin(kSpinUs);
  rel::ChildResult r = rel::in_child(
      [] {
        Package pkg(bare_so("counting"));
        const int before = thread_count();
        aotrun_runner* runner = nullptr;
        RunnerOptions o;
        CHILD_CHECK(aotrun_runner_create(pkg.get(), o.get(), &runner) == nullptr);
        Tensor x({1, 4}, 1.f), y({1, 4});
        static std::atomic<bool> returned{false};
        aotrun_event* ev = nullptr;
        CHILD_CHECK(aotrun_runner_run_async(runner, &x.dl, 1, &y.dl, 1, &ev) == nullptr);
        CHILD_CHECK(aotrun_event_set_callback(
                        ev,
                        [](void* r, aotrun_code, const char*) {
                          aotrun_runner_destroy(static_cast<aotrun_runner*>(r));
                          returned = true;
                        },
                        runner) == nullptr);
        CHILD_CHECK(wait_until(returned));
        CHILD_CHECK(aotrun_event_wait(ev) == nullptr);
        aotrun_event_free(ev);
        // The runner's worker and the thread that destroyed it are gone.
        bool joined = false;
        for (int i = 0; i < 10000 && !joined; ++i) {
          joined = thread_count() <= before;
          if (!joined) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        CHILD_CHECK(joined);
        return 0;
      },
      kAlarmSeconds);
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(Reentrancy, WaitingFromACallbackForARunQueuedBehindItFailsAtOnce) {
  SpinUs spin(kSpinUs);
  rel::ChildResult r = rel::in_child(
      [] {
        Package pkg(bare_so("counting"));
        Runner run(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED).max_inflight(4));  // one worker
        Runner other(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
        Tensor x({1, 4}, 1.f), ya({1, 4}), yb({1, 4}), yc({1, 4});
        static Seen seen, seen_timed, seen_other;
        aotrun_event *a = nullptr, *b = nullptr, *c = nullptr;
        CHILD_CHECK(aotrun_runner_run_async(run.get(), &x.dl, 1, &ya.dl, 1, &a) == nullptr);
        CHILD_CHECK(aotrun_runner_run_async(run.get(), &x.dl, 1, &yb.dl, 1, &b) == nullptr);    // behind a
        CHILD_CHECK(aotrun_runner_run_async(other.get(), &x.dl, 1, &yc.dl, 1, &c) == nullptr);  // another worker
        seen.other = b;
        seen_other.other = c;
        CHILD_CHECK(aotrun_event_set_callback(
                        a,
                        [](void*, aotrun_code, const char*) {
                          seen_timed.record(aotrun_event_wait_timeout(seen.other, 1000000000ull));
                          seen_other.record(aotrun_event_wait(seen_other.other));
                          seen.record(aotrun_event_wait(seen.other));
                        },
                        nullptr) == nullptr);
        CHILD_CHECK(wait_until(seen.done));
        CHILD_CHECK(seen.code == AOTRUN_ERR_INVALID_ARGUMENT);
        CHILD_CHECK(contains(seen.message, "queued behind the callback"));
        CHILD_CHECK(seen_timed.code == AOTRUN_ERR_INVALID_ARGUMENT);
        // A run on another runner's worker is not behind this callback: it works.
        CHILD_CHECK(seen_other.code == AOTRUN_OK);
        CHILD_CHECK(aotrun_event_wait(b) == nullptr);
        CHILD_CHECK(yb.data[0] == 2.f);  // counting: y = x + 1
        for (aotrun_event* e : {a, b, c}) aotrun_event_free(e);
        return 0;
      },
      kAlarmSeconds);
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(Reentrancy, BlockingSubmitFromACallbackIntoAFullWindowFailsAtOnce) {
  SpinUs spin(kSpinUs);
  rel::ChildResult r = rel::in_child(
      [] {
        Package pkg(bare_so("counting"));
        Runner run(pkg, RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED).max_inflight(2));
        Tensor x({1, 4}, 1.f), ya({1, 4}), yb({1, 4});
        static Tensor yc({1, 4}), yd({1, 4});
        static Seen first, second;
        static aotrun_event* c = nullptr;
        aotrun_event *a = nullptr, *b = nullptr;
        CHILD_CHECK(aotrun_runner_run_async(run.get(), &x.dl, 1, &ya.dl, 1, &a) == nullptr);
        CHILD_CHECK(aotrun_runner_run_async(run.get(), &x.dl, 1, &yb.dl, 1, &b) == nullptr);
        first.runner = run.get();
        first.x = &x;
        CHILD_CHECK(aotrun_event_set_callback(
                        a,
                        [](void*, aotrun_code, const char*) {
                          // a's slot is free: this one fits...
                          first.record(aotrun_runner_run_async(first.runner, &first.x->dl, 1, &yc.dl, 1, &c));
                          // ...and now b and c fill the window, b queued behind this callback.
                          aotrun_event* d = nullptr;
                          second.record(aotrun_runner_run_async(first.runner, &first.x->dl, 1, &yd.dl, 1, &d));
                          aotrun_event_free(d);
                        },
                        nullptr) == nullptr);
        CHILD_CHECK(wait_until(second.done));
        CHILD_CHECK(first.code == AOTRUN_OK);
        CHILD_CHECK(second.code == AOTRUN_ERR_WOULD_BLOCK);
        CHILD_CHECK(contains(second.message, "from an event callback of the same runner"));
        CHILD_CHECK(aotrun_runner_wait_all(run.get()) == nullptr);
        CHILD_CHECK(yc.data[0] == 2.f);
        for (aotrun_event* e : {a, b, c}) aotrun_event_free(e);
        return 0;
      },
      kAlarmSeconds);
  EXPECT_TRUE(r.ok()) << r.describe();
}

namespace {

// Log callbacks that call back into aotrun's logging.
struct LogState {
  std::atomic<int> calls{0};
  std::atomic<int> after{0};
};
LogState g_log;

void replacement_sink(void*, aotrun_log_level, const char*) { g_log.after++; }

// Opens a runner whose fallback makes aotrun log a warning.
int provoke_warning(const char* package, aotrun_mode mode) {
  Package pkg(bare_so(package));
  Runner r(pkg, RunnerOptions().mode(mode));
  return r.get() != nullptr ? 0 : 1;
}

}  // namespace

TEST(Reentrancy, TheLogCallbackMayReplaceOrClearItselfAndLogAgain) {
  rel::ChildResult r = rel::in_child(
      [] {
        aotrun_set_log_level(AOTRUN_LOG_WARN);  // one message per provoke_warning
        // Clears itself from inside: returns at once, later messages go to stderr.
        aotrun_set_log_callback(
            [](void*, aotrun_log_level, const char*) {
              g_log.calls++;
              aotrun_set_log_callback(nullptr, nullptr);
            },
            nullptr);
        CHILD_CHECK(provoke_warning("noop_abi10", AOTRUN_MODE_SINGLE_THREADED) == 0);
        CHILD_CHECK(g_log.calls == 1);
        // Replaces itself from inside: the replacement gets the next message.
        aotrun_set_log_callback(
            [](void*, aotrun_log_level, const char*) {
              g_log.calls++;
              aotrun_set_log_callback(&replacement_sink, nullptr);
            },
            nullptr);
        CHILD_CHECK(provoke_warning("noop_abi10", AOTRUN_MODE_SINGLE_THREADED) == 0);
        CHILD_CHECK(provoke_warning("noop_abi10", AOTRUN_MODE_SINGLE_THREADED) == 0);
        CHILD_CHECK(g_log.calls == 2 && g_log.after == 1);
        // Calls aotrun from inside (here: something that logs): the nested
        // message goes to stderr instead of re-entering the callback.
        aotrun_set_log_callback(
            [](void*, aotrun_log_level, const char*) {
              g_log.calls++;
              provoke_warning("noop_abi10", AOTRUN_MODE_GRAPH);
            },
            nullptr);
        CHILD_CHECK(provoke_warning("noop_abi10", AOTRUN_MODE_SINGLE_THREADED) == 0);
        CHILD_CHECK(g_log.calls == 3);
        aotrun_set_log_callback(nullptr, nullptr);
        return 0;
      },
      kAlarmSeconds);
  EXPECT_TRUE(r.ok()) << r.describe();
}

// A C++ host's callback that throws must not unwind into aotrun's worker
// (std::terminate): the exception is caught and reported.
TEST(Reentrancy, CallbacksThatThrowAreCaughtAndReported) {
  SpinUs spin(kSpinUs);
  rel::ChildResult r = rel::in_child(
      [] {
        static std::atomic<bool> thrown{false};
        static std::atomic<int> errors{0};
        aotrun_set_log_level(AOTRUN_LOG_WARN);
        aotrun_set_log_callback(
            [](void*, aotrun_log_level level, const char* msg) {
              if (level == AOTRUN_LOG_ERROR && contains(msg, "an event callback threw an exception")) errors++;
            },
            nullptr);
        Package pkg(bare_so("counting"));
        Runner run(pkg, RunnerOptions());
        Tensor x({1, 4}, 1.f), y({1, 4});
        aotrun_event* ev = nullptr;
        CHILD_CHECK(aotrun_runner_run_async(run.get(), &x.dl, 1, &y.dl, 1, &ev) == nullptr);
        CHILD_CHECK(aotrun_event_set_callback(
                        ev,
                        [](void*, aotrun_code, const char*) {
                          thrown = true;
                          throw std::runtime_error("host bug");
                        },
                        nullptr) == nullptr);
        CHILD_CHECK(aotrun_runner_wait_all(run.get()) == nullptr);
        CHILD_CHECK(thrown && errors == 1);
        CHILD_CHECK(aotrun_event_wait(ev) == nullptr);
        aotrun_event_free(ev);
        // A log callback that throws: the message is dropped, the caller goes on.
        aotrun_set_log_callback([](void*, aotrun_log_level, const char*) { throw 42; }, nullptr);
        CHILD_CHECK(provoke_warning("noop_abi10", AOTRUN_MODE_SINGLE_THREADED) == 0);
        aotrun_set_log_callback(nullptr, nullptr);
        // The runner still works.
        CHILD_CHECK(aotrun_runner_run(run.get(), &x.dl, 1, &y.dl, 1) == nullptr && y.data[0] == 2.f);
        return 0;
      },
      kAlarmSeconds);
  EXPECT_TRUE(r.ok()) << r.describe();
}
