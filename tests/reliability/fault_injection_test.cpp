// Fault injection in the SQLite tradition (issue #14): for N = 1, 2, 3, ...
// make the Nth allocation of the process (C++ operator new, libaotrun's
// included) or the Nth fault point of the test package (packages/fault_nth.c)
// fail, run a whole scenario through the public C API, and require that every
// call either succeeds or returns a non-OK status with a message (never
// INTERNAL), that a failed step leaves its objects usable (a retry succeeds
// and produces the right output), that nothing crashes, hangs or leaks
// (LeakSanitizer in the asan build), until an N is reached that the scenario
// never gets to: then it passed unharmed and the loop stops.
//
// Each N runs in a forked child with a watchdog, so a crash or a hang is
// reported with its N and the site of the injected fault, and the loop goes
// on. The child reports over a pipe; the parent symbolizes and judges.
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <typeinfo>
#include <vector>

#include <cxxabi.h>

#include <aotrun/aotrun.h>
#include <gtest/gtest.h>

#include "rel_util.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define FI_ASAN 1
#else
#define FI_ASAN 0
#endif

// ===========================================================================
// The allocation hook. The executable's definitions of the replaceable
// allocation functions interpose for every shared object that calls them
// through the PLT, libaotrun and libstdc++ included (checked by the
// HookSeesLibaotrunAllocations test, not assumed).
// ===========================================================================
namespace fi_hook {

std::atomic<bool> armed{false};
std::atomic<long long> fail_at{0};
std::atomic<long long> count{0};  // allocations seen while armed
std::atomic<bool> fired{false};
// Test-side code (bookkeeping between API calls) is not under test: its
// allocations are neither counted nor failed. Trivially initialised, so safe
// on any thread, from the first allocation on.
thread_local int quiet = 0;
// Where the fault site goes the moment it fires (the child's pipe): a crash
// or hang right after still leaves it with the parent.
int site_fd = -1;

// Writes "<tag>\t<hex pc> <hex pc> ...\n" for the calling thread's stack,
// without allocating (it runs inside operator new and in a signal handler).
void write_stack(int fd, char tag) noexcept {
  if (fd < 0) return;
  void* frames[48];
  const int n = backtrace(frames, 48);
  char buf[48 * 20 + 8];
  size_t len = 0;
  buf[len++] = tag;
  for (int i = 0; i < n; ++i) {
    buf[len++] = i == 0 ? '\t' : ' ';
    char hex[17];
    int k = 0;
    for (uintptr_t v = reinterpret_cast<uintptr_t>(frames[i]); k == 0 || v != 0; v >>= 4)
      hex[k++] = "0123456789abcdef"[v & 15];
    while (k > 0) buf[len++] = hex[--k];
  }
  buf[len++] = '\n';
  ssize_t w = ::write(fd, buf, len);
  (void)w;
}

bool fail_now() noexcept {
  if (!armed.load(std::memory_order_relaxed) || quiet != 0) return false;
  const long long n = count.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != fail_at.load(std::memory_order_relaxed)) return false;
  fired.store(true);
  write_stack(site_fd, 'T');
  return true;
}

void arm(long long n) {
  count.store(0);
  fired.store(false);
  fail_at.store(n);
  armed.store(true);
}
void disarm() { armed.store(false); }

struct Quiet {
  Quiet() { ++quiet; }
  ~Quiet() { --quiet; }
};

void* plain(std::size_t n) noexcept { return std::malloc(n != 0 ? n : 1); }
void* aligned(std::size_t n, std::align_val_t a) noexcept {
  std::size_t al = static_cast<std::size_t>(a);
  if (al < sizeof(void*)) al = sizeof(void*);
  void* p = nullptr;
  return ::posix_memalign(&p, al, n != 0 ? n : 1) == 0 ? p : nullptr;
}

}  // namespace fi_hook

