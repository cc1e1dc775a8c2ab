#include "base/dl_handle.hpp"

#include <dlfcn.h>

#include "base/error.hpp"

namespace aotrun {

DlHandle DlHandle::open(const std::string& path, int flags, const char* what) {
  void* h = ::dlopen(path.c_str(), flags);
  if (h == nullptr) {
    const char* e = ::dlerror();
    fail(Code::LoadFailed, std::string(what) + " '" + path + "' failed: " + (e ? e : "unknown error"));
  }
  return DlHandle(h);
}

DlHandle::~DlHandle() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

DlHandle& DlHandle::operator=(DlHandle&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void* DlHandle::symbol(const char* name) const { return ::dlsym(handle_, name); }

}  // namespace aotrun
