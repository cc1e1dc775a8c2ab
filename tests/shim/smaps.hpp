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

// Calls `f(line)` with each line of /proc/self/smaps that describes a
// mapping of this process overlapping [p, p + n) (each line after that
// mapping's header); false where the file cannot be read.
template <typename F>
inline bool each_smaps_line(const void* p, size_t n, F&& f) {
  FILE* file = std::fopen("/proc/self/smaps", "r");
  if (file == nullptr) return false;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  char line[512];
  bool inside = false;
  while (std::fgets(line, sizeof line, file) != nullptr) {
    uintptr_t a = 0, b = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
        std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = a < hi && b > lo;
    } else if (inside) {
      f(line);
    }
  }
  std::fclose(file);
  return true;
}

// Kilobytes of `what` ("AnonHugePages", "Rss") in the mappings of this
// process that overlap [p, p + n), from /proc/self/smaps; -1 where it
// cannot be read.
inline long smaps_kb(const void* p, size_t n, const char* what) {
  long kb = 0;
  const size_t wl = std::strlen(what);
  const bool read = each_smaps_line(p, n, [&](const char* line) {
    if (std::strncmp(line, what, wl) == 0 && line[wl] == ':') kb += std::atol(line + wl + 1);
  });
  return read ? kb : -1;
}

// Whether every mapping of this process that overlaps [p, p + n) carries
// the VmFlags mnemonic `flag` ("hg": advised MADV_HUGEPAGE) in
// /proc/self/smaps; false where none overlaps or it cannot be read.
inline bool smaps_all_flagged(const void* p, size_t n, const char* flag) {
  int seen = 0, flagged = 0;
  const std::string want = std::string(" ") + flag + " ";
  each_smaps_line(p, n, [&](const char* line) {
    if (std::strncmp(line, "VmFlags:", 8) != 0) return;
    ++seen;
    std::string flags = line + 8;
    while (!flags.empty() && (flags.back() == '\n' || flags.back() == ' ')) flags.pop_back();
    if ((flags + " ").find(want) != std::string::npos) ++flagged;
  });
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
