// Skips a test, saying why, when no libtorch is named: the .pt2 suites need
// one (AOTRUN_LIBTORCH, as scripts/fetch-libtorch.sh prints it).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#define REQUIRE_LIBTORCH()                                                                         \
  do {                                                                                             \
    const char* lt = std::getenv("AOTRUN_LIBTORCH");                                               \
    if (lt == nullptr || *lt == '\0')                                                              \
      GTEST_SKIP() << "no libtorch: set AOTRUN_LIBTORCH to torch/lib (scripts/fetch-libtorch.sh)"; \
  } while (0)
