// A .pt2 model's *_metadata.json ({"AOTI_DEVICE_KEY": "cpu", "AOTI_CPU_ISA":
// "AVX2", ...}), read once for open_pt2 (which device, which CPU features the
// model needs) and for `aotrun inspect` (which shows it), so both see the
// same values.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace aotrun::pt2 {

struct ModelMetadata {
  // Every key, in key order; a value that is not a string as its JSON text.
  std::vector<std::pair<std::string, std::string>> values;
  std::string device_key = "cpu";  // AOTI_DEVICE_KEY when it is a string
  std::string cpu_isa;             // AOTI_CPU_ISA when it is a string; "" = not recorded

  // The vector ISA the model's kernels need of this CPU: a CUDA model's
  // AOTI_CPU_ISA names the exporting machine's CPU, but its host code has
  // no vector kernels, so it asks for none.
  std::string required_cpu_isa() const { return device_key == "cuda" ? std::string() : cpu_isa; }
};

// `json` is Pt2Model::metadata_json. Text that is not a JSON object (or "",
// no metadata file) gives the defaults: a CPU model, no ISA recorded.
ModelMetadata parse_model_metadata(const std::string& json);

}  // namespace aotrun::pt2
