// One set of constants (weights) of a runner and the container created with
// it: what a run executes on. A runner has one active set and at most one
// inactive one (staged by an update, or the set a swap replaced), see
// constant_slots.hpp.
//
// Each set has its own container and, in graph mode, its own graphs: a graph
// is captured on the container whose constant buffers it reads, so no replay
// can ever read another set's weights, and swapping back to a set finds its
// graphs still valid.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <aotrun/package_abi.h>

#include "runner/graph/graph_executor.hpp"
#include "runner/container/container.hpp"

namespace aotrun {

// Memory that constants of a set point into: a copy of a caller's tensor, or
// a mapped .safetensors file. Shared between sets, since an update keeps the
// constants it does not name.
using ConstantStorage = std::shared_ptr<const void>;

struct ConstantSet {
  // 0: the package's own constants; then 1, 2, ... per update of the runner.
  uint64_t generation = 0;
  // What the container was created with (aotrun_pkg_create_args.constants):
  // for an aotrun package its whole table; for a format whose model holds its
  // own constants (.pt2), the replacements made so far.
  std::vector<aotrun_pkg_constant> entries;
  std::vector<ConstantStorage> storage;  // what `entries` point into
  std::unique_ptr<Container> container;
  // Graph mode only, made on the set's first run (under the runner's serial
  // lock). Declared after the container: destroyed first.
  std::unique_ptr<GraphExecutor> graphs;
};

}  // namespace aotrun
