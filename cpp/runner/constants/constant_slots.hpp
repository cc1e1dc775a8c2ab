// The two constant sets of a runner (active and inactive) and the protocol
// that lets runs use the active one without a lock while another thread
// updates, swaps or frees constants.
//
// Runs take a Lease: they announce themselves on the active slot's reader
// count and check that the slot is still active (otherwise they retry on the
// new one). A swap flips the active index: runs already holding a lease finish
// on the set they started with, later runs see the new set; no run ever sees
// a mix. Writers (update, swap, free) are serialised by a mutex and only wait
// where they must: replacing or freeing the inactive set waits until no run
// still uses it (the runs that started before the last swap). The hot path
// costs two atomic read-modify-writes on the slot's counter, like a
// shared_ptr copy, and no lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "runner/constants/constant_set.hpp"

namespace aotrun {

class ConstantSlots {
 public:
  explicit ConstantSlots(std::unique_ptr<ConstantSet> initial);
  // Every lease must have ended (the runner waits for its runs first).
  ~ConstantSlots();
  ConstantSlots(const ConstantSlots&) = delete;
  ConstantSlots& operator=(const ConstantSlots&) = delete;

  // Inline: every run takes one.
  class Lease {
   public:
    explicit Lease(ConstantSlots& slots) : slots_(slots), tls_(this_thread_lease()), outer_(*tls_) {
      for (;;) {
        slot_ = slots_.active_.load(std::memory_order_seq_cst);
        slots_.readers_[slot_].fetch_add(1, std::memory_order_seq_cst);
        // A swap between the load and the increment would have missed this
        // reader: check again, and follow the swap if it happened.
        if (slots_.active_.load(std::memory_order_seq_cst) == slot_) break;
        slots_.readers_[slot_].fetch_sub(1, std::memory_order_release);
      }
      set_ = slots_.sets_[slot_].get();
      *tls_ = &slots_;
    }
    ~Lease() {
      *tls_ = outer_;
      slots_.readers_[slot_].fetch_sub(1, std::memory_order_release);
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
  void drain(int slot) const;
  // This thread's innermost lease (a thread_local), looked up once per
  // lease: each access of a thread_local in a shared library is a call to
  // __tls_get_addr.
  static const ConstantSlots** this_thread_lease() noexcept;

  std::mutex writer_;
  std::atomic<int> active_{0};
  std::atomic<uint64_t> readers_[2] = {};
  std::unique_ptr<ConstantSet> sets_[2];
};

}  // namespace aotrun
