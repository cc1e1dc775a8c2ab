// Plain-text output: aligned tables and number formatting.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace aotrun::cli {

// Rows of cells printed with each column padded to its widest cell, two
// spaces between columns, and `indent` spaces before each row.
class Table {
 public:
  explicit Table(size_t indent = 0) : indent_(indent) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out) const;

 private:
  size_t indent_;
  std::vector<std::vector<std::string>> rows_;
};

// "%.6g" for floating values, exact digits for integral dtypes.
std::string number_text(double value, bool integral);
// A complex number from its parts' texts: "0.5-2j", "0.5+2j".
std::string complex_text(const std::string& real, const std::string& imag);

}  // namespace aotrun::cli
