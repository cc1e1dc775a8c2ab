#include "openblas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "error.hpp"

namespace aotrun::shim::kernels {
namespace {

// Debian's soname (libopenblas0-pthread/-openmp/-serial all provide it).
constexpr const char* kDefaultLibrary = "libopenblas.so.0";

struct Loaded {
  void* handle = nullptr;
  std::string error;                     // why not, when handle is null
  std::map<std::string, void*> symbols;  // looked up so far (null: absent)
};

}  // namespace

// One attempt per library name and symbol, kept for the process: a failed
// load is not retried on every call, and the library is read from the
// environment on every call (a test points it elsewhere and back).
void* openblas_symbol(const char* symbol, const std::string& needed_for) {
  const char* env = std::getenv("AOTRUN_SHIM_OPENBLAS");
  const std::string name = env != nullptr && *env != '\0' ? env : kDefaultLibrary;
  static std::mutex mu;
  static std::map<std::string, Loaded> loaded;
  void* fn = nullptr;
  Loaded* lp = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = loaded.find(name);
    if (it == loaded.end()) {
      Loaded l;
      if ((l.handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) == nullptr) {
        const char* e = ::dlerror();
        l.error = "loading '" + name + "' failed: " + (e != nullptr ? e : "unknown error");
      }
      it = loaded.emplace(name, std::move(l)).first;
    }
    lp = &it->second;
    if (lp->handle != nullptr) {
      auto s = lp->symbols.find(symbol);
      if (s == lp->symbols.end()) s = lp->symbols.emplace(symbol, ::dlsym(lp->handle, symbol)).first;
      fn = s->second;
    }
  }
  const Loaded& l = *lp;  // entries are never erased: the reference stays valid
  if (fn == nullptr) {
    const std::string why = l.handle == nullptr ? l.error : "'" + name + "' has no " + symbol;
    throw ShimError(needed_for + " needs OpenBLAS, which aotrun's shim loads when it is first used: " + why +
                    " (install Debian's libopenblas0, or name the library in AOTRUN_SHIM_OPENBLAS)");
  }
  return fn;
}

}  // namespace aotrun::shim::kernels
