// What a .pt2 archive records about itself besides its models, for `aotrun
// inspect` (open reads none of it: the C API says "pt2" and nothing about the
// torch that made the archive). Read through ZipArchive, by the same index
// checks and name rules as the model.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "package/pt2/archive/model_metadata.hpp"
#include "package/pt2/archive/zip_archive.hpp"

namespace aotrun::pt2 {

struct ArchiveRecords {
  // The version entries torch writes, named without the archive's top
  // folder, in archive order: "archive_format" = "pt2", "archive_version",
  // ".data/version", "version", "byteorder".
  std::vector<std::pair<std::string, std::string>> records;
  // A torch release, only where the archive names one (an entry, else a key
  // of the model's metadata, with "torch_version" in its name); none of
  // torch 2.6's or 2.15's archives do.
  std::optional<std::string> torch_version;
};

// Entries with unsafe names, over 256 bytes, or unreadable are left out
// (they are descriptions, not what runs).
ArchiveRecords read_archive_records(const ZipArchive& zip, const ModelMetadata& metadata);

}  // namespace aotrun::pt2
