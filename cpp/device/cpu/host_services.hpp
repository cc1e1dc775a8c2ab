// The aotrun_pkg_host table for CPU containers: logging, stream-ordered
// memory, launch, events and capture queries, implemented over cpu::Stream
// with CUDA's capture rules.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <aotrun/package_abi.h>

#include "device/cpu/stream.hpp"

namespace aotrun::cpu {

// One per runner; outlives the runner's container. `host_ctx` of the table.
struct HostContext {
  Stream* default_stream = nullptr;  // NULL stream handle means this one
  aotrun_pkg_get_last_error_fn last_error = nullptr;
  std::string package_name;
};

aotrun_pkg_host make_host_services(HostContext* ctx);

// Message of the last launched work that failed inline on this thread. A
// package passes only the status number up (and may overwrite its own last
// error while doing so), so the runner reports this text instead. Cleared
// by the runner before each call into the package (clear_launch_failure).
std::string& last_launch_failure();
// Empties last_launch_failure if it holds anything: the common case (no
// failure since the last call) touches one trivial thread_local, not the
// string's (a thread_local string costs a guard check and two TLS lookups).
void clear_launch_failure() noexcept;

// Status <-> package status codes.
int32_t to_pkg_code(Code code);
Code from_pkg_code(int32_t rc);

}  // namespace aotrun::cpu
