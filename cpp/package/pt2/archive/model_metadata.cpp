#include "package/pt2/archive/model_metadata.hpp"

#include <nlohmann/json.hpp>

namespace aotrun::pt2 {

ModelMetadata parse_model_metadata(const std::string& json) {
  ModelMetadata m;
  if (json.empty()) return m;
  // nlohmann::json keeps keys sorted: the order inspect lists them in.
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return m;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const bool text = it->is_string();
    m.values.emplace_back(it.key(), text ? it->get<std::string>() : it->dump());
    if (text && it.key() == "AOTI_DEVICE_KEY") m.device_key = it->get<std::string>();
    if (text && it.key() == "AOTI_CPU_ISA") m.cpu_isa = it->get<std::string>();
  }
  return m;
}

}  // namespace aotrun::pt2
