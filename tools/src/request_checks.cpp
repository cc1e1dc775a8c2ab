#include "request_checks.hpp"

#include "package/pt2/specs/symbolic_shapes.hpp"

namespace aotrun::cli {

RequestChecks read_request_checks(const std::string& sources, size_t num_inputs) {
  RequestChecks c;
  if (sources.empty()) return c;
  c.read = true;
  c.index = aotrun::pt2::parse_index_checks(sources);
  const aotrun::pt2::SymbolicShapes shapes = aotrun::pt2::SymbolicShapes::parse(sources, num_inputs);
  c.tied_dims = shapes.tied_dims();
  c.symbols_stated = sources.find("assert_size_stride(") != std::string::npos;
  for (const auto& u : c.index.unguarded) c.parallel_unguarded += u.parallel ? 1 : 0;
  return c;
}

namespace {

std::string input_name(const std::vector<std::string>& inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : "input " + std::to_string(i);
}

}  // namespace

void request_check_rows(const RequestChecks& c, const std::vector<std::string>& inputs, Table& table) {
  if (!c.read) {
    table.add({"sources", "none in the archive: only dtypes, ranks and devices are checked"});
    return;
  }
  for (const auto& b : c.index.bounds) {
    table.add({input_name(inputs, b.input), "elements in [" + std::to_string(b.lo) + ", " + std::to_string(b.hi) +
                                                "), the table it indexes (" + b.where + ")"});
  }
  table.add({"tied dims", c.symbols_stated ? std::to_string(c.tied_dims) + " (dims that share a size symbol must agree)"
                                           : "not stated by this torch release's wrapper: not compared"});
  table.add({"bounded by dims", std::to_string(c.index.from_dims) + " index check(s) on loop counters, " +
                                    std::to_string(c.index.from_constants) + " on the model's constants"});
  if (c.index.unguarded.empty()) {
    table.add({"unchecked", "none: every check in the model's kernels is covered by the ones above"});
  } else {
    const auto& first = c.index.unguarded.front();
    table.add({"unchecked", std::to_string(c.index.unguarded.size()) + " check(s) on values the model computes, " +
                                std::to_string(c.parallel_unguarded) +
                                " in parallel code, where a failure ends the process (first: " + first.kernel + ": \"" +
                                first.message + "\")"});
  }
}

nlohmann::ordered_json request_checks_json(const RequestChecks& c, const std::vector<std::string>& inputs) {
  nlohmann::ordered_json j;
  j["sources"] = c.read;
  nlohmann::ordered_json bounds = nlohmann::ordered_json::array();
  for (const auto& b : c.index.bounds) {
    bounds.push_back({{"input", input_name(inputs, b.input)}, {"lo", b.lo}, {"hi", b.hi}, {"where", b.where}});
  }
  j["index_bounds"] = bounds;
  j["tied_dims"] = c.symbols_stated ? nlohmann::ordered_json(c.tied_dims) : nlohmann::ordered_json();
  j["bounded_by_dims"] = c.index.from_dims;
  j["bounded_by_constants"] = c.index.from_constants;
  nlohmann::ordered_json unguarded = nlohmann::ordered_json::array();
  for (const auto& u : c.index.unguarded) {
    unguarded.push_back({{"kernel", u.kernel}, {"message", u.message}, {"parallel", u.parallel}});
  }
  j["unchecked"] = unguarded;
  return j;
}

}  // namespace aotrun::cli
