// The process's resident memory, for the benchmarks that report how much a
// step made resident (weights mapped, not copied).
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace aotrun_bench {

// VmRSS of /proc/self/status in KiB; -1 when it cannot be read.
inline long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace aotrun_bench
