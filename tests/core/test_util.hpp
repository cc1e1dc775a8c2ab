// Helpers shared by the core suites: package paths, status checks, tensors
// over std::vector, a log capture that installs the C log callback, and the
// owners of aotrun.hpp under short names.
#pragma once

#include <aotrun/aotrun.hpp>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

namespace aotrun_test {

inline std::string pkg_path(const std::string& name) { return std::string(AOTRUN_TEST_PACKAGES_DIR) + "/" + name; }
inline std::string bare_so(const std::string& target) { return pkg_path("lib" + target + ".so"); }

// Takes a status, frees it, and returns "CODE: message" (or "OK").
inline std::string describe(aotrun_status* s) {
  std::string d = s ? std::string(aotrun_code_name(aotrun_status_code(s))) + ": " + aotrun_status_message(s) : "OK";
  aotrun_status_free(s);
  return d;
}

#define AOTRUN_ASSERT_OK(expr)                             \
  do {                                                     \
    aotrun_status* _s = (expr);                            \
    ASSERT_EQ(_s, nullptr) << ::aotrun_test::describe(_s); \
  } while (0)

#define AOTRUN_EXPECT_OK(expr)                             \
  do {                                                     \
    aotrun_status* _s = (expr);                            \
    EXPECT_EQ(_s, nullptr) << ::aotrun_test::describe(_s); \
  } while (0)

// Code of a status plus its message; frees the status.
struct Outcome {
  aotrun_code code;
  std::string message;
};
inline Outcome outcome(aotrun_status* s) {
  Outcome o{aotrun_status_code(s), aotrun_status_message(s)};
  aotrun_status_free(s);
  return o;
}

struct Tensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLTensor dl{};

  Tensor(std::vector<int64_t> s, float fill = 0.f) : shape(std::move(s)) {
    size_t n = 1;
    for (auto d : shape) n *= static_cast<size_t>(d);
    data.assign(n, fill);
    rebind();
  }
  void rebind() {
    dl.data = data.data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
  // Deterministic pseudo-random fill in [-1, 1).
  void randomize(uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (auto& v : data) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      v = static_cast<float>(x % 20000) / 10000.f - 1.f;
    }
  }
};

// Installs a log callback for its lifetime and records every message.
class LogCapture {
 public:
  LogCapture() { aotrun_set_log_callback(&LogCapture::sink, this); }
  ~LogCapture() { aotrun_set_log_callback(nullptr, nullptr); }
  std::vector<std::pair<aotrun_log_level, std::string>> messages() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  size_t count_containing(const std::string& needle) {
    size_t n = 0;
    for (auto& m : messages()) n += m.second.find(needle) != std::string::npos;
    return n;
  }

 private:
  static void sink(void* self, aotrun_log_level level, const char* message) {
    auto* c = static_cast<LogCapture*>(self);
    std::lock_guard<std::mutex> lock(c->mu_);
    c->messages_.emplace_back(level, message);
  }
  std::mutex mu_;
  std::vector<std::pair<aotrun_log_level, std::string>> messages_;
};

// Owners of the C handles: aotrun.hpp's. A failure to open or create throws
// aotrun::cxx::Error, which fails the test. Tests that pass bad arguments or
// handles on purpose call the C API directly (owner.get()).
using aotrun::cxx::Event;
using aotrun::cxx::Graph;
using aotrun::cxx::Package;
using aotrun::cxx::PackageOptions;
using aotrun::cxx::Runner;
using aotrun::cxx::RunnerOptions;
using aotrun::cxx::Stream;

// noop / counting packages: x float32 [-1, 4] -> y float32 [-1, 4].
inline aotrun_status* run_vec(aotrun_runner* r, Tensor& x, Tensor& y) {
  return aotrun_runner_run(r, &x.dl, 1, &y.dl, 1);
}

}  // namespace aotrun_test
