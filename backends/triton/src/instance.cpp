#include "instance.hpp"

#include <vector>

#include "batch.hpp"
#include "errors.hpp"
#include "request.hpp"

namespace aotrun_triton {
namespace {

aotrun::cxx::RunnerOptions runner_options(const BackendParameters& p) {
  aotrun::cxx::RunnerOptions o;
  o.mode(p.mode).num_models(p.num_models).strict(p.strict);
  if (p.max_inflight > 0) o.max_inflight(p.max_inflight);
  if (p.graph_warmup_runs >= 0) o.graph_warmup_runs(p.graph_warmup_runs);
  if (p.graph_cache_limit > 0) o.graph_cache_limit(p.graph_cache_limit);
  if (p.graph_frozen) o.graph_frozen(true);
  return o;
}

}  // namespace

Instance::Instance(TRITONBACKEND_ModelInstance* instance, const Model& model) : instance_(instance), model_(model) {
  const char* name = nullptr;
  check(TRITONBACKEND_ModelInstanceName(instance, &name), "instance name");
  name_ = name;
  metrics_ = std::make_unique<InstanceMetrics>(model.metrics(), model.name(), model.version(), name_);
  runner_ = aotrun::cxx::Runner(model.package(), runner_options(model.parameters()));
  if (runner_.mode() != model.parameters().mode) {
    log(TRITONSERVER_LOG_WARN, "instance " + name_ + ": mode " + aotrun_mode_name(model.parameters().mode) +
                                   " fell back to " + aotrun_mode_name(runner_.mode()) + ": " +
                                   runner_.stats().fallback_reason);
  }
}

void Instance::execute(TRITONBACKEND_Request** requests, uint32_t count) noexcept {
  const uint64_t exec_start = now_ns();
  const BatchContext context{instance_, &model_, &runner_, metrics_.get()};
  const bool batching = model_.max_batch_size() > 0;
  std::vector<std::unique_ptr<Batch>> batches;
  for (uint32_t i = 0; i < count; ++i) {
    CheckedRequest r;
    r.request = requests[i];
    if (TRITONSERVER_Error* e = TRITONBACKEND_ResponseNew(&r.response, r.request)) {
      r.response = nullptr;  // nothing to answer with; still release the request
      log(TRITONSERVER_LOG_ERROR, std::string("creating a response: ") + TRITONSERVER_ErrorMessage(e));
      fail_request(instance_, r, e, exec_start);
      continue;
    }
    if (is_cancelled(r.request)) {
      fail_request(instance_, r, cancelled_error(), exec_start);
      continue;
    }
    if (TRITONSERVER_Error* e = guarded([&] { check_request(model_, r); })) {
      fail_request(instance_, r, e, exec_start);
      continue;
    }
    // Requests whose shapes agree past the batch dimension stack into one
    // run; Triton's dynamic batcher only groups such requests anyway.
    Batch* into = nullptr;
    if (batching) {
      for (auto& b : batches)
        if (b->key() == r.key && b->rows() + r.rows <= model_.max_batch_size()) into = b.get();
    }
    if (into == nullptr) {
      batches.push_back(std::make_unique<Batch>(context, exec_start));
      into = batches.back().get();
    }
    try {
      into->add(std::move(r));
    } catch (...) {  // out of memory growing a vector: answer the request anyway
      fail_request(instance_, r, current_exception_to_triton(), exec_start);
    }
  }
  const bool async = model_.parameters().max_inflight > 0;
  for (auto& b : batches) Batch::run(std::move(b), async);
}

}  // namespace aotrun_triton
