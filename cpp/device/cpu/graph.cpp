#include "device/cpu/graph.hpp"

#include <algorithm>

#include "device/cpu/stream.hpp"
#include "base/log.hpp"
#include "base/host_alloc.hpp"

namespace aotrun::cpu {

Graph::~Graph() {
  for (const Task& t : nodes_) {
    Status st = t.release();
    if (st.ok()) continue;
    // Nobody waits for a graph's destruction: the throw can only be logged.
    try {
      log(LogLevel::Error, st.message + " (while destroying a captured graph)");
    } catch (...) {
    }
  }
  for (void* p : allocations_) aligned_free(p, Stream::kAllocAlign);
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
