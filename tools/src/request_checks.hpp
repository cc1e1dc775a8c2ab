// What aotrun checks before each run of a .pt2, as `aotrun inspect` shows
// it (docs/PT2.md, "Bad requests"): read from the model's sources with the
// library's own readers (package/pt2/specs), so the report and the checks
// cannot disagree.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "package/pt2/specs/index_bounds.hpp"
#include "table.hpp"

namespace aotrun::cli {

struct RequestChecks {
  bool read = false;  // false: the archive holds no sources
  aotrun::pt2::IndexChecks index;
  size_t tied_dims = 0;
  bool symbols_stated = false;  // the wrapper states each input's symbols (torch 2.13+)
  size_t parallel_unguarded = 0;
};

RequestChecks read_request_checks(const std::string& sources, size_t num_inputs);

// "request checks" rows for inspect's text; `inputs` name the inputs.
void request_check_rows(const RequestChecks& c, const std::vector<std::string>& inputs, Table& table);
nlohmann::ordered_json request_checks_json(const RequestChecks& c, const std::vector<std::string>& inputs);

}  // namespace aotrun::cli
