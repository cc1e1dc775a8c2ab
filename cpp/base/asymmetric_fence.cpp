#include "base/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aotrun {
namespace {

long membarrier(int cmd) { return ::syscall(__NR_membarrier, cmd, 0u, 0); }

bool register_process() noexcept {
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  // Registration is per process and idempotent: another library of the
  // process registering too is harmless.
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

bool asymmetric_fences_available() noexcept {
  static const bool available = register_process();
  return available;
}

bool asymmetric_heavy_fence() noexcept { return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0; }

}  // namespace aotrun
