#include "package/pt2/archive/archive_records.hpp"

#include <algorithm>
#include <cctype>

#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

constexpr size_t kMaxRecordBytes = 256;

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

bool names_torch_version(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.find("torch_version") != std::string::npos || s.find("torch-version") != std::string::npos;
}

// A small entry's text, trimmed; nullopt when it is not a small readable file.
std::optional<std::string> small_text(const ZipArchive& zip, const ZipEntry& e) {
  if (e.is_dir || e.is_symlink || e.encrypted || e.size > kMaxRecordBytes) return std::nullopt;
  try {
    return trim(zip.read(e, kMaxRecordBytes));
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

ArchiveRecords read_archive_records(const ZipArchive& zip, const ModelMetadata& metadata) {
  static const char* const kRecords[] = {"archive_format", "archive_version", "version", ".data/version", "byteorder"};
  ArchiveRecords r;
  // torch 2.15 puts everything under one top-level folder (the archive's
  // name), 2.6 does not; "<folder>/archive_format" says which.
  std::string prefix;
  for (const auto& e : zip.entries()) {
    const size_t slash = e.name.find('/');
    if (safe_entry_name(e.name) && slash != std::string::npos &&
        e.name.compare(slash + 1, std::string::npos, "archive_format") == 0) {
      prefix = e.name.substr(0, slash + 1);
    }
  }
  for (const auto& e : zip.entries()) {
    if (!safe_entry_name(e.name)) continue;
    const bool under = !prefix.empty() && e.name.compare(0, prefix.size(), prefix) == 0;
    const std::string name = under ? e.name.substr(prefix.size()) : e.name;
    for (const char* record : kRecords) {
      if (name != record) continue;
      if (auto text = small_text(zip, e)) r.records.emplace_back(name, *text);
    }
    if (!r.torch_version && names_torch_version(name)) r.torch_version = small_text(zip, e);
  }
  for (const auto& [key, value] : metadata.values) {
    if (!r.torch_version && names_torch_version(key)) r.torch_version = value;
  }
  return r;
}

}  // namespace aotrun::pt2
