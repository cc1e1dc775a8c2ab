// The model's thread_local destructors without pinning the model. Every
// AOTInductor entry point touches the model's thread_local last-error
// string, so each thread that ever called into a model registers a
// destructor for it (__cxa_thread_atexit), and glibc then refuses to unload
// the library until all those threads have exited: a model opened, run and
// closed on a long-lived thread (a server's main or request threads) was
// never unmapped.
//
// aotrun points the model's own __cxa_thread_atexit slot (its GOT; the model
// is loaded RTLD_NOW and no code of it has run yet) at a registrar of its
// own, which registers the destructor on the model's behalf against
// libaotrun (never unloaded) together with a weak reference to the model's
// owner. At thread exit the destructor runs while the model is still
// loaded, holding it loaded for the call; once the model is gone it is
// skipped, since its code is unmapped and the object it would destroy lived
// in the model's TLS block, which glibc frees with the library: what that
// object owned (the last error message of a failed call, if long) leaks, at
// most once per thread and model. Nothing is ever run in unmapped code.
#pragma once

#include <memory>

namespace aotrun::pt2 {

// Points the model's __cxa_thread_atexit at aotrun's registrar. `handle`: a
// dlopen handle of the model, before any of its entry points ran. False
// when the model imports none or its tables are not understood here (then
// glibc registers its destructors, and keeps it loaded while they are due).
bool redirect_thread_exit(void* handle) noexcept;

// Declares `owner` the owner of the model loaded as `handle`: destructors
// its code registers run while `owner` lives, with a reference held for the
// call, and are skipped after. Until then (or for a model never declared)
// glibc registers them itself.
void set_thread_exit_owner(void* handle, const std::weak_ptr<const void>& owner);

}  // namespace aotrun::pt2
