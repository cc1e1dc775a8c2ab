// Errors: kernels and helpers throw ShimError; every exported function
// catches at the C boundary (guard), records the message as this thread's
// last error, and returns AOTI_TORCH_FAILURE. Nothing throws across the C ABI
// except aoti_torch_check, by design (as libtorch does).
#pragma once

#include <stdexcept>
#include <string>

#include "aotrun_shim/shim.h"

namespace aotrun::shim {

class ShimError : public std::runtime_error {
 public:
  explicit ShimError(const std::string& msg) : std::runtime_error(msg) {}
};

// Records `msg` as this thread's last error and, when AOTRUN_SHIM_QUIET is not
// set, prints it to stderr (libtorch logs its shim errors too).
void set_last_error(const std::string& msg);
void clear_last_error();
const char* last_error();

// Runs `f`; converts any exception into AOTI_TORCH_FAILURE with the message
// prefixed by the function name.
template <typename F>
AOTITorchError guard(const char* fn, F&& f) noexcept {
  try {
    f();
    return AOTI_TORCH_SUCCESS;
  } catch (const std::exception& e) {
    // Kernel errors already start with the op's name (fail_arg): once is enough.
    const std::string what = e.what(), prefix = std::string(fn) + ": ";
    set_last_error(what.compare(0, prefix.size(), prefix) == 0 ? what : prefix + what);
  } catch (...) {
    set_last_error(std::string(fn) + ": unknown error");
  }
  return AOTI_TORCH_FAILURE;
}

// Throws ShimError when `p` is null (an output pointer argument).
template <typename T>
T* out_arg(T* p, const char* what) {
  if (p == nullptr) throw ShimError(std::string(what) + " is null");
  return p;
}

}  // namespace aotrun::shim
