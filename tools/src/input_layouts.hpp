// The memory layout each input of a .pt2 was compiled for, as `aotrun
// inspect` shows it (issue #28 item 3): read from the model's input checks
// with the library's own reader (package/pt2/specs/input_layout.hpp), the
// one that decides what a run accepts.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "table.hpp"

namespace aotrun::cli {

struct InputLayout {
  std::string name;
  std::string kind;              // "row-major", "channels_last", "channels_last_3d", "strided", "unknown"
  std::vector<int64_t> strides;  // the strides compiled for, when not row-major
  std::string why;               // "unknown": why; else what a caller may pass
};

// One per input; empty when the archive states no input checks (older torch).
std::vector<InputLayout> read_input_layouts(const std::string& sources, const std::vector<std::string>& inputs);

void input_layout_rows(const std::vector<InputLayout>& layouts, Table& table);
nlohmann::ordered_json input_layouts_json(const std::vector<InputLayout>& layouts);

}  // namespace aotrun::cli
