#include "device/cpu/graph.hpp"

#include <algorithm>
#include <cstdlib>

namespace aotrun::cpu {

Graph::~Graph() {
  for (const Task& t : nodes_) t.release();
  for (void* p : allocations_) std::free(p);
}

bool Graph::owns_allocation(const void* p) const {
  return std::find(allocations_.begin(), allocations_.end(), p) != allocations_.end();
}

Status Graph::replay() const {
  for (const Task& t : nodes_) {
    Status s = t.execute();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace aotrun::cpu
