// The bookkeeping of a container's model instances: which are available,
// which have work pending (oldest first). Fixed capacity (the number of
// instances), so moving instances between the lists never allocates.
// Not synchronised: the container holds its mutex around every call.
#pragma once

#include <cstddef>
#include <vector>

namespace aotrun {
namespace sdk {

template <class Instance>
class InstancePool {
 public:
  explicit InstancePool(size_t capacity) : ring_(capacity) { available_.reserve(capacity); }

  bool has_available() const { return !available_.empty(); }
  Instance* take_available() {
    Instance* i = available_.back();
    available_.pop_back();
    return i;
  }
  void make_available(Instance* i) { available_.push_back(i); }

  size_t num_pending() const { return count_; }
  Instance* pending_at(size_t k) const { return ring_[(head_ + k) % ring_.size()]; }
  void push_pending(Instance* i) {
    ring_[(head_ + count_) % ring_.size()] = i;
    ++count_;
  }
  void push_pending_front(Instance* i) {
    head_ = (head_ + ring_.size() - 1) % ring_.size();
    ring_[head_] = i;
    ++count_;
  }
  Instance* pop_pending_front() {
    Instance* i = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
    return i;
  }

  // Walks the pending instances oldest first. classify(i) returns true to make
  // i available, false to keep it pending (order kept). Stops classifying
  // after `stop()` turns true; the rest stay pending.
  template <class Classify, class Stop>
  void reclaim(Classify&& classify, Stop&& stop) {
    size_t kept = 0;
    const size_t n = count_;
    for (size_t k = 0; k < n; ++k) {
      Instance* i = pending_at(k);
      if (!stop() && classify(i)) {
        available_.push_back(i);
      } else {
        ring_[(head_ + kept) % ring_.size()] = i;
        ++kept;
      }
    }
    count_ = kept;
  }

 private:
  std::vector<Instance*> available_;
  std::vector<Instance*> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace sdk
}  // namespace aotrun
