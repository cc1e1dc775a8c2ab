#include "bench_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "error.h"
#include "outputs.h"
#include "tensor.h"

namespace aotrun_cli {

namespace {

using Clock = std::chrono::steady_clock;

// One caller thread's buffers and results. Aligned so that the `done`
// counters the progress line reads do not share cache lines between threads.
struct alignas(64) Worker {
  std::vector<HostTensor> outputs;
  std::vector<DLTensor> output_views;
  std::vector<uint64_t> latencies;
  std::atomic<uint64_t> done{0};
  Clock::time_point end;
};

// State shared by the caller threads and the coordinating thread.
struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  int ready = 0;
  int finished = 0;
  bool go = false;
  std::atomic<bool> stop{false};
  aotrun_status* error = nullptr;  // first failure; guarded by mu

  void fail(aotrun_status* status) {
    std::lock_guard<std::mutex> lock(mu);
    if (error == nullptr) {
      error = status;
    } else {
      aotrun_status_free(status);
    }
    stop.store(true);
  }
};

void worker_main(aotrun_runner* runner, const std::vector<DLTensor>& inputs, Worker& w,
                 Shared& shared, const LoopConfig& config) {
  auto call = [&] {
    return aotrun_runner_run(runner, inputs.data(), inputs.size(), w.output_views.data(),
                             w.output_views.size());
  };
  for (int i = 0; i < config.warmup && !shared.stop.load(std::memory_order_relaxed); ++i) {
    if (aotrun_status* status = call()) {
      shared.fail(status);
      break;
    }
  }
  {
    std::unique_lock<std::mutex> lock(shared.mu);
    ++shared.ready;
    shared.cv.notify_all();
    shared.cv.wait(lock, [&] { return shared.go; });
  }
  uint64_t n = 0;
  const uint64_t limit = config.iters.value_or(UINT64_MAX);
  while (n < limit && !shared.stop.load(std::memory_order_relaxed)) {
    const auto t0 = Clock::now();
    aotrun_status* status = call();
    const auto t1 = Clock::now();
    if (status != nullptr) {
      shared.fail(status);
      break;
    }
    w.latencies.push_back(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    w.done.store(++n, std::memory_order_relaxed);
  }
  w.end = Clock::now();
  std::lock_guard<std::mutex> lock(shared.mu);
  ++shared.finished;
  shared.cv.notify_all();
}

void draw_progress(const std::vector<std::unique_ptr<Worker>>& workers, const LoopConfig& config,
                   double elapsed_s) {
  uint64_t done = 0;
  for (const auto& w : workers) done += w->done.load(std::memory_order_relaxed);
  char line[160];
  if (config.iters) {
    const uint64_t total = *config.iters * workers.size();
    std::snprintf(line, sizeof(line), "\rbench: %llu/%llu calls, %.1f s\033[K",
                  static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                  elapsed_s);
  } else {
    std::snprintf(line, sizeof(line), "\rbench: %.1f/%.1f s, %llu calls\033[K", elapsed_s,
                  config.duration_s, static_cast<unsigned long long>(done));
  }
  std::fputs(line, stderr);
  std::fflush(stderr);
}

}  // namespace

LoopResult run_loop(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                    const std::vector<TensorSpec>& output_specs, const LoopConfig& config) {
  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < config.threads; ++t) {
    auto w = std::make_unique<Worker>();
    w->outputs = allocate_outputs(runner, inputs, output_specs);
    for (HostTensor& out : w->outputs) w->output_views.push_back(out.view());
    // Reserve up front so the measured loop rarely reallocates.
    w->latencies.reserve(config.iters ? static_cast<size_t>(std::min<uint64_t>(*config.iters, 1u << 20))
                                      : size_t{1} << 16);
    workers.push_back(std::move(w));
  }

  Shared shared;
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back(worker_main, runner, std::cref(inputs), std::ref(*w), std::ref(shared),
                         std::cref(config));
  }

  Clock::time_point start;
  bool drew = false;
  {
    std::unique_lock<std::mutex> lock(shared.mu);
    shared.cv.wait(lock, [&] { return shared.ready == config.threads; });
    start = Clock::now();
    shared.go = true;
    shared.cv.notify_all();
    const auto deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config.duration_s));
    while (shared.finished < config.threads) {
      auto wake = Clock::now() + std::chrono::milliseconds(200);
      // Once stopped, the deadline is in the past: waiting on it would spin.
      if (!config.iters && !shared.stop.load()) wake = std::min(wake, deadline);
      shared.cv.wait_until(lock, wake, [&] { return shared.finished == config.threads; });
      const auto now = Clock::now();
      if (!config.iters && now >= deadline) shared.stop.store(true);
      const double elapsed = std::chrono::duration<double>(now - start).count();
      // Short runs draw nothing (a flash of text helps no one), and nothing is
      // redrawn while the threads finish their last call.
      if (config.progress && elapsed > 1.0 && !shared.stop.load() &&
          shared.finished < config.threads) {
        lock.unlock();
        draw_progress(workers, config, elapsed);
        drew = true;
        lock.lock();
      }
    }
  }
  for (std::thread& t : threads) t.join();
  if (drew) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  if (shared.error != nullptr) check(shared.error, "benchmark call failed");

  LoopResult result;
  Clock::time_point end = start;
  size_t total = 0;
  for (const auto& w : workers) {
    end = std::max(end, w->end);
    total += w->latencies.size();
  }
  result.latencies_ns.reserve(total);
  for (const auto& w : workers) {
    result.latencies_ns.insert(result.latencies_ns.end(), w->latencies.begin(), w->latencies.end());
  }
  std::sort(result.latencies_ns.begin(), result.latencies_ns.end());
  result.wall_ns = std::chrono::duration<double, std::nano>(end - start).count();
  return result;
}

Percentiles percentiles(const std::vector<uint64_t>& sorted) {
  Percentiles p;
  if (sorted.empty()) return p;
  auto rank = [&](double q) {
    // Nearest rank: the smallest value with at least q of the calls at or below it.
    size_t idx = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[idx == 0 ? 0 : std::min(idx, sorted.size()) - 1];
  };
  p.min = sorted.front();
  p.max = sorted.back();
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  double sum = 0;
  for (uint64_t v : sorted) sum += static_cast<double>(v);
  p.mean = sum / static_cast<double>(sorted.size());
  return p;
}

}  // namespace aotrun_cli
