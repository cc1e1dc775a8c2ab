#include "bench_loop.hpp"

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

#include "error.hpp"
#include "inputs.hpp"
#include "outputs.hpp"
#include "tensor.hpp"

namespace aotrun::cli {

namespace {

// One caller thread's work and results. Aligned so that the `done`
// counters the progress line reads do not share cache lines between threads.
struct alignas(64) Worker {
  std::unique_ptr<CallerWork> work;
  std::vector<uint64_t> latencies;
  std::atomic<uint64_t> done{0};
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

  // Takes `status` (NULL: nothing happened); returns whether it failed.
  bool fail(aotrun_status* status) {
    if (status == nullptr) return false;
    std::lock_guard<std::mutex> lock(mu);
    if (error == nullptr) {
      error = status;
    } else {
      aotrun_status_free(status);
    }
    stop.store(true);
    return true;
  }
};

void worker_main(Worker& w, Shared& shared, const LoopConfig& config) {
  bool failed = !shared.stop.load() && shared.fail(w.work->warm_up(config.warmup));
  {
    std::unique_lock<std::mutex> lock(shared.mu);
    ++shared.ready;
    shared.cv.notify_all();
    shared.cv.wait(lock, [&] { return shared.go; });
  }
  uint64_t started = 0;
  const uint64_t limit = config.iters.value_or(UINT64_MAX);
  while (!failed && started < limit && !shared.stop.load(std::memory_order_relaxed)) {
    failed = shared.fail(w.work->start_run(w.latencies));
    ++started;
    w.done.store(w.latencies.size(), std::memory_order_relaxed);
  }
  // Always: outstanding asynchronous runs still write into this thread's
  // buffers, so they must complete before the buffers go away.
  shared.fail(w.work->finish(w.latencies));
  w.done.store(w.latencies.size(), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(shared.mu);
  ++shared.finished;
  shared.cv.notify_all();
}

// Synchronous runs: the latency is the duration of aotrun_runner_run.
class SyncWork : public CallerWork {
 public:
  SyncWork(aotrun_runner* runner, const std::vector<DLTensor>& inputs, const std::vector<TensorSpec>& output_specs)
      : runner_(runner),
        inputs_(inputs),
        outputs_(allocate_outputs(runner, inputs, output_specs)),
        output_views_(views(outputs_)) {}

  aotrun_status* warm_up(int runs) override {
    for (int i = 0; i < runs; ++i) {
      if (aotrun_status* status = call()) return status;
    }
    return nullptr;
  }

  aotrun_status* start_run(std::vector<uint64_t>& latencies) override {
    const auto t0 = Clock::now();
    aotrun_status* status = call();
    const auto t1 = Clock::now();
    if (status != nullptr) return status;
    latencies.push_back(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    last_ = t1;
    return nullptr;
  }

  aotrun_status* finish(std::vector<uint64_t>&) override { return nullptr; }
  Clock::time_point last_completion() const override { return last_; }

 private:
  aotrun_status* call() {
    return aotrun_runner_run(runner_, inputs_.data(), inputs_.size(), output_views_.data(), output_views_.size());
  }

  aotrun_runner* runner_;
  const std::vector<DLTensor>& inputs_;
  std::vector<HostTensor> outputs_;
  std::vector<DLTensor> output_views_;
  Clock::time_point last_{};
};

void draw_progress(const std::vector<std::unique_ptr<Worker>>& workers, const LoopConfig& config, double elapsed_s) {
  uint64_t done = 0;
  for (const auto& w : workers) done += w->done.load(std::memory_order_relaxed);
  char line[160];
  if (config.iters) {
    const uint64_t total = *config.iters * workers.size();
    std::snprintf(line, sizeof(line), "\rbench: %llu/%llu calls, %.1f s\033[K", static_cast<unsigned long long>(done),
                  static_cast<unsigned long long>(total), elapsed_s);
  } else {
    std::snprintf(line, sizeof(line), "\rbench: %.1f/%.1f s, %llu calls\033[K", elapsed_s, config.duration_s,
                  static_cast<unsigned long long>(done));
  }
  std::fputs(line, stderr);
  std::fflush(stderr);
}

}  // namespace

std::unique_ptr<CallerWork> make_sync_work(aotrun_runner* runner, const std::vector<DLTensor>& inputs,
                                           const std::vector<TensorSpec>& output_specs) {
  return std::make_unique<SyncWork>(runner, inputs, output_specs);
}

LoopResult run_loop(const WorkFactory& make_work, const LoopConfig& config) {
  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < config.threads; ++t) {
    auto w = std::make_unique<Worker>();
    w->work = make_work(t);
    // Reserve up front so the measured loop rarely reallocates.
    w->latencies.reserve(config.iters ? static_cast<size_t>(std::min<uint64_t>(*config.iters, 1u << 20))
                                      : size_t{1} << 16);
    workers.push_back(std::move(w));
  }

  Shared shared;
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back(worker_main, std::ref(*w), std::ref(shared), std::cref(config));
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
      if (config.progress && elapsed > 1.0 && !shared.stop.load() && shared.finished < config.threads) {
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
    end = std::max(end, w->work->last_completion());
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

}  // namespace aotrun::cli
