#include "constants_report.hpp"

#include <algorithm>
#include <vector>

#include "describe.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

std::string str(const char* s) { return s != nullptr ? s : ""; }

bool is_pt2(const aotrun_package_info& info) { return str(info.format) == "pt2"; }

std::vector<int64_t> shape_of(const aotrun_constant_info& c) {
  if (c.ndim <= 0 || c.shape == nullptr) return {};
  return std::vector<int64_t>(c.shape, c.shape + c.ndim);
}

}  // namespace

std::string constants_summary(const aotrun_package_info& info) {
  // A .pt2's constants are held by its model library (linked into the .so,
  // or beside it in the archive), not mapped by aotrun.
  const std::string where = is_pt2(info) ? "held by the model library" : "";
  std::string detail = info.constant_bytes > 0  ? bytes_text(info.constant_bytes)
                       : info.num_constants > 0 ? "size not stated"
                                                : "";
  if (!where.empty()) detail += (detail.empty() ? "" : ", ") + where;
  return std::to_string(info.num_constants) + (detail.empty() ? "" : " (" + detail + ")");
}

nlohmann::ordered_json constants_json(const Package& package) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const aotrun_constant_info& c : package.constants()) {
    list.push_back({{"name", str(c.name)},
                    {"original_name", str(c.original_name)},
                    {"dtype", dtype_name(c.dtype)},
                    {"shape", c.ndim < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(shape_of(c))},
                    {"bytes", c.nbytes == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(c.nbytes)},
                    {"folded", c.folded != 0}});
  }
  return list;
}

void print_constants(const Package& package, size_t limit, std::ostream& out) {
  const std::vector<aotrun_constant_info> all = package.constants();
  if (all.empty()) return;
  // Columns a package without renamed or folded constants does not need.
  const bool renamed = std::any_of(all.begin(), all.end(),
                                   [](const aotrun_constant_info& c) { return str(c.name) != str(c.original_name); });
  const bool folded = std::any_of(all.begin(), all.end(), [](const aotrun_constant_info& c) { return c.folded != 0; });
  out << "\nconstants (" << all.size() << ")\n";
  Table table(2);
  std::vector<std::string> head = {"NAME"};
  if (renamed) head.push_back("ORIGINAL NAME");
  head.insert(head.end(), {"DTYPE", "SHAPE", "BYTES"});
  if (folded) head.push_back("");
  table.add(head);
  for (size_t i = 0; i < all.size() && i < limit; ++i) {
    const aotrun_constant_info& c = all[i];
    std::vector<std::string> row = {str(c.name)};
    if (renamed) row.push_back(str(c.original_name) == str(c.name) ? "" : str(c.original_name));
    row.push_back(dtype_name(c.dtype));
    row.push_back(c.ndim < 0 ? "?" : shape_text(shape_of(c)));
    row.push_back(c.nbytes == 0 ? "?" : bytes_text(c.nbytes));
    if (folded) row.push_back(c.folded != 0 ? "folded" : "");
    table.add(std::move(row));
  }
  table.print(out);
  if (all.size() > limit) out << "  ... and " << all.size() - limit << " more (--constants lists all)\n";
}

}  // namespace aotrun::cli
