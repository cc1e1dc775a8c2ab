#include "input_layouts.hpp"

#include "package/pt2/specs/input_layout.hpp"
#include "package/pt2/specs/wrapper_specs.hpp"

namespace aotrun::cli {
namespace {

// Whether `strides` are the dense strides of `dims` taken in `order`
// (outermost first), ignoring size-1 dims; the outermost may be dynamic.
bool dense_in_order(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                    const std::vector<int>& order) {
  if (dims.size() != order.size() || strides.size() != dims.size()) return false;
  int64_t expected = 1;
  for (size_t k = order.size(); k-- > 0;) {
    const int d = order[k];
    // The outermost dim may be dynamic (a batch): its stride is the rest's size.
    if (dims[d] < 0) return k == 0 && strides[d] == expected;
    if (dims[d] != 1 && strides[d] != expected) return false;
    expected *= dims[d];
  }
  return true;
}

std::string strides_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

}  // namespace

std::vector<InputLayout> read_input_layouts(const std::string& sources, const std::vector<std::string>& inputs) {
  std::vector<InputLayout> out;
  std::vector<aotrun::pt2::InputCheck> checks;
  std::string why;
  if (sources.empty() || !aotrun::pt2::parse_input_checks(sources, inputs.size(), &checks, &why)) return out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    InputLayout l;
    l.name = inputs[i];
    if (!aotrun::pt2::layout_from_checks(checks[i], &l.strides, &l.why)) {
      l.kind = "unknown";
    } else if (l.strides.empty()) {
      l.kind = "row-major";
    } else {
      const std::vector<int64_t>& d = checks[i].dims;
      l.kind = dense_in_order(d, l.strides, {0, 2, 3, 1})      ? "channels_last"
               : dense_in_order(d, l.strides, {0, 2, 3, 4, 1}) ? "channels_last_3d"
                                                               : "strided";
      l.why = "accepted with these strides, or row-major (converted on each run, a copy)";
    }
    out.push_back(std::move(l));
  }
  return out;
}

void input_layout_rows(const std::vector<InputLayout>& layouts, Table& table) {
  if (layouts.empty()) {
    table.add({"inputs",
               "not stated by the archive (no input checks): inputs are passed as given, so give each the "
               "layout of the model's example input (a channels_last example needs a channels_last tensor)"});
    return;
  }
  for (const InputLayout& l : layouts) {
    if (l.kind == "row-major") {
      table.add({l.name, "row-major"});
    } else if (l.kind == "unknown") {
      table.add({l.name, "refused: " + l.why});
    } else {
      table.add({l.name, l.kind + " " + strides_text(l.strides) + ": " + l.why});
    }
  }
}

nlohmann::ordered_json input_layouts_json(const std::vector<InputLayout>& layouts) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const InputLayout& l : layouts) {
    nlohmann::ordered_json j{{"input", l.name}, {"layout", l.kind}};
    j["strides"] = l.strides.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(l.strides);
    if (l.kind == "unknown") j["why"] = l.why;
    a.push_back(j);
  }
  return a;
}

}  // namespace aotrun::cli
