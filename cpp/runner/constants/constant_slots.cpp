#include "runner/constants/constant_slots.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "base/error.hpp"

namespace aotrun {
namespace {

// The innermost lease of this thread (a log callback may run another
// runner's run inside a run, so leases nest across runners).
thread_local const ConstantSlots* t_lease = nullptr;

}  // namespace

ConstantSlots::ConstantSlots(std::unique_ptr<ConstantSet> initial, bool asymmetric) : asymmetric_(asymmetric) {
  sets_[0] = std::move(initial);
}

ConstantSlots::~ConstantSlots() {
  // The inactive set first: it is the older one, and the active set may hold
  // the last reference to storage it shares.
  sets_[1 - active_.load()].reset();
  sets_[active_.load()].reset();
}

[[gnu::noinline]] const ConstantSlots** ConstantSlots::this_thread_lease() noexcept { return &t_lease; }

bool ConstantSlots::leased_by_this_thread() const {
  // Of counted leases only the innermost is recorded; a writer of an outer
  // threaded runner from a nested run is not detected (documented: do not do
  // that). The serial lease records its thread.
  return t_lease == this || serial_owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
}

namespace {

// Runs are short next to a weight update: poll, backing off to 1 ms.
template <class Busy>
void wait_while(Busy busy) {
  auto pause = std::chrono::microseconds(1);
  while (busy()) {
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(1)) pause *= 2;
  }
}

}  // namespace

void ConstantSlots::drain(int slot) const {
  if (asymmetric_) {
    // The swap that made `slot` inactive came before (under the writer
    // mutex): after this fence, a serial run either shows its slot here or
    // has seen the swap and runs on the other set.
    if (!asymmetric_heavy_fence()) {
      fail(Code::Internal,
           std::string("membarrier failed while waiting for runs on the inactive constants: ") + std::strerror(errno));
    }
    wait_while([&] { return serial_slot_.load(std::memory_order_acquire) == slot; });
  }
  wait_while([&] { return readers_[slot].load(std::memory_order_acquire) != 0; });
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
