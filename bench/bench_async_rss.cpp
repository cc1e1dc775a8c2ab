// bench_async_rss: memory of a program that submits runs faster than they
// complete. 100,000 run_async submissions on the counting package with
// x = y = float32 [65536, 4] (1 MiB each); every submission mallocs its own
// output (filled with a NaN pattern so the completion check sees the model
// wrote it), and the event's callback checks and frees it. Peak and current
// RSS are sampled from /proc/self/status every --sample-every submissions.
//
// Each run spins AOTRUN_TEST_SPIN_US = 25 us first, so the worker is slower
// than the submitter. With a bounded window (max_inflight 4) the submitter
// blocks, at most 4 outputs wait and RSS stays flat; with an "unbounded" window (65536) every
// submission holds 1 MiB until the worker reaches it, so RSS grows with the
// backlog. The unbounded run stops at --cap-mib above its starting RSS
// (default 1024) so it cannot exhaust this shared machine.
//
// Prints markdown tables (docs/PERFORMANCE.md pastes them). Exit status 1 if
// any run failed or produced a wrong output; the memory verdict is printed,
// not enforced.
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/aotrun_util.hpp"

namespace {

using aotrun_bench::check;

constexpr int64_t kRows = 65536;  // [65536, 4] float32 = 1 MiB
constexpr int64_t kCols = 4;
constexpr size_t kBytes = kRows * kCols * sizeof(float);

struct Options {
  int64_t submissions = 100000;
  int64_t sample_every = 250;
  int64_t cap_mib = 1024;
};

struct Memory {
  double rss_mib = 0, hwm_mib = 0;
};

Memory read_memory() {
  Memory m;
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    double kib = 0;
    if (key == "VmRSS:" && in >> kib)
      m.rss_mib = kib / 1024;
    else if (key == "VmHWM:" && in >> kib)
      m.hwm_mib = kib / 1024;
    in.ignore(1 << 20, '\n');
  }
  return m;
}

// Starts a fresh peak (VmHWM) for the next phase; Linux >= 4.0.
void reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

std::atomic<int64_t> g_completed{0};
std::atomic<int64_t> g_failed{0};
std::atomic<int64_t> g_wrong{0};
const float* g_x = nullptr;

// Completion: check y = x + 1 at both ends, then free the output.
void on_complete(void* user_data, aotrun_code code, const char* message) {
  auto* y = static_cast<float*>(user_data);
  if (code != AOTRUN_OK) {
    if (g_failed.fetch_add(1) == 0) std::fprintf(stderr, "run failed: %s: %s\n", aotrun_code_name(code), message);
  } else if (y[0] != g_x[0] + 1.0f || y[kRows * kCols - 1] != g_x[kRows * kCols - 1] + 1.0f) {
    g_wrong.fetch_add(1);
  }
  std::free(y);
  g_completed.fetch_add(1);
}

struct Sample {
  int64_t submitted;
  int64_t backlog;  // submitted - completed
  Memory mem;
};

struct PhaseResult {
  std::string name;
  int32_t max_inflight;
  std::vector<Sample> samples;
  int64_t submitted = 0;
  bool capped = false;
  double seconds = 0;
  uint64_t peak_inflight = 0;
  Memory start, end;
};

PhaseResult run_phase(const aotrun_bench::Package& pkg, const char* name, int32_t max_inflight, const Options& opt,
                      DLTensor x) {
  malloc_trim(0);  // return what the previous phase freed: start from the same heap
  reset_peak_rss();
  PhaseResult r;
  r.name = name;
  r.max_inflight = max_inflight;
  aotrun_bench::RunnerConfig config;
  config.max_inflight = max_inflight;
  aotrun_bench::Runner runner = aotrun_bench::make_runner(pkg, config);
  g_completed = 0;
  r.start = read_memory();

  int64_t shape[2] = {kRows, kCols};
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 1; i <= opt.submissions; ++i) {
    auto* y = static_cast<float*>(std::malloc(kBytes));
    if (y == nullptr) {
      std::fprintf(stderr, "%s: malloc(1 MiB) failed at submission %lld\n", name, static_cast<long long>(i));
      break;
    }
    std::memset(y, 0xFF, kBytes);  // NaN pattern
    DLTensor out = aotrun_bench::float_tensor(y, shape);
    aotrun_event* ev = nullptr;
    aotrun_status* st = aotrun_runner_run_async(runner.get(), &x, 1, &out, 1, &ev);
    if (st != nullptr) {
      std::free(y);
      check(st, std::string(name) + ": aotrun_runner_run_async");
    }
    // The callback fires exactly once even though the handle is freed at
    // the end of this iteration.
    const aotrun::cxx::Event event(ev);
    check(aotrun_event_set_callback(ev, on_complete, y), "aotrun_event_set_callback");
    r.submitted = i;
    if (i % opt.sample_every == 0 || i == opt.submissions) {
      const Memory m = read_memory();
      r.samples.push_back({i, i - g_completed.load(), m});
      if (m.rss_mib - r.start.rss_mib > static_cast<double>(opt.cap_mib)) {
        r.capped = true;
        break;
      }
    }
  }
  check(aotrun_runner_wait_all(runner.get()), "aotrun_runner_wait_all");
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_inflight = runner.stats().peak_inflight;
  runner.reset();
  r.end = read_memory();
  return r;
}

