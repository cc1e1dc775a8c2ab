// Float64 GEMM on OpenBLAS, loaded the first time a float64 GEMM runs. Only
// float64 models need it (float32 GEMM is oneDNN's), so it is not a link
// dependency of the shim: a float32 model's process never maps its 36 MB,
// and never starts its worker threads, which on a small machine spin in
// sched_yield for the first ~0.1 s after the library loads, taking a core
// from the model's own start-up.
#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "error.hpp"
#include "kernels.hpp"

namespace aotrun::shim::kernels {
namespace {

using CblasDgemm = decltype(&cblas_dgemm);

// Debian's soname (libopenblas0-pthread/-openmp/-serial all provide it).
constexpr const char* kDefaultLibrary = "libopenblas.so.0";

struct Loaded {
  CblasDgemm fn = nullptr;
  std::string error;  // why not, when fn is null
};

// One attempt per library name, kept for the process: a failed load is not
// retried on every call, and a loaded library is never unloaded.
const Loaded& load(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, Loaded> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
  Loaded l;
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    l.error = "loading '" + name + "' failed: " + (e != nullptr ? e : "unknown error");
  } else if ((l.fn = reinterpret_cast<CblasDgemm>(::dlsym(h, "cblas_dgemm"))) == nullptr) {
    l.error = "'" + name + "' has no cblas_dgemm";
  }
  return loaded.emplace(name, std::move(l)).first->second;
}

}  // namespace

void dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  const char* env = std::getenv("AOTRUN_SHIM_OPENBLAS");
  const Loaded& l = load(env != nullptr && *env != '\0' ? env : kDefaultLibrary);
  if (l.fn == nullptr) {
    throw ShimError("float64 matrix multiplication needs OpenBLAS, which aotrun's shim loads when it is first used: " +
                    l.error + " (install Debian's libopenblas0, or name the library in AOTRUN_SHIM_OPENBLAS)");
  }
  l.fn(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
       static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
       static_cast<int>(ldc));
}

}  // namespace aotrun::shim::kernels
