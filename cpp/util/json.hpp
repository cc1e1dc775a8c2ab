// JSON from package files (manifests, safetensors headers): parsed with
// nlohmann::json, refusing duplicate keys, which nlohmann would silently
// resolve to the last one (two "fc1.weight" entries must not be ambiguous).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace aotrun {

// Throws Error(code, "<where>: invalid <what>: ...") on invalid JSON and
// Error(code, "<where>: duplicate key '<k>' in <what>") on a duplicate key.
nlohmann::json parse_package_json(const char* begin, const char* end, const std::string& where,
                                  const std::string& what, Code code);

}  // namespace aotrun
