#include "package/pt2/binding/cuda_requirements.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>

#include "device/cuda/cuda_context.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string parent(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

const char* const kHowTo =
    "point AOTRUN_LIBTORCH (or the package option 'libtorch') at the lib/ directory of a CUDA build of torch, "
    "e.g. <site-packages>/torch/lib after 'pip install torch' on Linux x86-64 (those wheels are CUDA builds)";

}  // namespace

std::string libtorch_dir(const std::string& hint, bool* loaded) {
  *loaded = false;
  if (void* h = ::dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD)) {
    char origin[PATH_MAX] = {};
    const bool known = ::dlinfo(h, RTLD_DI_ORIGIN, origin) == 0;
    ::dlclose(h);  // drops the reference NOLOAD took
    *loaded = true;
    if (known) return origin;
  }
  std::string where = hint;
  if (where.empty()) {
    const char* env = std::getenv("AOTRUN_LIBTORCH");
    if (env != nullptr) where = env;
  }
  if (where.empty() || is_dir(where)) return where;
  return parent(where);
}

void require_cuda_runtime(const std::string& package, const std::string& hint, int device_id) {
  const std::string who = "package '" + package + "' is a CUDA AOTInductor model";
  bool loaded = false;
  const std::string dir = libtorch_dir(hint, &loaded);
  if (dir.empty()) {
    fail(Code::LoadFailed,
         who + " and needs libtorch with CUDA (libtorch_cuda.so), and no libtorch is named: " + kHowTo);
  }
  // In a process that already holds torch, libtorch_cuda is loaded with it.
  bool has_cuda = is_file(dir + "/libtorch_cuda.so");
  if (!has_cuda && loaded) {
    if (void* h = ::dlopen("libtorch_cuda.so", RTLD_NOW | RTLD_NOLOAD)) {
      ::dlclose(h);
      has_cuda = true;
    }
  }
  if (!has_cuda) {
    fail(Code::LoadFailed, who + ", and the libtorch in '" + dir +
                               "' has no libtorch_cuda.so (a CPU-only libtorch, such as the one "
                               "scripts/fetch-libtorch.sh keeps): " +
                               kHowTo);
  }
  std::string why;
  if (!cuda::usable(device_id, &why)) {
    fail(Code::Device,
         who + " and needs CUDA device " + std::to_string(device_id) + ", which is not usable here: " + why);
  }
}

}  // namespace aotrun::pt2
