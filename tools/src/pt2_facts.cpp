#include "pt2_facts.hpp"

#include <zip.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include <nlohmann/json.hpp>

namespace aotrun::cli {

namespace {

// A small entry's text (at most `limit` bytes), or nullopt.
std::optional<std::string> read_entry(zip_t* z, zip_uint64_t index, size_t limit) {
  zip_stat_t st;
  if (zip_stat_index(z, index, 0, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0 || st.size > limit) return std::nullopt;
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(z, index, 0), zip_fclose);
  if (!f) return std::nullopt;
  std::string text(static_cast<size_t>(st.size), '\0');
  const zip_int64_t n = zip_fread(f.get(), text.data(), st.size);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size) return std::nullopt;
  return text;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool names_torch_version(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.find("torch_version") != std::string::npos || s.find("torch-version") != std::string::npos;
}

}  // namespace

Pt2Facts read_pt2_facts(const std::string& path, const std::string& model) {
  Pt2Facts facts;
  int err = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> z(zip_open(path.c_str(), ZIP_RDONLY, &err), zip_discard);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    facts.error = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    return facts;
  }
  facts.readable = true;
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  facts.entries = n > 0 ? static_cast<size_t>(n) : 0;
  // torch 2.15 puts everything under one top-level folder; 2.6 does not.
  std::string prefix;
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* raw = zip_get_name(z.get(), static_cast<zip_uint64_t>(i), 0);
    if (raw == nullptr) continue;
    const std::string name = raw;
    const size_t slash = name.find('/');
    if (slash != std::string::npos && name.compare(slash + 1, std::string::npos, "archive_format") == 0) {
      prefix = name.substr(0, slash + 1);
    }
  }
  static const char* const kRecords[] = {"archive_format", "archive_version", "version", ".data/version", "byteorder"};
  const std::string model_dir = "data/aotinductor/" + model + "/";
  bool have_metadata = false;
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* raw = zip_get_name(z.get(), static_cast<zip_uint64_t>(i), 0);
    if (raw == nullptr) continue;
    std::string name = raw;
    if (!prefix.empty() && name.compare(0, prefix.size(), prefix) == 0) name = name.substr(prefix.size());
    for (const char* record : kRecords) {
      if (name != record) continue;
      if (auto text = read_entry(z.get(), static_cast<zip_uint64_t>(i), 256))
        facts.records.emplace_back(name, trim(*text));
    }
    if (names_torch_version(name) && !facts.torch_version) {
      if (auto text = read_entry(z.get(), static_cast<zip_uint64_t>(i), 256)) facts.torch_version = trim(*text);
    }
    if (name.compare(0, model_dir.size(), model_dir) == 0 && ends_with(name, ".cpp") &&
        facts.sources.size() < (size_t(64) << 20)) {
      if (auto text = read_entry(z.get(), static_cast<zip_uint64_t>(i), size_t(64) << 20))
        facts.sources += *text + "\n";
    }
    if (!have_metadata && name.compare(0, model_dir.size(), model_dir) == 0 && ends_with(name, "_metadata.json")) {
      if (auto text = read_entry(z.get(), static_cast<zip_uint64_t>(i), 1 << 20)) {
        try {
          const nlohmann::json j = nlohmann::json::parse(*text);
          for (auto it = j.begin(); j.is_object() && it != j.end(); ++it) {
            const std::string value = it->is_string() ? it->get<std::string>() : it->dump();
            facts.model_metadata.emplace_back(it.key(), value);
            if (names_torch_version(it.key()) && !facts.torch_version) facts.torch_version = value;
          }
          have_metadata = true;
        } catch (const nlohmann::json::exception&) {
        }
      }
    }
  }
  return facts;
}

}  // namespace aotrun::cli
