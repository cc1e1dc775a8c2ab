#include "batch.hpp"

#include <chrono>
#include <cstring>

#include "dtypes.hpp"
#include "errors.hpp"

namespace aotrun_triton {
namespace {

DLTensor view(void* data, DLDataType dtype, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  return t;
}

uint64_t bytes_of(const DLTensor& t) {
  uint64_t n = (t.dtype.bits * t.dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < t.ndim; ++d) n *= static_cast<uint64_t>(t.shape[d]);
  return n;
}

void* response_buffer(TRITONBACKEND_Response* response, const std::string& name, TRITONSERVER_DataType dtype,
                      const std::vector<int64_t>& shape, uint64_t bytes) {
  TRITONBACKEND_Output* output = nullptr;
  check(TRITONBACKEND_ResponseOutput(response, &output, name.c_str(), dtype, shape.data(),
                                     static_cast<uint32_t>(shape.size())),
        ("output '" + name + "'").c_str());
  void* buffer = nullptr;
  TRITONSERVER_MemoryType mem = TRITONSERVER_MEMORY_CPU;
  int64_t mem_id = 0;
  check(TRITONBACKEND_OutputBuffer(output, &buffer, bytes, &mem, &mem_id), ("output '" + name + "'").c_str());
  if (mem == TRITONSERVER_MEMORY_GPU) invalid("output '" + name + "': the server offered GPU memory");
  return buffer;
}

void report(TRITONSERVER_Error* e) {
  if (e == nullptr) return;
  log(TRITONSERVER_LOG_ERROR, TRITONSERVER_ErrorMessage(e));
  TRITONSERVER_ErrorDelete(e);
}

}  // namespace

uint64_t now_ns() noexcept {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void fail_request(TRITONBACKEND_ModelInstance* instance, CheckedRequest& r, TRITONSERVER_Error* error,
                  uint64_t exec_start) noexcept {
  if (r.response != nullptr) {
    report(TRITONBACKEND_ResponseSend(r.response, AOTRUN_TRITON_RESPONSE_COMPLETE_FINAL, error));
    r.response = nullptr;
  }
  TRITONSERVER_ErrorDelete(error);
  const uint64_t t = now_ns();
  report(TRITONBACKEND_ModelInstanceReportStatistics(instance, r.request, false, exec_start, t, t, t));
  report(TRITONBACKEND_RequestRelease(r.request, AOTRUN_TRITON_REQUEST_RELEASE_ALL));
  r.request = nullptr;
}

void Batch::prepare() {
  const Model& m = *ctx_.model;
  const bool batching = m.max_batch_size() > 0;
  in_place_ = members_.size() == 1;
  storage_.reserve(m.inputs().size() + m.outputs().size());

  for (size_t i = 0; i < m.inputs().size(); ++i) {
    std::vector<int64_t> shape = members_.front().inputs[i].shape;
    if (batching) shape[0] = rows_;
    in_shapes_.push_back(shape);
  }
  for (size_t i = 0; i < m.inputs().size(); ++i) {
    const DLDataType dtype = to_dlpack(m.inputs()[i].dtype);
    const RequestInput& first = members_.front().inputs[i];
    if (in_place_ && first.buffers.size() == 1) {  // the request's own memory, no copy
      in_.push_back(view(const_cast<void*>(first.buffers[0]), dtype, in_shapes_[i]));
      continue;
    }
    uint64_t total = 0;
    for (const CheckedRequest& r : members_) total += r.inputs[i].byte_size;
    storage_.emplace_back(total);
    char* p = storage_.back().data();
    for (const CheckedRequest& r : members_) {
      for (size_t b = 0; b < r.inputs[i].buffers.size(); ++b) {
        std::memcpy(p, r.inputs[i].buffers[b], r.inputs[i].sizes[b]);
        p += r.inputs[i].sizes[b];
      }
    }
    in_.push_back(view(storage_.back().data(), dtype, in_shapes_[i]));
  }

  if (m.shapes_from_config()) {
    // The package cannot say ahead of the run: the configured (fixed) dims,
    // which aotrun checks against what the model produced after the run.
    for (const TensorConfig& o : m.outputs()) {
      out_shapes_.push_back(o.dims);
      if (batching) out_shapes_.back().insert(out_shapes_.back().begin(), rows_);
    }
  } else {
    size_t capacity = 0;
    for (const TensorConfig& o : m.outputs()) capacity += o.dims.size() + (batching ? 1 : 0);
    const std::vector<int64_t> flat = ctx_.runner->output_shapes(aotrun::cxx::ConstTensorSpan(in_), capacity);
    size_t at = 0;
    for (const TensorConfig& o : m.outputs()) {
      const size_t rank = o.dims.size() + (batching ? 1 : 0);
      std::vector<int64_t> shape(flat.begin() + at, flat.begin() + at + rank);
      at += rank;
      if (batching && shape[0] != rows_) {
        throw BackendError(TRITONSERVER_ERROR_INTERNAL, "output '" + o.name + "' has " + std::to_string(shape[0]) +
                                                            " rows for a batch of " + std::to_string(rows_) +
                                                            "; set max_batch_size 0 for this package");
      }
      out_shapes_.push_back(shape);
    }
  }
  for (size_t o = 0; o < m.outputs().size(); ++o) {
    const TensorConfig& c = m.outputs()[o];
    DLTensor t = view(nullptr, to_dlpack(c.dtype), out_shapes_[o]);
    const uint64_t bytes = bytes_of(t);
    if (in_place_ && members_.front().wanted[o]) {
      t.data = response_buffer(members_.front().response, c.name, c.dtype, out_shapes_[o], bytes);
    } else {
      storage_.emplace_back(bytes);
      t.data = storage_.back().data();
    }
    out_.push_back(t);
  }
}

void Batch::scatter(CheckedRequest& r, int64_t first_row) {
  const Model& m = *ctx_.model;
  for (size_t o = 0; o < m.outputs().size(); ++o) {
    if (!r.wanted[o]) continue;
    std::vector<int64_t> shape = out_shapes_[o];
    shape[0] = r.rows;
    const uint64_t row_bytes = bytes_of(out_[o]) / static_cast<uint64_t>(rows_ > 0 ? rows_ : 1);
    const uint64_t bytes = row_bytes * static_cast<uint64_t>(r.rows);
    void* dst = response_buffer(r.response, m.outputs()[o].name, m.outputs()[o].dtype, shape, bytes);
    if (bytes > 0) std::memcpy(dst, static_cast<const char*>(out_[o].data) + row_bytes * first_row, bytes);
  }
}

void Batch::finish(aotrun_code code, const char* message) noexcept {
  compute_end_ = now_ns();
  // Responses first: the clients wait on them, not on the bookkeeping.
  int64_t row = 0;
  size_t succeeded = 0;
  for (CheckedRequest& r : members_) {
    TRITONSERVER_Error* error = nullptr;
    if (code != AOTRUN_OK) {
      error = TRITONSERVER_ErrorNew(triton_code(code),
                                    (std::string("aotrun: ") + aotrun_code_name(code) + ": " + message).c_str());
    } else if (!in_place_) {
      error = guarded([&] { scatter(r, row); });
    }
    row += r.rows;
    r.ok = error == nullptr;
    succeeded += r.ok;
    report(TRITONBACKEND_ResponseSend(r.response, AOTRUN_TRITON_RESPONSE_COMPLETE_FINAL, error));
    r.response = nullptr;
    if (error != nullptr) TRITONSERVER_ErrorDelete(error);
  }
  try {
    ctx_.metrics->update(ctx_.runner->stats());
  } catch (...) {
  }
  // One end for the batch, after everything the backend did for it (the
  // sends included: they run Triton's response serialisation on this
  // thread); only the reports and releases themselves come later.
  const uint64_t exec_end = now_ns();
  for (CheckedRequest& r : members_) {
    report(TRITONBACKEND_ModelInstanceReportStatistics(ctx_.instance, r.request, r.ok, exec_start_, compute_start_,
                                                       compute_end_, exec_end));
    report(TRITONBACKEND_RequestRelease(r.request, AOTRUN_TRITON_REQUEST_RELEASE_ALL));
    r.request = nullptr;
  }
  if (succeeded > 0) {
    report(TRITONBACKEND_ModelInstanceReportBatchStatistics(ctx_.instance, static_cast<uint64_t>(rows_), exec_start_,
                                                            compute_start_, compute_end_, exec_end));
  }
}

void Batch::on_complete(void* self, aotrun_code code, const char* message) {
  std::unique_ptr<Batch> batch(static_cast<Batch*>(self));
  batch->finish(code, message);
}

void Batch::run(std::unique_ptr<Batch> batch, bool async) noexcept {
  // Failures before the run reach every request of the batch as its error.
  auto fail_all = [&batch](TRITONSERVER_Error* error) {
    for (CheckedRequest& r : batch->members_) {
      fail_request(batch->ctx_.instance, r,
                   TRITONSERVER_ErrorNew(TRITONSERVER_ErrorCode(error), TRITONSERVER_ErrorMessage(error)),
                   batch->exec_start_);
    }
    TRITONSERVER_ErrorDelete(error);
  };
  // The batch may have waited (another batch of this execute ran first): a
  // batch whose every request was cancelled meanwhile does not run.
  bool all_cancelled = true;
  for (const CheckedRequest& r : batch->members_) all_cancelled = all_cancelled && is_cancelled(r.request);
  if (all_cancelled) return fail_all(cancelled_error());
  if (TRITONSERVER_Error* e = guarded([&] { batch->prepare(); })) return fail_all(e);
  batch->compute_start_ = now_ns();
  if (!async) {
    aotrun_status* st = aotrun_runner_run(batch->ctx_.runner->get(), batch->in_.data(), batch->in_.size(),
                                          batch->out_.data(), batch->out_.size());
    batch->finish(aotrun_status_code(st), aotrun_status_message(st));
    aotrun_status_free(st);
    return;
  }
  aotrun_event* event = nullptr;
  aotrun_status* st = aotrun_runner_run_async(batch->ctx_.runner->get(), batch->in_.data(), batch->in_.size(),
                                              batch->out_.data(), batch->out_.size(), &event);
  if (st != nullptr) {  // refused before it ran: an argument error
    batch->finish(aotrun_status_code(st), aotrun_status_message(st));
    aotrun_status_free(st);
    return;
  }
  Batch* raw = batch.release();  // owned by the callback from here on
  st = aotrun_event_set_callback(event, &Batch::on_complete, raw);
  aotrun_event_free(event);
  if (st != nullptr) {  // cannot happen for a fresh event; never leave requests unanswered
    log(TRITONSERVER_LOG_ERROR, aotrun_status_message(st));
    aotrun_status_free(st);
  }
}

}  // namespace aotrun_triton
