// One reference to a dlopen'd library, dropped (dlclose) when its owner goes
// away, so that no error path can leak it. Move-only.
#pragma once

#include <string>
#include <utility>

namespace aotrun {

class DlHandle {
 public:
  DlHandle() = default;
  // dlopen(path, flags); throws Error(LOAD_FAILED) "<what> '<path>' failed:
  // <dlerror>" when the dynamic loader refuses it.
  static DlHandle open(const std::string& path, int flags, const char* what);
  ~DlHandle();
  DlHandle(DlHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  DlHandle& operator=(DlHandle&& other) noexcept;
  DlHandle(const DlHandle&) = delete;
  DlHandle& operator=(const DlHandle&) = delete;

  // dlsym; NULL when the library does not export `name`.
  void* symbol(const char* name) const;
  explicit operator bool() const { return handle_ != nullptr; }
  // The dlopen handle itself (for dlinfo); still owned by this object.
  void* get() const { return handle_; }

 private:
  explicit DlHandle(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;
};

}  // namespace aotrun