// Rows at 1-2-5 steps of submissions plus the last sample: a short table
// that still shows the trend.
bool report_row(int64_t submitted) {
  for (int64_t p = 1; p <= 100000000; p *= 10) {
    if (submitted == p || submitted == 2 * p || submitted == 5 * p) return true;
  }
  return false;
}

void print_phase(const PhaseResult& r) {
  std::printf("\n%s (max_inflight %d): %lld submissions in %.1f s, peak in flight %llu%s\n\n", r.name.c_str(),
              r.max_inflight, static_cast<long long>(r.submitted), r.seconds,
              static_cast<unsigned long long>(r.peak_inflight), r.capped ? " — stopped at the RSS safety cap" : "");
  std::printf("| submitted | backlog | VmRSS MiB | VmHWM MiB |\n|---:|---:|---:|---:|\n");
  std::printf("| 0 | 0 | %.0f | %.0f |\n", r.start.rss_mib, r.start.hwm_mib);
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const Sample& s = r.samples[i];
    if (!report_row(s.submitted) && i + 1 != r.samples.size()) continue;
    std::printf("| %lld | %lld | %.0f | %.0f |\n", static_cast<long long>(s.submitted),
                static_cast<long long>(s.backlog), s.mem.rss_mib, s.mem.hwm_mib);
  }
  std::printf("| drained | 0 | %.0f | %.0f |\n", r.end.rss_mib, r.end.hwm_mib);
}

// Peak RSS (VmHWM) at the end relative to the peak at the end of warm-up
// (the first tenth of the submissions, at least one sample). The peak, not
// the current RSS: the heap breathes by the window's few MiB between samples.
double growth_after_warmup(const PhaseResult& r) {
  if (r.samples.empty()) return 0;
  const int64_t warm = std::max<int64_t>(r.samples.front().submitted, r.submitted / 10);
  double base = 0;
  for (const Sample& s : r.samples) {
    if (s.submitted <= warm) base = s.mem.hwm_mib;
  }
  return base > 0 ? r.samples.back().mem.hwm_mib / base : 0;
}

bool parse_args(int argc, char** argv, Options* opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int64_t* out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0) return false;
      *out = v;
      return true;
    };
    bool good = false;
    if (a == "--submissions")
      good = value(&opt->submissions);
    else if (a == "--sample-every")
      good = value(&opt->sample_every);
    else if (a == "--cap-mib")
      good = value(&opt->cap_mib);
    if (!good) {
      std::fprintf(stderr,
                   "usage: %s [--submissions N (100000)] [--sample-every K (250)] [--cap-mib M (1024)]\n"
                   "bad or unknown argument '%s'\n",
                   argv[0], a.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse_args(argc, argv, &opt)) return 2;
  // Each run spins 25 us before its y = x + 1 pass over 1 MiB, so the worker
  // is slower than the submitter (as in a real overload); keep a caller's value.
  ::setenv("AOTRUN_TEST_SPIN_US", "25", 0);
  // Serve the 1 MiB buffers from the heap and keep freed ones for reuse:
  // with glibc's dynamic thresholds the heap top is trimmed and faulted in
  // again around every submission (~250 us of page faults each in this VM),
  // and RSS would measure that churn rather than the buffers alive.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  try {
    const aotrun_bench::Package pkg = aotrun_bench::open_package("counting");
    std::vector<float> x_data(kRows * kCols);
    for (size_t i = 0; i < x_data.size(); ++i) x_data[i] = static_cast<float>(i % 7);
    g_x = x_data.data();
    int64_t shape[2] = {kRows, kCols};
    const DLTensor x = aotrun_bench::float_tensor(x_data.data(), shape);

    std::printf(
        "bench_async_rss: counting package, output 1 MiB per submission, AOTRUN_TEST_SPIN_US=%s, "
        "sample every %lld, unbounded cap %lld MiB\n",
        std::getenv("AOTRUN_TEST_SPIN_US"), static_cast<long long>(opt.sample_every),
        static_cast<long long>(opt.cap_mib));
    const PhaseResult bounded = run_phase(pkg, "bounded", 4, opt, x);
    const PhaseResult unbounded = run_phase(pkg, "unbounded", 65536, opt, x);
    print_phase(bounded);
    print_phase(unbounded);

    const double bg = growth_after_warmup(bounded);
    const double ug = growth_after_warmup(unbounded);
    const double u_peak = unbounded.samples.empty() ? 0 : unbounded.samples.back().mem.hwm_mib;
    std::printf("\nbounded: peak RSS at the end / peak RSS after warm-up = %.3f (%s: flat means <= 1.10)\n", bg,
                bg <= 1.10 ? "flat" : "NOT flat");
    std::printf("unbounded: peak RSS %.0f MiB vs %.0f MiB at start (x%.1f)%s; growth after warm-up %.2f\n", u_peak,
                unbounded.start.rss_mib, unbounded.start.rss_mib > 0 ? u_peak / unbounded.start.rss_mib : 0,
                unbounded.capped ? ", stopped at the cap" : "", ug);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_async_rss: %s\n", e.what());
    return 1;
  }
  const int64_t failed = g_failed.load(), wrong = g_wrong.load();
  if (failed != 0 || wrong != 0) {
    std::fprintf(stderr, "bench_async_rss: %lld runs failed, %lld outputs wrong\n", static_cast<long long>(failed),
                 static_cast<long long>(wrong));
    return 1;
  }
  return 0;
}
