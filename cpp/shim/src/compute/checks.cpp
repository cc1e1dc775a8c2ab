#include <string>

#include "dtype.hpp"
#include "error.hpp"
#include "kernels/kernels.hpp"

namespace aotrun::shim::kernels {

void fail_arg(const char* op, const char* arg, const std::string& why) {
  throw ShimError(std::string(op) + ": argument '" + arg + "' " + why);
}

void expect_cpu_defined(const Tensor& t, const char* op, const char* arg) {
  if (!t.defined()) fail_arg(op, arg, "is an undefined tensor");
  if (t.device_type != kCPU) fail_arg(op, arg, "is not a CPU tensor");
}

void expect_dim(const Tensor& t, int64_t dim, const char* op, const char* arg) {
  expect_cpu_defined(t, op, arg);
  if (t.dim() != dim) {
    fail_arg(op, arg, "must be " + std::to_string(dim) + "-d, got " + std::to_string(t.dim()) + "-d");
  }
}

}  // namespace aotrun::shim::kernels
