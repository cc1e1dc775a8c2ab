#include "request.hpp"

#include "dtypes.hpp"
#include "errors.hpp"

namespace aotrun_triton {

bool is_cancelled(TRITONBACKEND_Request* request) noexcept {
  if (TRITONBACKEND_RequestIsCancelled == nullptr) return false;
  bool cancelled = false;
  if (TRITONSERVER_Error* e = TRITONBACKEND_RequestIsCancelled(request, &cancelled)) {
    TRITONSERVER_ErrorDelete(e);
    return false;
  }
  return cancelled;
}

TRITONSERVER_Error* cancelled_error() noexcept {
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_CANCELLED, "aotrun: request cancelled by its client before it ran");
}

void check_request(const Model& model, CheckedRequest& r) {
  const bool batching = model.max_batch_size() > 0;
  const std::vector<TensorConfig>& expected = model.inputs();
  uint32_t count = 0;
  check(TRITONBACKEND_RequestInputCount(r.request, &count), "request inputs");
  for (uint32_t i = 0; i < count; ++i) {
    TRITONBACKEND_Input* input = nullptr;
    const char* name = nullptr;
    check(TRITONBACKEND_RequestInputByIndex(r.request, i, &input), "request input");
    check(TRITONBACKEND_InputProperties(input, &name, nullptr, nullptr, nullptr, nullptr, nullptr), "request input");
    bool known = false;
    for (const TensorConfig& c : expected) known = known || c.name == name;
    if (!known) invalid(std::string("unexpected input '") + name + "' for model '" + model.name() + "'");
  }
  for (const TensorConfig& c : expected) {
    TRITONBACKEND_Input* input = nullptr;
    if (TRITONSERVER_Error* e = TRITONBACKEND_RequestInput(r.request, c.name.c_str(), &input)) {
      TRITONSERVER_ErrorDelete(e);
      invalid("input '" + c.name + "' is missing from the request");
    }
    TRITONSERVER_DataType dtype;
    const int64_t* shape = nullptr;
    uint32_t ndim = 0, buffers = 0;
    RequestInput in;
    check(TRITONBACKEND_InputProperties(input, nullptr, &dtype, &shape, &ndim, &in.byte_size, &buffers),
          "request input");
    in.shape.assign(shape, shape + ndim);
    const std::string what = "input '" + c.name + "'";
    if (dtype != c.dtype) {
      invalid(what + ": data type " + protocol_name(dtype) + ", but the model takes " + protocol_name(c.dtype));
    }
    std::vector<int64_t> want = c.dims;
    if (batching) want.insert(want.begin(), -1);
    bool fits = in.shape.size() == want.size();
    for (size_t d = 0; fits && d < want.size(); ++d)
      fits = in.shape[d] >= 0 && (want[d] == -1 || want[d] == in.shape[d]);
    if (!fits) {
      invalid(what + ": shape " + shape_string(in.shape) + " does not fit the model's " + shape_string(want) +
              (batching ? " (batch dimension first)" : ""));
    }
    uint64_t elements = 1;
    for (int64_t d : in.shape) elements *= static_cast<uint64_t>(d);
    if (elements * element_size(dtype) != in.byte_size) {
      invalid(what + ": " + std::to_string(in.byte_size) + " bytes of data for shape " + shape_string(in.shape) +
              ", which takes " + std::to_string(elements * element_size(dtype)));
    }
    for (uint32_t b = 0; b < buffers; ++b) {
      const void* data = nullptr;
      uint64_t size = 0;
      TRITONSERVER_MemoryType mem = TRITONSERVER_MEMORY_CPU;
      int64_t mem_id = 0;
      check(TRITONBACKEND_InputBuffer(input, b, &data, &size, &mem, &mem_id), what.c_str());
      if (mem == TRITONSERVER_MEMORY_GPU) invalid(what + ": GPU memory is not supported; send it in CPU memory");
      in.buffers.push_back(data);
      in.sizes.push_back(size);
    }
    if (batching) {
      if (&c == &expected.front()) r.rows = in.shape[0];
      if (in.shape[0] != r.rows) {
        invalid(what + ": batch dimension " + std::to_string(in.shape[0]) + ", but input '" + expected.front().name +
                "' has " + std::to_string(r.rows));
      }
    }
    r.key += shape_string(std::vector<int64_t>(in.shape.begin() + (batching ? 1 : 0), in.shape.end()));
    r.inputs.push_back(std::move(in));
  }

  uint32_t outputs = 0;
  check(TRITONBACKEND_RequestOutputCount(r.request, &outputs), "request outputs");
  r.wanted.assign(model.outputs().size(), outputs == 0);  // none named: all of them
  for (uint32_t i = 0; i < outputs; ++i) {
    const char* name = nullptr;
    check(TRITONBACKEND_RequestOutputName(r.request, i, &name), "request output");
    bool known = false;
    for (size_t o = 0; o < model.outputs().size(); ++o) {
      if (model.outputs()[o].name == name) r.wanted[o] = known = true;
    }
    if (!known) invalid(std::string("unknown output '") + name + "' requested from model '" + model.name() + "'");
  }
}

}  // namespace aotrun_triton
