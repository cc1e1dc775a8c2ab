// One aotrun run for the requests Triton handed over together: their inputs
// stacked along the batch dimension (or used in place for a lone request),
// one synchronous or asynchronous run, the outputs sliced back into each
// request's response, statistics reported, requests released.
#pragma once

#include <aotrun/aotrun.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "metrics.hpp"
#include "model.hpp"
#include "request.hpp"

namespace aotrun_triton {

uint64_t now_ns() noexcept;

// Sends `error` (taken) as the request's final response, reports the
// failure and releases the request.
void fail_request(TRITONBACKEND_ModelInstance* instance, CheckedRequest& r, TRITONSERVER_Error* error,
                  uint64_t exec_start) noexcept;

struct BatchContext {
  TRITONBACKEND_ModelInstance* instance;
  const Model* model;
  aotrun::cxx::Runner* runner;
  InstanceMetrics* metrics;
};

class Batch {
 public:
  Batch(const BatchContext& context, uint64_t exec_start) : ctx_(context), exec_start_(exec_start) {}

  const std::string& key() const { return members_.front().key; }
  int64_t rows() const { return rows_; }
  void add(CheckedRequest r) {
    rows_ += r.rows;
    members_.push_back(std::move(r));
  }

  // Runs the batch and answers every request in it, whatever happens. With
  // `async` the run is submitted to the runner's in-flight window and the
  // batch finishes on aotrun's worker; the requests stay alive until then.
  static void run(std::unique_ptr<Batch> batch, bool async) noexcept;

 private:
  void prepare();
  void finish(aotrun_code code, const char* message) noexcept;
  void scatter(CheckedRequest& r, int64_t first_row);
  static void on_complete(void* self, aotrun_code code, const char* message);

  BatchContext ctx_;
  uint64_t exec_start_, compute_start_ = 0, compute_end_ = 0;
  std::vector<CheckedRequest> members_;
  int64_t rows_ = 0;
  bool in_place_ = false;  // one request: outputs written into its response directly
  std::vector<std::vector<int64_t>> in_shapes_, out_shapes_;
  std::vector<std::vector<char>> storage_;
  std::vector<DLTensor> in_, out_;
};

}  // namespace aotrun_triton
