// Build-time configuration of a package: which package ABI version it targets
// and the attributes its exported symbols carry.
#pragma once

#include <cstdint>

#include <aotrun/package_abi.h>

// AOTRUN_PKG_TARGET_ABI selects the package ABI the package is built for:
// 10 = 1.0 (no aotrun_pkg_container_run_single_threaded), 11 = 1.1 (default).
// cmake's aotrun_add_package(... TARGET_ABI 1.0) defines it for you.
#ifndef AOTRUN_PKG_TARGET_ABI
#define AOTRUN_PKG_TARGET_ABI 11
#endif

#if AOTRUN_PKG_TARGET_ABI == 10
#define AOTRUN_SDK_TARGET_MINOR 0
#elif AOTRUN_PKG_TARGET_ABI == 11
#define AOTRUN_SDK_TARGET_MINOR 1
#else
#error "AOTRUN_PKG_TARGET_ABI must be 10 (ABI 1.0) or 11 (ABI 1.1)"
#endif

#if AOTRUN_SDK_TARGET_MINOR > AOTRUN_PKG_ABI_MINOR
#error "AOTRUN_PKG_TARGET_ABI is newer than the package_abi.h in use"
#endif

// Packages are compiled with -fvisibility=hidden; only the entry points get
// default visibility. Authors use AOTRUN_PKG_API for extra C exports.
#define AOTRUN_PKG_API extern "C" __attribute__((visibility("default")))
// For SDK internals that must stay private to the package even when a package
// is (wrongly) built without -fvisibility=hidden.
#define AOTRUN_SDK_HIDDEN __attribute__((visibility("hidden")))

namespace aotrun {
namespace sdk {

// The version this package reports from aotrun_pkg_abi_version().
constexpr uint32_t kTargetAbiVersion = AOTRUN_PKG_MAKE_VERSION(AOTRUN_PKG_ABI_MAJOR, AOTRUN_SDK_TARGET_MINOR);
constexpr bool kHasRunSingleThreaded = AOTRUN_SDK_TARGET_MINOR >= 1;

}  // namespace sdk
}  // namespace aotrun
