// What a PyTorch AOTInductor .pt2 archive records about itself, for `aotrun
// inspect` (the C API reports format "pt2" and the AOTInductor entry points,
// nothing about the torch that made it). Read with the library's own archive
// reader (package/pt2/archive), by the rules open reads the archive by, so
// that inspect reports what open sees; no zip code lives in the CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aotrun::cli {

struct Pt2Facts {
  bool readable = false;
  std::string error;  // why not, when !readable (the library's message)
  // Version records as the archive has them, by entry name without the
  // archive's top-level folder: "archive_format" = "pt2",
  // "archive_version" = "0", ".data/version" = "6", "version" = "0", "byteorder".
  std::vector<std::pair<std::string, std::string>> records;
  // The model's *_metadata.json key/values (AOTI_CPU_ISA, AOTI_DEVICE_KEY, ...),
  // the file open reads.
  std::vector<std::pair<std::string, std::string>> model_metadata;
  // A torch release, only where the archive names one (an entry or a
  // metadata key with "torch_version" in its name); none of torch 2.6's or
  // 2.15's archives do.
  std::optional<std::string> torch_version;
  // The model's generated C++ as open reads it (package/pt2/archive/
  // model_sources.hpp), which states what it checks, and the .cpp entries
  // left out for the size limit (their checks are not made).
  std::string sources;
  std::vector<std::string> unread_sources;
  uint64_t sources_limit = 0;  // bytes open reads of a model's sources at most
  // The ops the model calls through AOTInductor's proxy executor (its extern
  // kernel nodes, package/pt2/archive/extern_nodes.hpp), in node order.
  std::vector<std::string> proxy_ops;
};

// The archive at `path`, model "model" (the one open reads by default).
Pt2Facts read_pt2_facts(const std::string& path);

// Per output of a .pt2 whose model's C++ is `sources`: the dims its wrapper
// sizes from input values during the run (an unbacked size, `u0`: known only
// after the run, so only run_alloc can run such a model), read by the rule
// open reads them by (package/pt2/specs/output_dims.hpp). Empty lists for
// other outputs; all empty when `sources` is.
std::vector<std::vector<size_t>> data_dependent_dims(const std::string& sources, size_t num_outputs);

}  // namespace aotrun::cli
