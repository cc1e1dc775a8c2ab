// Counters of one runner, updated lock-free on the hot path and read as a
// snapshot through the C API.
#pragma once

#include <atomic>
#include <cstdint>

namespace aotrun {

struct RunnerCounters {
  std::atomic<uint64_t> runs{0}, failures{0}, fallback_runs{0};
  // Graph mode.
  std::atomic<uint64_t> captures{0}, replays{0}, warmups{0}, capture_ns{0};
  std::atomic<uint64_t> eager_cache_full{0}, eager_frozen{0}, eager_capture_failed{0}, eager_caller_capturing{0};
  std::atomic<uint64_t> graph_pool_bytes{0}, graphs_cached{0};
  // Asynchronous runs.
  std::atomic<uint64_t> inflight{0}, peak_inflight{0}, async_submitted{0}, async_completed{0}, async_failed{0};
  std::atomic<uint64_t> submit_blocked_ns{0}, would_block{0};
  // Constants (weights): updates installed, swaps, the active and inactive
  // sets' generations (written by the writers, under their mutex).
  static constexpr uint64_t kNoSet = UINT64_MAX;
  std::atomic<uint64_t> constant_updates{0}, constant_swaps{0}, constant_generation{0};
  std::atomic<uint64_t> inactive_generation{kNoSet};
  std::atomic<uint64_t> graph_recaptures{0};  // captures of sets made by updates

  static void add(std::atomic<uint64_t>& c, uint64_t v = 1) { c.fetch_add(v, std::memory_order_relaxed); }
  // For a counter whose every writer holds one lock (runs, in the serial
  // modes): a load and a store, no read-modify-write. Readers without the
  // lock still see whole values.
  static void add_serialized(std::atomic<uint64_t>& c, uint64_t v = 1) {
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
};

}  // namespace aotrun
