// Shared fixture pieces for the SDK tests: a container owner and status helpers.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "package_lib.h"

namespace aotrun {
namespace test {

// Owns one container of a PackageLib; destroys it at scope exit.
class ContainerHandle {
 public:
  ContainerHandle(PackageLib& lib, aotrun_pkg_container* c) : lib_(lib), c_(c) {}
  ~ContainerHandle() {
    if (c_) lib_.destroy(c_);
  }
  ContainerHandle(const ContainerHandle&) = delete;
  ContainerHandle& operator=(const ContainerHandle&) = delete;
  aotrun_pkg_container* get() const { return c_; }

 private:
  PackageLib& lib_;
  aotrun_pkg_container* c_;
};

// Creates a container or fails the test with the package's message.
inline aotrun_pkg_container* must_create(PackageLib& lib, const aotrun_pkg_create_args& a) {
  aotrun_pkg_container* c = nullptr;
  const int32_t st = lib.create(&c, &a);
  EXPECT_EQ(st, AOTRUN_PKG_OK) << lib.last_error();
  return c;
}

inline std::string message(PackageLib& lib) { return lib.last_error(); }

}  // namespace test
}  // namespace aotrun
