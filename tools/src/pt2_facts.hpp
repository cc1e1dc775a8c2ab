// What a PyTorch AOTInductor .pt2 archive records about itself, read from
// the ZIP for `aotrun inspect` (the C API reports format "pt2" and the
// AOTInductor entry points, nothing about the torch that made it).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aotrun::cli {

struct Pt2Facts {
  bool readable = false;
  std::string error;  // why not, when !readable
  // Version records as the archive has them, by entry name without the
  // archive's top-level folder: "archive_format" = "pt2",
  // "archive_version" = "0", ".data/version" = "6", "version" = "0", "byteorder".
  std::vector<std::pair<std::string, std::string>> records;
  // The model's *_metadata.json key/values (AOTI_CPU_ISA, AOTI_DEVICE_KEY, ...)
  // of the first metadata file of data/aotinductor/<model>/.
  std::vector<std::pair<std::string, std::string>> model_metadata;
  // A torch release, only where the archive names one (an entry or a
  // metadata key with "torch_version" in its name); none of torch 2.6's or
  // 2.15's archives do.
  std::optional<std::string> torch_version;
  size_t entries = 0;
  // The model's generated C++ (every .cpp of data/aotinductor/<model>/,
  // concatenated; at most 64 MiB), which states what it checks.
  std::string sources;
};

Pt2Facts read_pt2_facts(const std::string& path, const std::string& model = "model");

}  // namespace aotrun::cli
