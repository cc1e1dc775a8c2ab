#include "runner/constants/constant_slots.hpp"

#include <chrono>
#include <thread>

namespace aotrun {
namespace {

// The innermost lease of this thread (a log callback may run another
// runner's run inside a run, so leases nest across runners).
thread_local const ConstantSlots* t_lease = nullptr;

}  // namespace

ConstantSlots::ConstantSlots(std::unique_ptr<ConstantSet> initial) { sets_[0] = std::move(initial); }

ConstantSlots::~ConstantSlots() {
  // The inactive set first: it is the older one, and the active set may hold
  // the last reference to storage it shares.
  sets_[1 - active_.load()].reset();
  sets_[active_.load()].reset();
}

[[gnu::noinline]] const ConstantSlots** ConstantSlots::this_thread_lease() noexcept { return &t_lease; }

bool ConstantSlots::leased_by_this_thread() const {
  // Only the innermost lease is recorded; a writer of an outer runner from a
  // nested run is not detected (documented: do not do that).
  return t_lease == this;
}

void ConstantSlots::drain(int slot) const {
  // Runs are short next to a weight update: poll, backing off to 1 ms.
  auto pause = std::chrono::microseconds(1);
  while (readers_[slot].load(std::memory_order_acquire) != 0) {
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(1)) pause *= 2;
  }
}

void ConstantSlots::install_inactive(std::unique_ptr<ConstantSet> set) {
  const int slot = 1 - active_.load();
  drain(slot);
  std::unique_ptr<ConstantSet> old = std::move(sets_[slot]);
  sets_[slot] = std::move(set);
  old.reset();  // after the new set is in place: a failure cannot lose both
}

bool ConstantSlots::swap() {
  const int a = active_.load();
  if (!sets_[1 - a]) return false;
  // No drain: the new set has no readers (nothing could lease an inactive
  // slot), and the old one's runs may go on while later runs use the new.
  active_.store(1 - a, std::memory_order_seq_cst);
  return true;
}

bool ConstantSlots::free_inactive() {
  const int slot = 1 - active_.load();
  if (!sets_[slot]) return false;
  drain(slot);
  sets_[slot].reset();
  return true;
}

}  // namespace aotrun
