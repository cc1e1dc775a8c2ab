// A captured CPU graph: the launched work of a capture, in order, with the
// arguments (buffers) fixed at capture. It owns the launch contexts and the
// memory allocated while capturing; both are released with the graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device/cpu/task.hpp"

namespace aotrun::cpu {

class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Both may throw std::bad_alloc (the caller still owns what it passed).
  void add_node(const Task& t) { nodes_.push_back(t); }
  void own_allocation(void* p, size_t bytes) {
    allocations_.push_back(p);
    pool_bytes_ += bytes;
  }
  bool owns_allocation(const void* p) const;

  // Runs every node in order on the calling thread; stops at the first
  // failure (or throw of a package's function) and returns it.
  Status replay() const;

  size_t num_nodes() const { return nodes_.size(); }
  uint64_t pool_bytes() const { return pool_bytes_; }

 private:
  std::vector<Task> nodes_;
  std::vector<void*> allocations_;
  uint64_t pool_bytes_ = 0;
};

}  // namespace aotrun::cpu
