// The entry points Triton looks up in libtriton_aotrun.so. Each one is a
// guarded() call: no C++ exception crosses into the server.
#include <memory>
#include <string>

#include "errors.hpp"
#include "instance.hpp"
#include "metrics.hpp"
#include "model.hpp"
#include "config.hpp"
#include "triton_api.h"

using namespace aotrun_triton;

namespace {

// Backend-wide state: the metric families every instance's series belong to.
struct BackendState {
  Metrics metrics;
  int32_t default_max_batch = 4;  // Triton's own default
};

// --backend-config=aotrun,default-max-batch-size=N (Triton passes its
// global default-max-batch-size the same way).
int32_t default_max_batch(TRITONBACKEND_Backend* backend) {
  TRITONSERVER_Message* message = nullptr;
  check(TRITONBACKEND_BackendConfig(backend, &message), "backend configuration");
  const nlohmann::json config = message_json(message, false);  // Triton's
  const nlohmann::json cmdline = config.value("cmdline", nlohmann::json::object());
  const std::string v = cmdline.value("default-max-batch-size", "4");
  try {
    size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used == v.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  invalid("backend configuration: default-max-batch-size '" + v + "' is not a non-negative integer");
}
std::unique_ptr<BackendState> g_backend;

}  // namespace

extern "C" {

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend) {
  return guarded([backend] {
    uint32_t major = 0, minor = 0;
    check(TRITONBACKEND_ApiVersion(&major, &minor), "backend API version");
    if (major != AOTRUN_TRITONBACKEND_API_MAJOR || minor < AOTRUN_TRITONBACKEND_API_MINOR) {
      throw BackendError(TRITONSERVER_ERROR_UNSUPPORTED, "the aotrun backend needs Triton backend API " +
                                                             std::to_string(AOTRUN_TRITONBACKEND_API_MAJOR) + "." +
                                                             std::to_string(AOTRUN_TRITONBACKEND_API_MINOR) +
                                                             " or a later 1.x; this server has " +
                                                             std::to_string(major) + "." + std::to_string(minor));
    }
    auto state = std::make_unique<BackendState>();
    state->default_max_batch = default_max_batch(backend);
    g_backend = std::move(state);
    log(TRITONSERVER_LOG_INFO, std::string("backend initialized with libaotrun ") + aotrun_version_string());
  });
}

TRITONSERVER_Error* TRITONBACKEND_Finalize(TRITONBACKEND_Backend*) {
  return guarded([] { g_backend.reset(); });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model) {
  return guarded([model] {
    std::unique_ptr<Model> state = Model::create(model, &g_backend->metrics, g_backend->default_max_batch);
    check(TRITONBACKEND_ModelSetState(model, state.get()), "model state");
    log(TRITONSERVER_LOG_INFO, "model '" + state->name() + "': package " + state->package_path() + ", mode " +
                                   aotrun_mode_name(state->parameters().mode) + ", max_batch_size " +
                                   std::to_string(state->max_batch_size()));
    state.release();  // owned by Triton's model until ModelFinalize
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model) {
  return guarded([model] {
    void* state = nullptr;
    check(TRITONBACKEND_ModelState(model, &state), "model state");
    delete static_cast<Model*>(state);
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance) {
  return guarded([instance] {
    TRITONBACKEND_Model* model = nullptr;
    void* model_state = nullptr;
    check(TRITONBACKEND_ModelInstanceModel(instance, &model), "instance model");
    check(TRITONBACKEND_ModelState(model, &model_state), "model state");
    auto state = std::make_unique<Instance>(instance, *static_cast<Model*>(model_state));
    check(TRITONBACKEND_ModelInstanceSetState(instance, state.get()), "instance state");
    state.release();
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance) {
  return guarded([instance] {
    void* state = nullptr;
    check(TRITONBACKEND_ModelInstanceState(instance, &state), "instance state");
    delete static_cast<Instance*>(state);  // waits for its runs in flight
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance* instance,
                                                       TRITONBACKEND_Request** requests, const uint32_t count) {
  void* state = nullptr;
  // Returning an error leaves the requests to Triton, which fails them all;
  // past this point the instance answers each request itself.
  if (TRITONSERVER_Error* e = TRITONBACKEND_ModelInstanceState(instance, &state)) return e;
  if (state == nullptr) return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "aotrun backend: no instance state");
  static_cast<Instance*>(state)->execute(requests, count);
  return nullptr;
}

}  // extern "C"
