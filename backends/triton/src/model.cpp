#include "model.hpp"

#include <sys/stat.h>

#include "batch_probe.hpp"
#include "errors.hpp"

namespace aotrun_triton {
namespace {

nlohmann::json read_config(TRITONBACKEND_Model* model) {
  TRITONSERVER_Message* message = nullptr;
  check(TRITONBACKEND_ModelConfig(model, 1, &message), "reading the model configuration");
  return message_json(message, true);
}

void write_config(TRITONBACKEND_Model* model, const nlohmann::json& config) {
  const std::string text = config.dump();
  TRITONSERVER_Message* message = nullptr;
  check(TRITONSERVER_MessageNewFromSerializedJson(&message, text.data(), text.size()), "auto-complete");
  TRITONSERVER_Error* e = TRITONBACKEND_ModelSetConfig(model, 1, message);
  TRITONSERVER_MessageDelete(message);
  check(e, "auto-complete: setting the model configuration");
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// `package` relative to the version directory, or the first of model.pt2,
// model.so, model (an aotrun package directory) found there.
std::string resolve_package(const std::string& version_dir, const std::string& package) {
  if (!package.empty()) {
    std::string path = package[0] == '/' ? package : version_dir + "/" + package;
    if (!exists(path)) {
      throw BackendError(TRITONSERVER_ERROR_NOT_FOUND,
                         "model configuration: parameter 'package': '" + path + "' does not exist");
    }
    return path;
  }
  for (const char* candidate : {"model.pt2", "model.so", "model"}) {
    std::string path = version_dir + "/" + candidate;
    if (exists(path)) return path;
  }
  throw BackendError(TRITONSERVER_ERROR_NOT_FOUND, "no package in '" + version_dir +
                                                       "': put model.pt2, model.so or an aotrun package directory "
                                                       "'model' there, or name it with parameter 'package'");
}

}  // namespace

std::unique_ptr<Model> Model::create(TRITONBACKEND_Model* triton_model, Metrics* metrics, int32_t default_max_batch) {
  auto m = std::make_unique<Model>();
  m->metrics_ = metrics;
  const char* name = nullptr;
  check(TRITONBACKEND_ModelName(triton_model, &name), "model name");
  m->name_ = name;
  check(TRITONBACKEND_ModelVersion(triton_model, &m->version_), "model version");
  TRITONBACKEND_ArtifactType artifact;
  const char* location = nullptr;
  check(TRITONBACKEND_ModelRepository(triton_model, &artifact, &location), "model repository");
  if (artifact != TRITONBACKEND_ARTIFACT_FILESYSTEM) invalid("the aotrun backend reads models from a filesystem only");

  nlohmann::json config = read_config(triton_model);
  m->parameters_ = parse_parameters(config);
  m->package_path_ = resolve_package(std::string(location) + "/" + std::to_string(m->version_), m->parameters_.package);

  aotrun::cxx::PackageOptions options;
  options.verify_hashes(m->parameters_.verify_hashes);
  if (!m->parameters_.libtorch.empty()) options.libtorch(m->parameters_.libtorch);
  if (!m->parameters_.provider.empty()) options.provider(m->parameters_.provider);
  if (m->parameters_.pad_batch) options.pt2_pad_batch(true);
  if (m->parameters_.above_compiled_max) options.pt2_above_compiled_max(true);
  if (!m->parameters_.pt2_model.empty()) options.pt2_model(m->parameters_.pt2_model);
  m->package_ = aotrun::cxx::Package(m->package_path_, options);
  m->specs_ = read_specs(m->package_);

  bool auto_complete = false;
  check(TRITONBACKEND_ModelAutoCompleteConfig(triton_model, &auto_complete), "auto-complete");
  // Batching only as far as the package serves every batch Triton may form.
  auto served = [&](int32_t want) {
    const ServedBatches s = served_batches(m->package_, m->specs_, want);
    if (!s.reason.empty()) {
      log(TRITONSERVER_LOG_WARN,
          "model '" + m->name_ + "': auto-complete " +
              (s.max == 0 ? std::string("leaves dynamic batching off")
                          : "sets max_batch_size " + std::to_string(s.max) + ", not " + std::to_string(want)) +
              ": " + s.reason +
              (s.max == 0 ? "; set the parameter pad_batch when dim 0 is a batch of independent rows" : ""));
    }
    return s.max;
  };
  if (auto_complete && autocomplete(config, m->specs_, default_max_batch, served)) {
    write_config(triton_model, config);
    config = read_config(triton_model);  // the server may have added fields
  }

  m->max_batch_size_ = parse_max_batch_size(config);
  m->inputs_ = match_config(parse_tensors(config, "input"), m->specs_.inputs, m->max_batch_size_, "input");
  m->outputs_ = match_config(parse_tensors(config, "output"), m->specs_.outputs, m->max_batch_size_, "output");
  m->shapes_from_config_ = output_shapes_from_config(m->specs_, m->outputs_);
  return m;
}

}  // namespace aotrun_triton
