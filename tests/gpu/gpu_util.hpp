// Helpers of the GPU suites for libaotrun's public C API: status checks, and
// aotrun.hpp's owners of packages, options and runners under short names.
#pragma once

#include <aotrun/aotrun.hpp>
#include <gtest/gtest.h>

#include <string>

#include "gpu_device.hpp"

namespace aotrun_gpu {

// "CODE: message" (or "OK"); frees the status.
inline std::string describe(aotrun_status* s) {
  std::string d = s ? std::string(aotrun_code_name(aotrun_status_code(s))) + ": " + aotrun_status_message(s) : "OK";
  aotrun_status_free(s);
  return d;
}

#define AOTRUN_GPU_ASSERT_OK(expr)                        \
  do {                                                    \
    aotrun_status* _s = (expr);                           \
    ASSERT_EQ(_s, nullptr) << ::aotrun_gpu::describe(_s); \
  } while (0)

// Owners of the C handles: aotrun.hpp's (a failure to open or create throws
// aotrun::cxx::Error, which fails the test).
using aotrun::cxx::Package;
using aotrun::cxx::Runner;
using aotrun::cxx::RunnerOptions;

}  // namespace aotrun_gpu
