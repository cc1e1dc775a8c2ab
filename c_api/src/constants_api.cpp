// Updating a runner's constants while it serves (since 1.2).
#include <vector>

#include "handles.hpp"
#include "status.hpp"
#include "struct_out.hpp"

using aotrun::capi::copy_out;
using aotrun::capi::guarded;
using aotrun::capi::require;

static_assert(aotrun::kUpdateFull == AOTRUN_CONSTANTS_FULL_UPDATE, "update flags of aotrun.h and the core differ");

extern "C" {

aotrun_status* aotrun_runner_update_constants(aotrun_runner* runner, const aotrun_named_tensor* tensors, size_t count,
                                              uint32_t flags) {
  return guarded([&] {
    require(runner, "runner");
    if (count > 0) require(tensors, "tensors");
    std::vector<aotrun::NamedTensor> named(count);
    for (size_t i = 0; i < count; ++i) named[i] = aotrun::NamedTensor{tensors[i].name, &tensors[i].tensor};
    runner->runner->update_constants(named.data(), count, flags);
  });
}

aotrun_status* aotrun_runner_update_constants_from_file(aotrun_runner* runner, const char* path, uint32_t flags) {
  return guarded([&] {
    require(runner, "runner");
    require(path, "path");
    runner->runner->update_constants_from_file(path, flags);
  });
}

aotrun_status* aotrun_runner_swap_constants(aotrun_runner* runner) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->swap_constants();
  });
}

aotrun_status* aotrun_runner_free_inactive_constants(aotrun_runner* runner) {
  return guarded([&] {
    require(runner, "runner");
    runner->runner->free_inactive_constants();
  });
}

aotrun_status* aotrun_runner_get_constants_state(const aotrun_runner* runner, aotrun_constants_state* state) {
  return guarded([&] {
    require(runner, "runner");
    require(state, "state");
    const auto& c = runner->runner->counters();
    aotrun_constants_state s{};
    s.struct_size = sizeof(s);
    s.active_generation = c.constant_generation.load();
    const uint64_t inactive = c.inactive_generation.load();
    s.has_inactive = inactive != aotrun::RunnerCounters::kNoSet ? 1 : 0;
    s.inactive_generation = s.has_inactive ? inactive : 0;
    s.updates = c.constant_updates.load();
    s.swaps = c.constant_swaps.load();
    s.graph_recaptures = c.graph_recaptures.load();
    copy_out(s, state, "state");
  });
}

}  // extern "C"
