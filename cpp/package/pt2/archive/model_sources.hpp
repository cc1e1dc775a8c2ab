// The model's generated C++ inside a .pt2: it states what every run is
// checked for (package/pt2/specs reads the checks out of it). One reader, for
// open_pt2 and for `aotrun inspect`, so that the checks inspect reports are
// the checks the package is opened with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "package/pt2/archive/pt2_archive.hpp"

namespace aotrun::pt2 {

// What is read of a model's sources at most: the checks sit in the wrapper,
// a few MiB even for large models; the bound keeps a hostile archive from
// making open hold gigabytes of text.
constexpr uint64_t kMaxModelSourceBytes = 64ull << 20;

struct ModelSources {
  // Every .cpp file of the model that fits, in archive order, concatenated
  // as they are (no separator).
  std::string text;
  // The .cpp entries left out, each because it would have taken `text` past
  // kMaxModelSourceBytes: checks in them are not made (open warns, inspect
  // lists them).
  std::vector<std::string> unread;
};

// Throws Error(BAD_PACKAGE) when an entry that fits cannot be read (corrupt,
// truncated), as ZipArchive::read does.
ModelSources read_model_sources(const ZipArchive& zip, const Pt2Model& model);

}  // namespace aotrun::pt2
