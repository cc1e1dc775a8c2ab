// This process's memory as the kernel reports it, for the tests of the
// shim's huge pages (kernel_test.cpp, constant_memory_test.cpp).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace aotrun_shim_test {

// Kilobytes of `what` ("AnonHugePages", "Rss") in the mappings of this
// process that overlap [p, p + n), from /proc/self/smaps; -1 where it
// cannot be read.
inline long smaps_kb(const void* p, size_t n, const char* what) {
  FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return -1;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  char line[512];
  bool inside = false;
  long kb = 0;
  const size_t wl = std::strlen(what);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    uintptr_t a = 0, b = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
        std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = a < hi && b > lo;
    } else if (inside && std::strncmp(line, what, wl) == 0 && line[wl] == ':') {
      kb += std::atol(line + wl + 1);
    }
  }
  std::fclose(f);
  return kb;
}

// Whether every mapping of this process that overlaps [p, p + n) carries
// the VmFlags mnemonic `flag` ("hg": advised MADV_HUGEPAGE) in
// /proc/self/smaps; false where none overlaps or it cannot be read.
inline bool smaps_all_flagged(const void* p, size_t n, const char* flag) {
  FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return false;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  char line[512];
  bool inside = false;
  int seen = 0, flagged = 0;
  const std::string want = std::string(" ") + flag;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    uintptr_t a = 0, b = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
        std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = a < hi && b > lo;
    } else if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
      ++seen;
      std::string flags = std::string(line + 8);
      while (!flags.empty() && (flags.back() == '\n' || flags.back() == ' ')) flags.pop_back();
      flags += " ";
      if (flags.find(want + " ") != std::string::npos) ++flagged;
    }
  }
  std::fclose(f);
  return seen > 0 && flagged == seen;
}

// The line of /sys/kernel/mm/transparent_hugepage/enabled ("always
// [madvise] never"); empty where there is none.
inline std::string thp_mode() {
  char mode[64] = {0};
  if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
    if (std::fgets(mode, sizeof mode, f) == nullptr) mode[0] = 0;
    std::fclose(f);
  }
  return mode;
}

// Whether `mode` (thp_mode()) says transparent huge pages are off or absent.
inline bool thp_off(const std::string& mode) { return mode.empty() || mode.find("[never]") != std::string::npos; }

}  // namespace aotrun_shim_test
