// The two constant sets of a runner (active and inactive) and the protocol
// that lets runs use the active one without a lock while another thread
// updates, swaps or frees constants.
//
// Runs announce which set they read, and check that it is still active
// (otherwise they retry on the new one). A swap flips the active index: runs
// already announced finish on the set they started with, later runs see the
// new set; no run ever sees a mix. Writers (update, swap, free) are
// serialised by a mutex and only wait where they must: replacing or freeing
// the inactive set waits until no run still uses it (the runs that started
// before the last swap).
//
// Two kinds of announcement. A Lease (runs of threaded mode, and whatever
// else may run concurrently) counts itself on the slot's reader count: two
// atomic read-modify-writes, like a shared_ptr copy. A SerialLease (runs
// under the runner's serial lock: single_threaded and graph modes, one at a
// time) stores the slot's index in one word with plain stores, and writers
// pay instead: an asymmetric fence (base/asymmetric_fence.hpp) before they
// read that word. Where the kernel offers no such fence, a SerialLease counts
// itself like a Lease.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "base/asymmetric_fence.hpp"
#include "runner/constants/constant_set.hpp"

namespace aotrun {

class ConstantSlots {
 public:
  // asymmetric: whether serial leases use the asymmetric protocol (tests
  // choose; a runner takes what the process offers).
  explicit ConstantSlots(std::unique_ptr<ConstantSet> initial, bool asymmetric = asymmetric_fences_available());
  // Every lease must have ended (the runner waits for its runs first).
  ~ConstantSlots();
  ConstantSlots(const ConstantSlots&) = delete;
  ConstantSlots& operator=(const ConstantSlots&) = delete;

  // Inline: every run takes one.
  class Lease {
   public:
    explicit Lease(ConstantSlots& slots)
        : slots_(slots), slot_(slots.enter_counted()), tls_(this_thread_lease()), outer_(*tls_) {
      set_ = slots_.sets_[slot_].get();
      *tls_ = &slots_;
    }
    ~Lease() {
      *tls_ = outer_;
      slots_.leave_counted(slot_);
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ConstantSet& set() const { return *set_; }

   private:
    ConstantSlots& slots_;
    int slot_;
    ConstantSet* set_;
    const ConstantSlots** tls_;   // this thread's innermost-lease slot (a lease never changes threads)
    const ConstantSlots* outer_;  // the lease this thread held before (another runner's)
  };

  // A lease for a run made under the runner's serial lock: at most one exists
  // at a time per ConstantSlots, and it never changes threads. Inline: every
  // run of a serial mode takes one.
  class SerialLease {
   public:
    explicit SerialLease(ConstantSlots& slots) : slots_(slots) {
      slots_.serial_owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
      if (slots_.asymmetric_) {
        for (;;) {
          slot_ = slots_.active_.load(std::memory_order_acquire);
          slots_.serial_slot_.store(slot_, std::memory_order_relaxed);
          // Pairs with the writer's heavy fence in drain(): either the writer
          // sees this slot, or this load sees the writer's swap.
          asymmetric_light_fence();
          if (slots_.active_.load(std::memory_order_acquire) == slot_) break;
        }
      } else {
        slot_ = slots_.enter_counted();
      }
      set_ = slots_.sets_[slot_].get();
    }
    ~SerialLease() {
      if (slots_.asymmetric_) {
        slots_.serial_slot_.store(kNoSlot, std::memory_order_release);  // the run's reads of the set come before
      } else {
        slots_.leave_counted(slot_);
      }
      slots_.serial_owner_.store(std::thread::id(), std::memory_order_relaxed);
    }
    SerialLease(const SerialLease&) = delete;
    SerialLease& operator=(const SerialLease&) = delete;
    ConstantSet& set() const { return *set_; }

   private:
    ConstantSlots& slots_;
    int slot_;
    ConstantSet* set_;
  };

  // Whether serial leases use the asymmetric protocol.
  bool asymmetric() const { return asymmetric_; }

  // Writers. The mutex serialises them; hold it across the three steps of
  // an update (read the active set, build the new one, install it).
  std::mutex& writer_mutex() { return writer_; }
  // The active set; stable while the writer mutex is held.
  const ConstantSet& active() const { return *sets_[active_.load()]; }
  // Replaces the inactive set (waits for its last runs), writer mutex held.
  void install_inactive(std::unique_ptr<ConstantSet> set);
  // Makes the inactive set active; the active one becomes inactive. Writer
  // mutex held; false when there is no inactive set.
  bool swap();
  // Frees the inactive set once no run uses it. Writer mutex held; false
  // when there is none.
  bool free_inactive();
  // Calls f(set) for each set present. Writer mutex held (and, for graph
  // state, the runner's serial lock).
  template <class F>
  void for_each(F f) {
    for (auto& s : sets_)
      if (s) f(*s);
  }

  // Whether the calling thread is inside a run of this runner (a callback
  // from package code): a writer there would wait for itself.
  bool leased_by_this_thread() const;

 private:
  static constexpr int kNoSlot = -1;

  // The counted protocol: announce on the active slot's reader count, then
  // check the slot is still active (a swap between the load and the
  // increment would have missed this reader) and follow the swap if not.
  int enter_counted() {
    for (;;) {
      const int slot = active_.load(std::memory_order_seq_cst);
      readers_[slot].fetch_add(1, std::memory_order_seq_cst);
      if (active_.load(std::memory_order_seq_cst) == slot) return slot;
      readers_[slot].fetch_sub(1, std::memory_order_release);
    }
  }
  void leave_counted(int slot) { readers_[slot].fetch_sub(1, std::memory_order_release); }

  // Waits until no lease of either kind reads `slot` (not active).
  void drain(int slot) const;
  // This thread's innermost lease (a thread_local), looked up once per
  // lease: each access of a thread_local in a shared library is a call to
  // __tls_get_addr.
  static const ConstantSlots** this_thread_lease() noexcept;

  std::mutex writer_;
  std::atomic<int> active_{0};
  std::atomic<uint64_t> readers_[2] = {};
  const bool asymmetric_;
  std::atomic<int> serial_slot_{kNoSlot};        // the serial lease's slot (asymmetric protocol)
  std::atomic<std::thread::id> serial_owner_{};  // the thread holding the serial lease, if any
  std::unique_ptr<ConstantSet> sets_[2];
};

}  // namespace aotrun
