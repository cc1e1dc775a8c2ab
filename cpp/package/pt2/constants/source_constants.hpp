// What the model's generated C++ says about each constant. AOTInductor's C
// interface reports a constant's name, dtype and byte size but not its shape
// or strides; the wrapper source in the archive initialises every
// constants_info_[i] field in a fixed form (every release since 2.6):
//
//   constants_info_[0].name = "l1_weight";
//   constants_info_[0].offset = 0;              (storage offset, elements)
//   constants_info_[0].data_size = 32768;
//   constants_info_[0].shape = {128, 64};
//   constants_info_[0].stride = {64, 1};
//
// Only those lines are read, strictly: anything else in that form makes the
// entry (not the package) unknown. The caller cross-checks each entry with
// what the model library itself reports before trusting it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aotrun::pt2 {

struct SourceConstant {
  bool valid = false;  // name, shape and stride read, no malformed field
  std::string name;
  std::vector<int64_t> shape, stride;
  int64_t offset = 0;      // storage offset in elements (0 when the line is absent)
  int64_t data_size = -1;  // bytes; -1 when absent
  // Laid out in oneDNN's blocked format (`.layout = ...layout__mkldnn`): a
  // frozen export's packed weight, whose bytes are not the shape's elements.
  bool packed = false;
};

// Entries by index (constants_info_[i] -> result[i]); at most `max_constants`
// (indices beyond it are ignored) and 64 dims each.
std::vector<SourceConstant> parse_source_constants(const std::string& source, size_t max_constants);

}  // namespace aotrun::pt2
