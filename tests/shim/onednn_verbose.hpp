// What oneDNN executes while a piece of test code runs: its verbose mode
// (dnnl_set_verbose of the libdnnl.so.2 aotrun's shim loaded) switched on
// and stdout captured. For tests that count reorders and convolutions
// (frozen weights packed once, output-shape queries that run nothing).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace aotrun_test {

// Runs `f` and sets *lines to the primitives oneDNN executed meanwhile (its
// "exec" lines); false when the shim's libdnnl is not loaded.
inline bool executed_lines(const std::function<void()>& f, std::vector<std::string>* lines) {
  lines->clear();
  void* dnnl = ::dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD);
  auto set_verbose = dnnl == nullptr ? nullptr : reinterpret_cast<int (*)(int)>(::dlsym(dnnl, "dnnl_set_verbose"));
  if (set_verbose == nullptr) return false;
  std::fflush(stdout);
  char path[] = "/tmp/aotrun_dnnl_verbose_XXXXXX";
  const int fd = ::mkstemp(path);
  const int saved = ::dup(1);
  ::dup2(fd, 1);
  set_verbose(1);
  f();
  std::fflush(stdout);
  set_verbose(0);
  ::dup2(saved, 1);
  ::close(saved);
  ::close(fd);
  if (FILE* in = std::fopen(path, "r")) {
    char line[8192];
    while (std::fgets(line, sizeof line, in) != nullptr) {
      if (std::strstr(line, "_verbose,exec,") != nullptr) lines->emplace_back(line);
    }
    std::fclose(in);
  }
  std::remove(path);
  return true;
}

// The number of executed primitives of `kind` (",reorder,",
// ",convolution,") while `f` runs; -1 when the shim's libdnnl is not loaded.
inline int count_executed(const char* kind, const std::function<void()>& f) {
  std::vector<std::string> lines;
  if (!executed_lines(f, &lines)) return -1;
  return static_cast<int>(std::count_if(lines.begin(), lines.end(),
                                        [&](const std::string& l) { return l.find(kind) != std::string::npos; }));
}

inline int count_reorders(const std::function<void()>& f) { return count_executed(",reorder,", f); }

}  // namespace aotrun_test
