// A package's constants (weights) as `aotrun inspect` shows them: a table of
// name, dtype, shape, size (and original name or "folded" where a package
// has them), and the same as JSON.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime.hpp"

namespace aotrun::cli {

// The "constants" line of inspect's header: "2 (16.0 KiB)"; for a .pt2 whose
// library does not report its constants, where they are.
std::string constants_summary(const aotrun_package_info& info);

// One object per constant: name, original_name, dtype, shape (null when the
// package does not state it), bytes (null when it cannot say), folded.
nlohmann::ordered_json constants_json(const Package& package);

// The table, with at most `limit` rows and a "... and N more" line.
void print_constants(const Package& package, size_t limit, std::ostream& out);

}  // namespace aotrun::cli
