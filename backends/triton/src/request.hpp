// One Triton request checked against the model: its inputs in package
// order, the rows it contributes to a batch, and the key that says which
// requests can be stacked with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"
#include "triton_api.h"

namespace aotrun_triton {

struct RequestInput {
  std::vector<int64_t> shape;
  std::vector<const void*> buffers;  // CPU memory, in order
  std::vector<uint64_t> sizes;
  uint64_t byte_size = 0;
};

struct CheckedRequest {
  TRITONBACKEND_Request* request = nullptr;
  TRITONBACKEND_Response* response = nullptr;  // created for it; sent once
  std::vector<RequestInput> inputs;            // package order
  std::vector<bool> wanted;                    // per package output: requested
  int64_t rows = 1;                            // the batch dimension (1 without batching)
  std::string key;                             // shapes without the batch dimension
  bool ok = false;                             // answered with outputs, not an error
};

// Fills `r` from r.request; throws an INVALID_ARG BackendError naming the
// input and what is wrong (missing, unknown, dtype, shape, byte size,
// memory not on the CPU).
void check_request(const Model& model, CheckedRequest& r);

// Whether the client gave up on the request (gRPC cancellation or deadline,
// or a C API user's TRITONSERVER_InferenceRequestCancel) — checked before a
// request is batched and again before its batch runs, so abandoned work is
// answered CANCELLED instead of run. False on a server without the call, or
// when asking fails (the request then runs, as before).
bool is_cancelled(TRITONBACKEND_Request* request) noexcept;

// The error a cancelled request is answered with.
TRITONSERVER_Error* cancelled_error() noexcept;

}  // namespace aotrun_triton
