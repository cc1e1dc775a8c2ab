// Settings the test packages read from the environment at container
// creation (README.md): an integer, or the default when unset or empty; any
// other text fails creation with INVALID_ARGUMENT naming the variable.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include <aotrun/sdk.hpp>

namespace aotrun_test_packages {

inline int64_t env_integer(const char* name, int64_t fallback, bool non_negative) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || (non_negative && n < 0)) {
    aotrun::sdk::fail_invalid(std::string(name) + "='" + v + "' is not a " + (non_negative ? "non-negative " : "") +
                              "integer");
  }
  return n;
}

// Microseconds each execution busy-waits (counting, weight_id).
inline int64_t spin_us_from_env(int64_t fallback) { return env_integer("AOTRUN_TEST_SPIN_US", fallback, true); }

}  // namespace aotrun_test_packages
