// Helpers of the benchmarks over aotrun: packages by name, runners from a
// config (owned by aotrun.hpp's Package and Runner), statuses of the C calls
// the timed loops make, and float tensors. Setup failures are exceptions
// (std::runtime_error, outside the timed loops); timed loops call the C API.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <aotrun/aotrun.hpp>

namespace aotrun_bench {

// Throws std::runtime_error("<what>: <CODE>: <message>") and frees `st` if it
// is not NULL.
void check(aotrun_status* st, const std::string& what);

// Where the built packages are: $AOTRUN_BENCH_PACKAGES, else the build tree
// this benchmark was configured in.
std::string packages_dir();
// packages_dir() + "/" + name.
std::string package_path(const std::string& name);

using Package = aotrun::cxx::Package;
using Runner = aotrun::cxx::Runner;

// Opens package_path(name); throws std::runtime_error
// "aotrun_package_open(<path>): <CODE>: <message>".
Package open_package(const std::string& name);

struct RunnerConfig {
  aotrun_mode mode = AOTRUN_MODE_THREADED;
  int32_t num_models = 1;
  int32_t max_inflight = 0;  // 0: the library's default
  bool strict = false;
};
// Throws std::runtime_error "<setting or call>: <CODE>: <message>".
Runner make_runner(const Package& package, const RunnerConfig& config);

// A float32 CPU tensor [rows, cols] that owns its storage; the DLTensor stays
// valid (and its address stable) for the object's lifetime.
class Tensor2D {
 public:
  Tensor2D(int64_t rows, int64_t cols, float fill = 0.0f);
  Tensor2D(const Tensor2D&) = delete;
  Tensor2D& operator=(const Tensor2D&) = delete;
  DLTensor* dl() { return &dl_; }
  const DLTensor* dl() const { return &dl_; }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  size_t size() const { return data_.size(); }

 private:
  std::vector<float> data_;
  int64_t shape_[2];
  DLTensor dl_{};
};

// Fills a float32 CPU DLTensor header for caller-owned data.
DLTensor float_tensor(void* data, int64_t* shape2);

}  // namespace aotrun_bench

namespace aotrun_bench {

// Hot-path check: true for NULL; otherwise stores "<what>: <CODE>: <message>"
// in *error, frees the status and returns false.
inline bool ok(aotrun_status* st, const char* what, std::string* error) {
  if (st == nullptr) return true;
  *error = std::string(what) + ": " + aotrun_code_name(aotrun_status_code(st)) + ": " + aotrun_status_message(st);
  aotrun_status_free(st);
  return false;
}

}  // namespace aotrun_bench