void* operator new(std::size_t n) {
  void* p = fi_hook::fail_now() ? nullptr : fi_hook::plain(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t n) {
  void* p = fi_hook::fail_now() ? nullptr : fi_hook::plain(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return fi_hook::fail_now() ? nullptr : fi_hook::plain(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return fi_hook::fail_now() ? nullptr : fi_hook::plain(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  void* p = fi_hook::fail_now() ? nullptr : fi_hook::aligned(n, a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t n, std::align_val_t a) {
  void* p = fi_hook::fail_now() ? nullptr : fi_hook::aligned(n, a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return fi_hook::fail_now() ? nullptr : fi_hook::aligned(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return fi_hook::fail_now() ? nullptr : fi_hook::aligned(n, a);
}
// Out of line: GCC would otherwise see free() meet operator new after
// inlining and warn (-Wmismatched-new-delete) about the pairing made here.
[[gnu::noinline]] void fi_release(void* p) noexcept { std::free(p); }
void operator delete(void* p) noexcept { fi_release(p); }
void operator delete[](void* p) noexcept { fi_release(p); }
void operator delete(void* p, std::size_t) noexcept { fi_release(p); }
void operator delete[](void* p, std::size_t) noexcept { fi_release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { fi_release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { fi_release(p); }
void operator delete(void* p, std::align_val_t) noexcept { fi_release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { fi_release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { fi_release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { fi_release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { fi_release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { fi_release(p); }

namespace {

using aotrun_test::Tensor;

// ===========================================================================
// The package under test, assembled at run time: libfault_nth.so, a weights
// file with its two constants, and a manifest with real hashes. The test
// keeps the library loaded itself so that its fault counter can be armed
// before aotrun opens it (aotrun's dlopen of the same file shares it).
// ===========================================================================
constexpr float kScale = 2.0f;
constexpr float kBias = 1.0f;

struct PackageControl {
  void (*arm)(long long) = nullptr;
  long long (*points)() = nullptr;
  int (*fired)() = nullptr;
  const char* (*where)() = nullptr;
};

struct Fixture {
  rel::ScratchDir scratch{"fault_nth"};
  std::string dir;
  void* handle = nullptr;
  PackageControl ctl;
  std::string error;

  Fixture() {
    dir = scratch / "fault_nth";
    const std::string lib = aotrun_test::bare_so("fault_nth");
    std::string weights_data(8, '\0');
    std::memcpy(&weights_data[0], &kScale, 4);
    std::memcpy(&weights_data[4], &kBias, 4);
    const std::string header = R"({"scale":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("bias":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    if (rel::sh("mkdir -p '" + dir + "' && cp '" + lib + "' '" + dir + "/libfault_nth.so'") != 0) {
      error = "cannot copy " + lib;
      return;
    }
    rel::write_file(dir + "/weights.safetensors", rel::safetensors_bytes(header, weights_data));
    nlohmann::json m = {{"format", "aotrun-package"},
                        {"format_version", 1},
                        {"name", "fault_nth"},
                        {"abi_version", "1.1"},
                        {"device", "cpu"},
                        {"library", "libfault_nth.so"},
                        {"weights", {"weights.safetensors"}},
                        {"files",
                         {{"libfault_nth.so", rel::sha256_of(dir + "/libfault_nth.so")},
                          {"weights.safetensors", rel::sha256_of(dir + "/weights.safetensors")}}}};
    rel::write_file(dir + "/manifest.json", m.dump(2));
    // Whatever the umask: aotrun refuses group- or world-writable files.
    rel::sh("chmod 0755 '" + dir + "' && chmod 0644 '" + dir + "'/*");
    handle = ::dlopen((dir + "/libfault_nth.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      error = std::string("dlopen: ") + ::dlerror();
      return;
    }
    ctl.arm = reinterpret_cast<void (*)(long long)>(::dlsym(handle, "aotrun_test_fault_nth_arm"));
    ctl.points = reinterpret_cast<long long (*)()>(::dlsym(handle, "aotrun_test_fault_nth_points"));
    ctl.fired = reinterpret_cast<int (*)()>(::dlsym(handle, "aotrun_test_fault_nth_fired"));
    ctl.where = reinterpret_cast<const char* (*)()>(::dlsym(handle, "aotrun_test_fault_nth_where"));
    if (!ctl.arm || !ctl.points || !ctl.fired || !ctl.where) error = "fault_nth lacks its test exports";
  }
  ~Fixture() {
    if (handle != nullptr) ::dlclose(handle);
  }
};

Fixture* g_fixture = nullptr;

// ===========================================================================
// The child side: one scenario under one armed fault.
// ===========================================================================
enum class Kind { Alloc, Package };

const char* kind_name(Kind k) { return k == Kind::Alloc ? "alloc" : "package"; }

void silent_log(void*, aotrun_log_level, const char*) {}

void count_callback(void* user, aotrun_code, const char*) { static_cast<std::atomic<int>*>(user)->fetch_add(1); }

// Thrown by a scenario that found its objects unusable (e.g. a runner whose
// destruction would hang): the child reports and ends without cleanup.
struct Abandon {};

// x_k: rows x 4 values, distinct per k; exact in float through * 2 + 1.
void fill(Tensor& t, int k) {
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = static_cast<float>((static_cast<int>(i) * 3 + k * 7) % 23) * 0.25f - 2.f;
}

class Ctx {
 public:
  Ctx(Kind kind, const Fixture& fx, int fd) : kind_(kind), fx_(fx), fd_(fd) {
    x2.reserve(kTensors);  // Tensors point into themselves: no reallocation
    y2.reserve(kTensors);
    for (int k = 0; k < kTensors; ++k) {
      x2.emplace_back(std::vector<int64_t>{2, 4});
      y2.emplace_back(std::vector<int64_t>{2, 4});
      fill(x2.back(), k);
    }
    fill(x3, 11);
  }

  const char* dir() const { return fx_.dir.c_str(); }

  // Faults start here: the scenarios that are not about opening a package
  // open it first, unarmed.
  void arm() {
    if (kind_ == Kind::Alloc)
      fi_hook::arm(arm_at);
    else
      fx_.ctl.arm(arm_at);
  }
  long long arm_at = LLONG_MAX;

  bool fired() const { return kind_ == Kind::Alloc ? fi_hook::fired.load() : fx_.ctl.fired() != 0; }

  // A failed call: checks the status's contract, records it, frees it.
  void note(const char* step, aotrun_status* s) {
    fi_hook::Quiet q;
    const aotrun_code code = aotrun_status_code(s);
    std::string msg = aotrun_status_message(s);
    aotrun_status_free(s);
    for (char& ch : msg) {
      if (ch == '\n' || ch == '\t') ch = ' ';
    }
    emit("S\t" + std::string(step) + "\t" + aotrun_code_name(code) + "\t" + msg);
    if (code == AOTRUN_OK) violation(std::string(step) + ": non-NULL status with code OK");
    if (msg.empty()) violation(std::string(step) + ": status without a message");
    if (code == AOTRUN_ERR_INTERNAL) {
      violation(std::string(step) + ": INTERNAL: " + msg);
    } else if (code != AOTRUN_OK && fired()) {
      // The fault says what the caller should hear: every allocation here
      // is aotrun's own (OUT_OF_MEMORY); the package fails with RUNTIME
      // (PACKAGE) or, for its host requests, OUT_OF_MEMORY.
      const bool expected = code == AOTRUN_ERR_OUT_OF_MEMORY || (kind_ == Kind::Package && code == AOTRUN_ERR_PACKAGE);
      if (!expected) {
        violation(std::string(step) + ": the injected " + kind_name(kind_) + " fault was reported as " +
                  aotrun_code_name(code) + ": " + msg);
      }
    }
    if (!fired())
      violation(std::string(step) + " failed although no fault fired: " + aotrun_code_name(code) + ": " + msg);
  }

  // Pieces, joined under Quiet (a std::string argument would not be).
  template <typename... A>
  void violation(const A&... parts) {
    fi_hook::Quiet q;
    std::string s;
    ((s += parts), ...);
    emit("V\t" + s);
  }

  // Calls f (returning aotrun_status*); on failure checks the status and
  // tries once more, which must succeed (a fault fires once).
  template <typename F>
  bool attempt(const char* step, F&& f) {
    aotrun_status* s = f();
    if (s == nullptr) return true;
    note(step, s);
    s = f();
    if (s == nullptr) return true;
    {
      fi_hook::Quiet q;
      violation(std::string("retry of ") + step + " failed: " + aotrun_code_name(aotrun_status_code(s)) + ": " +
                aotrun_status_message(s));
    }
    aotrun_status_free(s);
    return false;
  }

  // Like attempt, for a call with an out parameter that must stay untouched
  // when the call fails.
  template <typename T, typename F>
  bool attempt_out(const char* step, T*& out, F&& f) {
    T* const sentinel = reinterpret_cast<T*>(0x10);
    return attempt(step, [&] {
      out = sentinel;
      aotrun_status* s = f();
      if (s != nullptr && out != sentinel) violation(step, " wrote its out parameter on failure");
      if (s != nullptr || out == sentinel) out = nullptr;
      return s;
    });
  }

  // A group of steps that is retried as a whole once if any step failed.
  template <typename B>
  bool block(const char* name, B&& b) {
    if (b()) return true;
    if (b()) return true;
    violation("retry of block '", name, "' failed");
    return false;
  }

  void expect_output(const char* step, const Tensor& x, const Tensor& y) {
    fi_hook::Quiet q;
    for (size_t i = 0; i < x.data.size(); ++i) {
      const float want = x.data[i] * kScale + kBias;
      if (y.data[i] != want) {
        violation(std::string(step) + ": wrong output y[" + std::to_string(i) + "] = " + std::to_string(y.data[i]) +
                  ", expected " + std::to_string(want));
        return;
      }
    }
  }
  // A C string: a std::string argument would be built outside Quiet.
  void expect(bool cond, const char* what) {
    if (!cond) violation(what);
  }

  bool stats(aotrun_runner* r, aotrun_runner_stats* st) {
    std::memset(st, 0, sizeof(*st));
    st->struct_size = sizeof(*st);
    return attempt("runner_get_stats", [&] { return aotrun_runner_get_stats(r, st); });
  }

  // Options with the given mode; NULL if they could not be made.
  aotrun_runner_options* options(aotrun_mode mode) {
    aotrun_runner_options* o = nullptr;
    if (!attempt_out("runner_options_create", o, [&] { return aotrun_runner_options_create(&o); })) return nullptr;
    attempt("runner_options_set_mode", [&] { return aotrun_runner_options_set_mode(o, mode); });
    return o;
  }
  aotrun_package* open() {
    aotrun_package* p = nullptr;
    attempt_out("package_open", p, [&] { return aotrun_package_open(dir(), nullptr, &p); });
    return p;
  }
  aotrun_runner* create(aotrun_package* p, aotrun_runner_options* o, aotrun_mode expect_mode) {
    aotrun_runner* r = nullptr;
    if (!attempt_out("runner_create", r, [&] { return aotrun_runner_create(p, o, &r); })) return nullptr;
    expect(aotrun_runner_mode(r) == expect_mode, "runner fell back from its mode");
    return r;
  }
  bool run(aotrun_runner* r, const char* step, Tensor& x, Tensor& y) {
    std::fill(y.data.begin(), y.data.end(), -99.f);
    if (!attempt(step, [&] { return aotrun_runner_run(r, &x.dl, 1, &y.dl, 1); })) return false;
    expect_output(step, x, y);
    return true;
  }

  void emit(const std::string& line) {
    fi_hook::Quiet q;
    std::string l = line + "\n";
    ssize_t w = ::write(fd_, l.data(), l.size());
    (void)w;
  }

  static constexpr int kTensors = 4;
  std::vector<Tensor> x2, y2;  // [2, 4]
  Tensor x3{std::vector<int64_t>{3, 4}}, y3{std::vector<int64_t>{3, 4}};

 private:
  Kind kind_;
  const Fixture& fx_;
  int fd_;
};

// --- the scenarios -----------------------------------------------------------

// (a) open, then per mode: runner, output shapes, one run (+ run_alloc).
void scenario_sync(Ctx& c) {
  c.arm();
  aotrun_package* pkg = c.open();
  if (pkg == nullptr) return;
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH}) {
    aotrun_runner_options* o = c.options(mode);
    if (o == nullptr) continue;
    if (mode == AOTRUN_MODE_GRAPH) {
      c.attempt("set_graph_warmup_runs", [&] { return aotrun_runner_options_set_graph_warmup_runs(o, 0); });
    }
    aotrun_runner* r = c.create(pkg, o, mode);
    aotrun_runner_options_free(o);
    if (r == nullptr) continue;
    int64_t shapes[2] = {0, 0};
    if (c.attempt("runner_get_output_shapes",
                  [&] { return aotrun_runner_get_output_shapes(r, &c.x2[0].dl, 1, shapes, 2); })) {
      c.expect(shapes[0] == 2 && shapes[1] == 4, "wrong output shapes");
    }
    c.run(r, "runner_run", c.x2[0], c.y2[0]);
    if (mode == AOTRUN_MODE_THREADED) {
      DLManagedTensor* m = nullptr;
      if (c.attempt_out("runner_run_alloc", m, [&] { return aotrun_runner_run_alloc(r, &c.x2[1].dl, 1, &m, 1); })) {
        fi_hook::Quiet q;
        Tensor got({2, 4});
        std::memcpy(got.data.data(), m->dl_tensor.data, 8 * sizeof(float));
        c.expect_output("runner_run_alloc", c.x2[1], got);
        m->deleter(m);
      }
    }
    aotrun_runner_destroy(r);
  }
  aotrun_package_close(pkg);
}

// The scenarios below open the package unarmed: opening is scenario (a)'s.
// (b) asynchronous runs in threaded (2 instances) and graph mode: a full
// window, a callback, waits; a run whose event failed is submitted again.
void scenario_async(Ctx& c) {
  aotrun_package* pkg = c.open();
  c.arm();
  if (pkg == nullptr) return;
  for (aotrun_mode mode : {AOTRUN_MODE_THREADED, AOTRUN_MODE_GRAPH}) {
    aotrun_runner_options* o = c.options(mode);
    if (o == nullptr) continue;
    if (mode == AOTRUN_MODE_THREADED) {
      c.attempt("set_num_models", [&] { return aotrun_runner_options_set_num_models(o, 2); });
    } else {
      c.attempt("set_graph_warmup_runs", [&] { return aotrun_runner_options_set_graph_warmup_runs(o, 0); });
    }
    c.attempt("set_max_inflight", [&] { return aotrun_runner_options_set_max_inflight(o, 2); });
    aotrun_runner* r = c.create(pkg, o, mode);
    aotrun_runner_options_free(o);
    if (r == nullptr) continue;
    aotrun_event* ev[Ctx::kTensors] = {};
    std::atomic<int> callbacks{0};
    bool callback_set = false;
    auto submit = [&](int k) {
      std::fill(c.y2[k].data.begin(), c.y2[k].data.end(), -99.f);
      return c.attempt_out("runner_run_async", ev[k],
                           [&] { return aotrun_runner_run_async(r, &c.x2[k].dl, 1, &c.y2[k].dl, 1, &ev[k]); });
    };
    for (int k = 0; k < Ctx::kTensors; ++k) {
      submit(k);
      if (k == 0 && ev[0] != nullptr) {
        callback_set = c.attempt("event_set_callback",
                                 [&] { return aotrun_event_set_callback(ev[0], &count_callback, &callbacks); });
      }
    }
    for (int k = 0; k < Ctx::kTensors; ++k) {
      if (ev[k] == nullptr) continue;
      aotrun_status* s = aotrun_event_wait(ev[k]);
      if (s != nullptr) {
        // The run failed: the runner must take the same run again.
        c.note("event_wait", s);
        aotrun_event_free(ev[k]);
        ev[k] = nullptr;
        if (!submit(k)) continue;
        s = aotrun_event_wait(ev[k]);
        if (s != nullptr) {
          c.violation("resubmitted run failed");
          aotrun_status_free(s);
          continue;
        }
      }
      c.expect(aotrun_event_is_ready(ev[k]) == 1, "event not ready after a successful wait");
      c.expect_output("async run", c.x2[k], c.y2[k]);
    }
    // Every event is complete, so no run is in flight: a slot still taken
    // was lost by a failed submission, and wait_all / destroy would wait for
    // it forever. Say so now instead of hanging into the watchdog.
    aotrun_runner_stats st;
    if (c.stats(r, &st) && st.inflight != 0) {
      c.violation("an in-flight slot was lost (stats.inflight = ", std::to_string(st.inflight),
                  " with every event complete): runner_wait_all and runner_destroy would hang");
      throw Abandon{};
    }
    c.attempt("runner_wait_all", [&] { return aotrun_runner_wait_all(r); });
    aotrun_runner_destroy(r);
    if (callback_set) c.expect(callbacks.load() == 1, "event callback did not fire exactly once");
    for (auto* e : ev) aotrun_event_free(e);
  }
  aotrun_package_close(pkg);
}

// (c) graph mode: capture on the first run, replay with other data, a second
// shape, eviction and recapture; then shapes captured at creation (frozen).
void scenario_graph(Ctx& c) {
  aotrun_package* pkg = c.open();
  // A threaded runner, run on this thread after the captures: its package
  // synchronizes events, which a capture left open on this thread forbids.
  aotrun_runner* threaded = nullptr;
  if (aotrun_runner_options* o = c.options(AOTRUN_MODE_THREADED)) {
    threaded = c.create(pkg, o, AOTRUN_MODE_THREADED);
    aotrun_runner_options_free(o);
  }
  c.arm();
  if (pkg == nullptr) return;
  if (aotrun_runner_options* o = c.options(AOTRUN_MODE_GRAPH)) {
    c.attempt("set_graph_warmup_runs", [&] { return aotrun_runner_options_set_graph_warmup_runs(o, 0); });
    aotrun_runner* r = c.create(pkg, o, AOTRUN_MODE_GRAPH);
    aotrun_runner_options_free(o);
    if (r != nullptr) {
      c.run(r, "run (capture [2,4])", c.x2[0], c.y2[0]);
      c.run(r, "run (replay [2,4])", c.x2[1], c.y2[1]);
      c.run(r, "run (capture [3,4])", c.x3, c.y3);
      c.attempt("runner_evict_graphs", [&] { return aotrun_runner_evict_graphs(r); });
      c.run(r, "run (recapture [2,4])", c.x2[2], c.y2[2]);
      c.run(r, "run (replay again [2,4])", c.x2[3], c.y2[3]);
      aotrun_runner_stats st;
      if (c.stats(r, &st)) {
        // Three captures were due; one fault can spoil at most one of them.
        // Fewer means a failure poisoned the runner's capture machinery.
        c.expect(st.graph_captures >= (c.fired() ? 2u : 3u), "fewer than 3 captures (2 with a fault) succeeded");
        c.expect(st.inflight == 0, "inflight != 0");
      }
      aotrun_runner_destroy(r);
    }
  }
  if (aotrun_runner_options* o = c.options(AOTRUN_MODE_GRAPH)) {
    const int32_t ndims[1] = {2};
    const int64_t dims[2] = {2, 4};
    c.attempt("add_capture_shapes", [&] { return aotrun_runner_options_add_capture_shapes(o, ndims, 1, dims); });
    c.attempt("set_graph_frozen", [&] { return aotrun_runner_options_set_graph_frozen(o, 1); });
    aotrun_runner* r = c.create(pkg, o, AOTRUN_MODE_GRAPH);
    aotrun_runner_options_free(o);
    if (r != nullptr) {
      c.run(r, "run (upfront graph [2,4])", c.x2[0], c.y2[0]);
      c.run(r, "run (frozen, eager [3,4])", c.x3, c.y3);
      aotrun_runner_destroy(r);
    }
  }
  if (threaded != nullptr) {
    c.run(threaded, "threaded run after the captures", c.x2[1], c.y2[1]);
    c.run(threaded, "second threaded run after the captures", c.x2[2], c.y2[2]);
    aotrun_runner_destroy(threaded);
  }
  aotrun_package_close(pkg);
}

// (d) the caller's capture: a single_threaded and a graph runner recorded
// into the caller's graph on an inline stream, the graph launched with new
// data; and a run on a worker stream synchronized by the caller.
void scenario_caller_capture(Ctx& c) {
  aotrun_package* pkg = c.open();
  c.arm();
  if (pkg == nullptr) return;
  aotrun_runner* rs = nullptr;
  aotrun_runner* rg = nullptr;
  if (aotrun_runner_options* o = c.options(AOTRUN_MODE_SINGLE_THREADED)) {
    rs = c.create(pkg, o, AOTRUN_MODE_SINGLE_THREADED);
    aotrun_runner_options_free(o);
  }
  if (aotrun_runner_options* o = c.options(AOTRUN_MODE_GRAPH)) {
    rg = c.create(pkg, o, AOTRUN_MODE_GRAPH);
    aotrun_runner_options_free(o);
  }
  aotrun_stream* s = nullptr;
  c.attempt_out("stream_create (inline)", s, [&] { return aotrun_stream_create(AOTRUN_STREAM_INLINE, &s); });
  if (rs != nullptr && rg != nullptr && s != nullptr) {
    Tensor& x = c.x2[0];
    aotrun_graph* g = nullptr;
    // Begin, record both runners, end: one block, retried whole.
    const bool captured = c.block("caller capture", [&] {
      aotrun_status* st = aotrun_stream_begin_capture(s, AOTRUN_CAPTURE_GLOBAL);
      if (st != nullptr) {
        c.note("stream_begin_capture", st);
        return false;
      }
      bool ok = true;
      st = aotrun_runner_run_on_stream(rs, s, &x.dl, 1, &c.y2[1].dl, 1);
      if (st != nullptr) {
        c.note("run_on_stream (single_threaded, capturing)", st);
        ok = false;
      }
      st = aotrun_runner_run_on_stream(rg, s, &x.dl, 1, &c.y2[2].dl, 1);
      if (st != nullptr) {
        c.note("run_on_stream (graph, capturing)", st);
        ok = false;
      }
      g = reinterpret_cast<aotrun_graph*>(0x10);
      st = aotrun_stream_end_capture(s, &g);
      if (st != nullptr) {
        c.expect(g == reinterpret_cast<aotrun_graph*>(0x10), "end_capture wrote its out parameter on failure");
        g = nullptr;
        c.note("stream_end_capture", st);
        return false;
      }
      if (!ok) {
        aotrun_graph_free(g);
        g = nullptr;
      }
      c.expect(aotrun_stream_is_capturing(s) == 0, "stream still capturing after end_capture");
      return ok;
    });
    if (captured && g != nullptr) {
      for (int k = 0; k < 3; ++k) {
        fill(x, 20 + k);
        std::fill(c.y2[1].data.begin(), c.y2[1].data.end(), -99.f);
        std::fill(c.y2[2].data.begin(), c.y2[2].data.end(), -99.f);
        if (c.attempt("graph_launch", [&] { return aotrun_graph_launch(g, s); })) {
          c.expect_output("caller graph (single_threaded)", x, c.y2[1]);
          c.expect_output("caller graph (graph runner)", x, c.y2[2]);
        }
      }
      aotrun_graph_free(g);
    }
  }
  aotrun_stream* w = nullptr;
  c.attempt_out("stream_create (worker)", w, [&] { return aotrun_stream_create(AOTRUN_STREAM_WORKER, &w); });
  if (rs != nullptr && w != nullptr) {
    c.block("worker stream run", [&] {
      std::fill(c.y3.data.begin(), c.y3.data.end(), -99.f);
      aotrun_status* st = aotrun_runner_run_on_stream(rs, w, &c.x3.dl, 1, &c.y3.dl, 1);
      const bool enqueued = st == nullptr;
      if (!enqueued) c.note("run_on_stream (worker)", st);
      // Launched work fails at synchronize; synchronize also clears it.
      st = aotrun_stream_synchronize(w);
      if (st != nullptr) {
        c.note("stream_synchronize", st);
        return false;
      }
      if (!enqueued) return false;
      c.expect_output("worker stream run", c.x3, c.y3);
      return true;
    });
  }
  aotrun_stream_free(w);
  aotrun_stream_free(s);
  aotrun_runner_destroy(rg);
  aotrun_runner_destroy(rs);
  aotrun_package_close(pkg);
}

using ScenarioFn = void (*)(Ctx&);

// --- the child --------------------------------------------------------------

int g_child_fd = -1;
Kind g_child_kind = Kind::Alloc;

void write_all(const char* s, size_t n) {
  ssize_t w = ::write(g_child_fd, s, n);
  (void)w;
}

// The package's failed fault point, for a child that cannot report normally.
void write_where() {
  if (g_child_kind != Kind::Package || g_fixture == nullptr) return;
  const char* w = g_fixture->ctl.where();
  write_all("W\t", 2);
  write_all(w, std::strlen(w));
  write_all("\n", 1);
}

// An exception that escaped where none may (a noexcept function, a thread's
// body): say which before the abort.
void on_terminate() {
  write_where();
  std::string what = "std::terminate";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      int st = 0;
      char* name = abi::__cxa_demangle(typeid(ex).name(), nullptr, nullptr, &st);
      what += " with " + std::string(name != nullptr ? name : typeid(ex).name()) + ": " + ex.what();
      std::free(name);
    } catch (...) {
      what += " with a non-std exception";
    }
  }
  write_all("X\t", 2);
  write_all(what.data(), what.size());
  write_all("\n", 1);
  std::abort();
}

// Watchdog: report where the main thread waits, then end the child.
void on_alarm(int) {
  if (static_cast<pid_t>(::syscall(SYS_gettid)) != ::getpid()) {
    ::syscall(SYS_tgkill, ::getpid(), ::getpid(), SIGALRM);  // the main thread's stack is the one that matters
    return;
  }
  fi_hook::write_stack(g_child_fd, 'H');
  write_where();
  ::_exit(124);
}

[[noreturn]] void child_main(ScenarioFn fn, Kind kind, long long n, int fd, int err_fd, int timeout_s) {
  g_child_fd = fd;
  g_child_kind = kind;
  fi_hook::site_fd = fd;
  // Sanitizer reports and the like go to a file the parent excerpts.
  ::dup2(err_fd, 2);
  std::set_terminate(&on_terminate);
  fi_hook::disarm();  // a clean slate whatever the parent's tests left
  fi_hook::fired.store(false);
  fi_hook::count.store(0);
  struct sigaction sa {};
  sa.sa_handler = &on_alarm;
  ::sigaction(SIGALRM, &sa, nullptr);
  ::alarm(static_cast<unsigned>(timeout_s));
  aotrun_set_log_callback(&silent_log, nullptr);
  const Fixture& fx = *g_fixture;
  int rc = 0;
  {
    Ctx c(kind, fx, fd);
    // n == 0: count only (an N never reached).
    const long long at = n > 0 ? n : LLONG_MAX;
    c.arm_at = at;
    try {
      fn(c);
    } catch (const Abandon&) {
      fi_hook::disarm();
      const bool fired = kind == Kind::Alloc ? fi_hook::fired.load() : fx.ctl.fired() != 0;
      const std::string where = kind == Kind::Package ? fx.ctl.where() : "";  // before arm(0) clears it
      if (kind == Kind::Package) fx.ctl.arm(0);
      c.emit(std::string("P\t-1\t") + (fired ? "1" : "0") + "\t" + where);
      c.emit("E");
      ::_exit(6);  // no leak check: the abandoned objects are still alive
    } catch (...) {
      // The C API throws nothing; this is the test's own bug. Never let the
      // child unwind into gtest (it would go on running the suite).
      fi_hook::disarm();
      c.emit("V\texception escaped the scenario (a bug of the test)");
      ::_exit(5);
    }
    long long points;
    bool fired;
    std::string where;
    if (kind == Kind::Alloc) {
      fi_hook::disarm();
      points = fi_hook::count.load();
      fired = fi_hook::fired.load();
    } else {
      points = fx.ctl.points();
      fired = fx.ctl.fired() != 0;
      where = fx.ctl.where();  // before arm(0) clears it
      fx.ctl.arm(0);
    }
    c.emit("P\t" + std::to_string(points) + "\t" + (fired ? "1" : "0") + "\t" + where);
  }
  aotrun_set_log_callback(nullptr, nullptr);
#if FI_ASAN
  if (__lsan_do_recoverable_leak_check() != 0) {
    ssize_t w = ::write(fd, "L\n", 2);
    (void)w;
    rc = 3;
  }
#endif
  ssize_t w = ::write(fd, "E\n", 2);
  (void)w;
  ::_exit(rc);
}

// ===========================================================================
// The parent side.
// ===========================================================================
struct ChildResult {
  long long n = 0;
  bool ended = false;  // the child got to its end
  bool fired = false;
  long long points = -1;
  bool leaked = false;
  bool hung = false;
  std::string terminate;    // what std::terminate was called with
  std::string stderr_text;  // the child's stderr (sanitizer reports)
  int signal = 0;           // crash: the signal that ended it
  int exit_code = 0;
  std::vector<std::string> failures;  // step \t code \t message
  std::vector<std::string> violations;
  std::vector<uintptr_t> site, hang_stack;
  std::string where;  // package fault point
  double seconds = 0;

  bool bad() const { return !violations.empty() || leaked || hung || signal != 0 || !ended || exit_code != 0; }
  std::string outcome() const {
    if (hung) return "hang";
    if (signal != 0) return std::string("crash (") + strsignal(signal) + ")";
    if (leaked) return "leak";
    if (!ended || exit_code != 0) return "child exit " + std::to_string(exit_code);
    if (!violations.empty()) return "violation";
    return "ok";
  }
};

std::vector<uintptr_t> parse_addresses(const std::string& s) {
  std::vector<uintptr_t> v;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(' ', pos);
    if (end == std::string::npos) end = s.size();
    v.push_back(static_cast<uintptr_t>(std::strtoull(s.substr(pos, end - pos).c_str(), nullptr, 16)));
    pos = end + 1;
  }
  return v;
}

ChildResult run_child(ScenarioFn fn, Kind kind, long long n, int timeout_s) {
  ChildResult r;
  r.n = n;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    r.violations.push_back("pipe failed");
    return r;
  }
  char err_path[] = "/tmp/aotrun_fi_stderr_XXXXXX";
  const int err_fd = ::mkstemp(err_path);
  if (err_fd < 0) {
    ::close(p[0]);
    ::close(p[1]);
    r.violations.push_back("mkstemp failed");
    return r;
  }
  ::unlink(err_path);
  std::fflush(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    child_main(fn, kind, n, p[1], err_fd, timeout_s);
  }
  ::close(p[1]);
  if (pid < 0) {
    ::close(p[0]);
    ::close(err_fd);
    r.violations.push_back(std::string("fork failed: ") + std::strerror(errno));
    return r;
  }
  std::string text;
  char buf[4096];
  // The child's own alarm ends a hang; this is the backstop.
  const auto deadline = t0 + std::chrono::seconds(timeout_s + 30);
  bool killed = false;
  for (;;) {
    pollfd pfd{p[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 1000);
    if (ready > 0) {
      const ssize_t got = ::read(p[0], buf, sizeof(buf));
      if (got <= 0) break;
      text.append(buf, static_cast<size_t>(got));
    } else if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
  }
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  {
    ::lseek(err_fd, 0, SEEK_SET);
    for (ssize_t got; (got = ::read(err_fd, buf, sizeof(buf))) > 0;)
      r.stderr_text.append(buf, static_cast<size_t>(got));
    ::close(err_fd);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (killed || r.exit_code == 124) {
    r.hung = true;
    r.signal = 0;
    r.exit_code = 0;
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.size() < 1) continue;
    const std::string rest = line.size() > 2 ? line.substr(2) : "";
    switch (line[0]) {
      case 'S': r.failures.push_back(rest); break;
      case 'V': r.violations.push_back(rest); break;
      case 'T': r.site = parse_addresses(rest); break;
      case 'H': r.hang_stack = parse_addresses(rest); break;
      case 'L': r.leaked = true; break;
      case 'W': r.where = rest; break;
      case 'X': r.terminate = rest; break;
      case 'E': r.ended = true; break;
      case 'P': {
        // points \t fired \t where
        const size_t t1 = rest.find('\t');
        const size_t t2 = rest.find('\t', t1 + 1);
        r.points = std::atoll(rest.substr(0, t1).c_str());
        r.fired = rest.substr(t1 + 1, t2 - t1 - 1) == "1";
        if (t2 != std::string::npos && t2 + 1 < rest.size()) r.where = rest.substr(t2 + 1);
        break;
      }
      default: break;
    }
  }
  if (r.hung) r.ended = false;
  if (r.exit_code == 3) r.exit_code = 0;                           // leaks: reported as such
  if (r.exit_code == 6 && !r.violations.empty()) r.exit_code = 0;  // abandoned, with the reason
  // Also when it died before reporting.
  if ((kind == Kind::Alloc && !r.site.empty()) || (kind == Kind::Package && !r.where.empty())) r.fired = true;
  return r;
}

// Template arguments collapsed: "std::vector<...>::push_back" reads better
// than three lines of nlohmann::basic_json parameters.
std::string shorten(const std::string& s) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const bool op = i >= 8 && s.compare(i - 8, 8, "operator") == 0;  // operator<, operator<<
    if (ch == '<' && !op) {
      if (depth++ == 0) out += "<...";
      continue;
    }
    if (ch == '>' && depth > 0 && !(i > 0 && s[i - 1] == '-')) {
      if (--depth == 0) out += '>';
      continue;
    }
    if (depth == 0) out += ch;
  }
  return out;
}

// "function(...) at file:line": templates and arguments collapsed.
std::string tidy(std::string line) {
  line = shorten(line);
  const size_t at = line.find(" at ");
  std::string fn = at == std::string::npos ? line : line.substr(0, at);
  for (size_t c; (c = fn.find(" [clone")) != std::string::npos;) {
    const size_t e = fn.find(']', c);
    fn.erase(c, e == std::string::npos ? std::string::npos : e - c + 1);
  }
  // The argument list is the last parenthesised group of what is left
  // (unless that is "(anonymous namespace)").
  const size_t close = fn.rfind(')');
  if (close != std::string::npos && close > 0) {
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      if (fn[i] == ')') ++depth;
      if (fn[i] == '(' && --depth == 0) {
        if (close > i + 1 && fn.compare(i, 20, "(anonymous namespace") != 0) fn.replace(i + 1, close - i - 1, "...");
        break;
      }
    }
  }
  const std::string root = std::string(AOTRUN_SOURCE_DIR) + "/";
  std::string where = at == std::string::npos ? "" : line.substr(at);
  for (size_t r; (r = where.find(root)) != std::string::npos;) where.erase(r, root.size());
  return fn + where;
}

bool ours(const std::string& line) {
  return line.find(" at cpp/") != std::string::npos || line.find(" at c_api/") != std::string::npos ||
         line.find(" at tests/reliability/packages/") != std::string::npos;
}

// The stack of `frames` as aotrun sees it: every aotrun source line (inlined
// ones included), the innermost library frame above them, ending at the
// test's own frame; the hook's frames are left out.
std::vector<std::string> symbolize(const std::vector<uintptr_t>& frames, size_t max_lines) {
  static std::map<std::pair<std::string, uintptr_t>, std::vector<std::string>> cache;
  std::vector<std::string> out;
  bool seen_ours = false;
  for (size_t i = 0; i < frames.size() && out.size() < max_lines; ++i) {
    Dl_info info{};
    const uintptr_t pc = frames[i] - (i > 0 ? 1 : 0);  // return address -> the call
    if (::dladdr(reinterpret_cast<void*>(pc), &info) == 0 || info.dli_fname == nullptr) continue;
    const std::string file = info.dli_fname;
    const uintptr_t off = pc - reinterpret_cast<uintptr_t>(info.dli_fbase);
    auto key = std::make_pair(file, off);
    auto hit = cache.find(key);
    if (hit == cache.end()) {
      char cmd[1024];
      std::snprintf(cmd, sizeof(cmd), "addr2line -C -f -i -p -e '%s' 0x%lx 2>/dev/null", file.c_str(),
                    static_cast<unsigned long>(off));
      std::vector<std::string> lines;  // innermost (inlined) first
      if (FILE* f = ::popen(cmd, "r")) {
        char b[4096];
        while (std::fgets(b, sizeof(b), f) != nullptr) {
          std::string l = b;
          while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) l.pop_back();
          if (l.rfind(" (inlined by) ", 0) == 0) l = l.substr(14);
          if (!l.empty() && l.find("??") != 0) lines.push_back(tidy(l));
        }
        ::pclose(f);
      }
      if (lines.empty()) {
        lines.push_back((info.dli_sname ? std::string(info.dli_sname) : std::string("??")) + " in " + file);
      }
      hit = cache.emplace(key, lines).first;
    }
    const std::vector<std::string>& lines = hit->second;
    bool test_frame = false, hook_frame = false, has_ours = false;
    for (const auto& l : lines) {
      if (l.find("fi_hook::") != std::string::npos || l.find("operator new") == 0 ||
          l.find("on_alarm") != std::string::npos || l.find("fi_release") == 0) {
        hook_frame = true;
      }
      if (l.find("fault_injection_test.cpp") != std::string::npos) test_frame = true;
      if (ours(l)) has_ours = true;
    }
    if (hook_frame && !has_ours) continue;
    if (test_frame && !has_ours) {
      for (const auto& l : lines) {
        if (l.find("fault_injection_test.cpp") != std::string::npos) {
          out.push_back("[test] " + l);
          break;
        }
      }
      break;
    }
    if (file.find("libc.so") != std::string::npos || file.find("libasan") != std::string::npos ||
        file.find("libubsan") != std::string::npos) {
      continue;
    }
    for (const auto& l : lines) {
      // Above aotrun's first frame, the library frame that failed; in that
      // frame, its whole inline chain (what aotrun called); below, aotrun.
      if (ours(l) || (!seen_ours && (has_ours || &l == &lines.front()))) out.push_back(l);
    }
    if (has_ours) seen_ours = true;
  }
  return out;
}

// Failures this suite found that are not fixed yet (issue #14). A bad N
// whose outcome and fault site match an entry is reported as KNOWN instead
// of failing the test. Entries match by the site's text, not by N: N moves
// whenever an allocation is added or removed anywhere before the site.
// Remove an entry together with its fix; an entry that matches nothing in a
// run is printed as no longer seen.
struct Known {
  const char* scenarios;  // comma-separated: sync, async, graph, caller_capture
  Kind kind;
  const char* outcome;   // prefix of ChildResult::outcome()
  const char* site;      // text of the fault site, the package's fault point or a violation
  bool leak_check_only;  // only visible where LeakSanitizer runs
  const char* why;
};

const std::vector<Known>& known_failures() {
  // Empty: every failure this suite found has been fixed (RELIABILITY.md,
  // F19-F24). A new one gets an entry here only with a reason and an issue.
  static const std::vector<Known> k = {};
  return k;
}

bool applies(const Known& k, const char* scenario, Kind kind) {
  if (k.kind != kind) return false;
  const std::string list = std::string(",") + k.scenarios + ",";
  return list.find(std::string(",") + scenario + ",") != std::string::npos;
}

struct Timing {
  int timeout_s;    // at least
  size_t dense;     // every N up to here
  size_t max_runs;  // then stride so that the scenario takes about this many runs
};

Timing timing() {
  // A scenario takes milliseconds (tens under ASan, whose leak check runs in
  // every child): a child still running after 50 times the unarmed run, and
  // at least this many seconds, is hung.
  return FI_ASAN ? Timing{6, 250, 400} : Timing{2, 400, 700};
}

void explore(const char* name, Kind kind, ScenarioFn fn) {
  ASSERT_NE(g_fixture, nullptr);
  ASSERT_TRUE(g_fixture->error.empty()) << g_fixture->error;
  const Timing tm = timing();
  const std::string scenario = std::string(kind_name(kind)) + "/" + name;

  // AOTRUN_FI_N=<n>: only that N, in a single fork (for a debugger:
  // gdb -ex 'set follow-fork-mode child' ...), with its full report.
  if (const char* only = std::getenv("AOTRUN_FI_N")) {
    // AOTRUN_FI_NOFORK=1: in this process, reporting on stdout (for gdb).
    if (std::getenv("AOTRUN_FI_NOFORK") != nullptr) child_main(fn, kind, std::atoll(only), 1, 2, 3600);
    ChildResult r = run_child(fn, kind, std::atoll(only), tm.timeout_s);
    std::printf("%s N=%s: %s, fired %d, points %lld, where '%s'\n%s\n", scenario.c_str(), only, r.outcome().c_str(),
                r.fired ? 1 : 0, r.points, r.where.c_str(), r.terminate.c_str());
    for (const auto& f : r.failures) std::printf("  step failed: %s\n", f.c_str());
    for (const auto& v : r.violations) std::printf("  violation: %s\n", v.c_str());
    for (const auto& l : symbolize(r.site, 30)) std::printf("  site: %s\n", l.c_str());
    for (const auto& l : symbolize(r.hang_stack, 30)) std::printf("  hang: %s\n", l.c_str());
    std::printf("%s\n", r.stderr_text.c_str());
    return;
  }
  // The scenario unarmed: it must pass, and it tells how many points it has.
  ChildResult base = run_child(fn, kind, 0, 5 * tm.timeout_s);
  ASSERT_FALSE(base.bad()) << scenario << " fails without any fault: " << base.outcome() << "\n  "
                           << (base.violations.empty() ? "" : base.violations[0]);
  ASSERT_FALSE(base.fired);
  ASSERT_GT(base.points, 0) << "the scenario passes no fault point: the " << kind_name(kind) << " hook sees nothing";
  const int timeout_s = std::max(tm.timeout_s, static_cast<int>(base.seconds * 50) + 1);
  const long long total = base.points;
  const long long dense = static_cast<long long>(tm.dense);
  const long long stride =
      total <= dense ? 1 : std::max<long long>(1, (total - dense) / std::max<long long>(1, tm.max_runs - dense));

  long long n = 1;
  long long reached = 0;
  size_t runs = 0, fired_runs = 0;
  struct Seen {
    int count = 0;
    long long first_n = 0;
    std::string example;
  };
  std::map<std::string, Seen> seen;  // "step -> CODE"
  // Failures grouped by what they look like: one example, and every N.
  struct Group {
    std::string example;
    std::vector<long long> ns;
  };
  std::map<std::string, Group> problems;
  std::map<size_t, std::vector<long long>> known_hits;  // entry -> N
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    ChildResult r = run_child(fn, kind, n, timeout_s);
    ++runs;
    if (r.fired) ++fired_runs;
    for (const auto& f : r.failures) {
      const size_t t1 = f.find('\t');
      const size_t t2 = f.find('\t', t1 + 1);
      const std::string key = f.substr(0, t1) + " -> " + f.substr(t1 + 1, t2 - t1 - 1);
      Seen& e = seen[key];
      if (e.count++ == 0) {
        e.first_n = n;
        e.example = f.substr(t2 + 1);
      }
    }
    if (r.bad()) {
      std::vector<std::string> site = symbolize(r.site, 14);
      std::string site_text = r.where;
      for (const auto& s : site) site_text += "\n" + s;
      // One group per symptom: the first violation (without its numbers)
      // or, for crashes, hangs and leaks, the top of the fault site.
      std::string signature = r.outcome() + "|" + r.where + "|" + r.terminate;
      if (!r.violations.empty()) {
        for (char ch : r.violations[0].substr(0, 80)) signature += (ch >= '0' && ch <= '9') ? '#' : ch;
      } else {
        for (size_t i = 0; i < site.size() && i < 4; ++i) signature += "|" + site[i];
      }
      std::string text = r.outcome();
      if (!r.terminate.empty()) text += "\n    " + r.terminate;
      for (size_t i = 0; i < r.violations.size() && i < 6; ++i) text += "\n    " + r.violations[i];
      if (kind == Kind::Package) text += "\n    injected at package fault point: " + r.where;
      if (!site.empty()) {
        text += "\n    injected allocation:";
        for (const auto& s : site) text += "\n      " + s;
      }
      if (r.hung) {
        text += "\n    main thread at the watchdog:";
        for (const auto& s : symbolize(r.hang_stack, 10)) text += "\n      " + s;
      }
      // The sanitizer's or the runtime's own words, shortened.
      if (!r.stderr_text.empty()) {
        text += "\n    child stderr:";
        size_t pos = 0;
        int lines = 0;
        while (pos < r.stderr_text.size() && lines < 24) {
          size_t end = r.stderr_text.find('\n', pos);
          if (end == std::string::npos) end = r.stderr_text.size();
          const std::string l = r.stderr_text.substr(pos, end - pos);
          pos = end + 1;
          if (l.empty() || l.find("==WARNING") != std::string::npos) continue;
          text += "\n      " + l.substr(0, 200);
          ++lines;
        }
      }
      bool is_known = false;
      for (size_t i = 0; i < known_failures().size(); ++i) {
        const Known& k = known_failures()[i];
        if (!applies(k, name, kind) || r.outcome().rfind(k.outcome, 0) != 0) continue;
        std::string hay = site_text;
        for (const auto& v : r.violations) hay += "\n" + v;
        if (hay.find(k.site) == std::string::npos) continue;
        is_known = true;
        known_hits[i].push_back(n);
        break;
      }
      if (!is_known) {
        Group& g = problems[signature];
        if (g.ns.empty()) g.example = text;
        g.ns.push_back(n);
      }
    }
    if (!r.fired && !r.bad()) {
      reached = n;
      break;
    }
    if (!r.fired && r.bad() && r.site.empty() && r.where.empty() && r.points >= 0 && r.points < n) {
      reached = n;  // went wrong, but not because of the fault: nothing further to learn
      break;
    }
    n += n < dense ? 1 : stride;
    if (n > 4 * total + 1000) {
      problems["runaway"].example =
          "fault still firing far beyond the " + std::to_string(total) + " points of an unarmed run";
      problems["runaway"].ns.push_back(n);
      break;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::printf("[fault-injection] %s: %lld points unarmed; N = 1..%lld%s, %zu runs (%zu fired), %.1f s\n",
              scenario.c_str(), total, reached,
              stride > 1
                  ? (" (every N to " + std::to_string(dense) + ", then every " + std::to_string(stride) + ")").c_str()
                  : "",
              runs, fired_runs, secs);
  for (const auto& [key, e] : seen) {
    std::printf("[fault-injection]   %-52s x%-4d first N=%-4lld e.g. %.150s\n", key.c_str(), e.count, e.first_n,
                e.example.c_str());
  }
  for (size_t i = 0; i < known_failures().size(); ++i) {
    const Known& k = known_failures()[i];
    if (!applies(k, name, kind) || (k.leak_check_only && !FI_ASAN)) continue;
    auto hit = known_hits.find(i);
    if (hit == known_hits.end()) {
      std::printf("[fault-injection]   known failure no longer seen (fixed? remove its entry): %s\n", k.why);
      continue;
    }
    std::string ns;
    for (size_t j = 0; j < hit->second.size() && j < 12; ++j) ns += (j ? "," : "") + std::to_string(hit->second[j]);
    if (hit->second.size() > 12) ns += ",...";
    std::printf("[fault-injection]   KNOWN (N=%s): %s\n", ns.c_str(), k.why);
  }
  std::fflush(stdout);
  std::string all;
  for (const auto& [sig, g] : problems) {
    all += "\n" + scenario + " N=";
    for (size_t i = 0; i < g.ns.size() && i < 20; ++i) all += (i ? "," : "") + std::to_string(g.ns[i]);
    if (g.ns.size() > 20) all += ",... (" + std::to_string(g.ns.size()) + " N in all)";
    all += ": " + g.example + "\n";
  }
  EXPECT_TRUE(problems.empty()) << problems.size() << " kind(s) of failure in " << scenario << ":\n" << all;
}

class FaultInjection : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    void* prime[4];
    backtrace(prime, 4);  // loads the unwinder now, not inside a failing allocation
    g_fixture = new Fixture();
  }
  static void TearDownTestSuite() {
    delete g_fixture;
    g_fixture = nullptr;
  }
};

// The hook must see libaotrun's own allocations (not only the test's): count
// them during calls into the library, and fail one inside it.
TEST_F(FaultInjection, HookSeesLibaotrunAllocations) {
  ASSERT_TRUE(g_fixture->error.empty()) << g_fixture->error;
  aotrun_package* pkg = nullptr;
  fi_hook::arm(LLONG_MAX);
  aotrun_status* s = aotrun_package_open(g_fixture->dir.c_str(), nullptr, &pkg);
  fi_hook::disarm();
  const long long in_open = fi_hook::count.load();
  ASSERT_EQ(s, nullptr) << aotrun_test::describe(s);
  EXPECT_GT(in_open, 10) << "aotrun_package_open made no allocation the hook saw";
  std::printf("[fault-injection] allocations seen during aotrun_package_open: %lld\n", in_open);

  // One allocation inside libaotrun (new aotrun_runner_options), failed.
  aotrun_runner_options* o = reinterpret_cast<aotrun_runner_options*>(0x10);
  fi_hook::arm(1);
  s = aotrun_runner_options_create(&o);
  fi_hook::disarm();
  EXPECT_TRUE(fi_hook::fired.load());
  EXPECT_EQ(aotrun_status_code(s), AOTRUN_ERR_OUT_OF_MEMORY) << aotrun_test::describe(s);
  aotrun_status_free(s);
  EXPECT_EQ(o, reinterpret_cast<aotrun_runner_options*>(0x10));

  // And the allocation that failed was made from libaotrun's code.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  fi_hook::site_fd = p[1];
  fi_hook::arm(1);
  s = aotrun_runner_options_create(&o);
  fi_hook::disarm();
  fi_hook::site_fd = -1;
  aotrun_status_free(s);
  ::close(p[1]);
  std::string text;
  char buf[2048];
  for (ssize_t got; (got = ::read(p[0], buf, sizeof(buf))) > 0;) text.append(buf, static_cast<size_t>(got));
  ::close(p[0]);
  ASSERT_GT(text.size(), 2u);
  bool from_lib = false;
  for (uintptr_t a : parse_addresses(text.substr(2, text.find('\n') - 2))) {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(a), &info) != 0 && info.dli_fname != nullptr &&
        std::strstr(info.dli_fname, "libaotrun.so") != nullptr) {
      from_lib = true;
    }
  }
  EXPECT_TRUE(from_lib) << "the failed allocation has no libaotrun frame on its stack";
  aotrun_package_close(pkg);
}

// The package's fault control works: its first fault point is the metadata
// container's creation at open.
TEST_F(FaultInjection, PackageFaultPointsAreArmable) {
  ASSERT_TRUE(g_fixture->error.empty()) << g_fixture->error;
  aotrun_package* pkg = nullptr;
  g_fixture->ctl.arm(1);
  aotrun_test::Outcome o = aotrun_test::outcome(aotrun_package_open(g_fixture->dir.c_str(), nullptr, &pkg));
  g_fixture->ctl.arm(0);
  EXPECT_EQ(o.code, AOTRUN_ERR_PACKAGE) << o.message;
  EXPECT_NE(o.message.find("injected failure at fault point 1 (container_create)"), std::string::npos) << o.message;
  EXPECT_EQ(pkg, nullptr);
}

TEST_F(FaultInjection, AllocSync) { explore("sync", Kind::Alloc, &scenario_sync); }
TEST_F(FaultInjection, AllocAsync) { explore("async", Kind::Alloc, &scenario_async); }
TEST_F(FaultInjection, AllocGraph) { explore("graph", Kind::Alloc, &scenario_graph); }
TEST_F(FaultInjection, AllocCallerCapture) { explore("caller_capture", Kind::Alloc, &scenario_caller_capture); }
TEST_F(FaultInjection, PackageSync) { explore("sync", Kind::Package, &scenario_sync); }
TEST_F(FaultInjection, PackageAsync) { explore("async", Kind::Package, &scenario_async); }
TEST_F(FaultInjection, PackageGraph) { explore("graph", Kind::Package, &scenario_graph); }
TEST_F(FaultInjection, PackageCallerCapture) { explore("caller_capture", Kind::Package, &scenario_caller_capture); }

}  // namespace
