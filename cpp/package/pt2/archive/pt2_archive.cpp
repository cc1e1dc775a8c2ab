#include "package/pt2/archive/pt2_archive.hpp"

#include <algorithm>
#include <set>

#include "base/error.hpp"
#include "base/strings.hpp"

namespace aotrun::pt2 {
namespace {

constexpr const char kModelsDir[] = "data/aotinductor/";
constexpr size_t kMaxMetadataBytes = 1 << 20;

struct Split {
  std::string model;  // component after data/aotinductor/
  std::string rest;   // what follows "<model>/"
};

// "[<prefix>/]data/aotinductor/<model>/<rest>": at most one leading component,
// as torch writes either none or the archive's own name.
bool split(const std::string& name, Split* out) {
  size_t at = 0;
  if (name.compare(0, sizeof kModelsDir - 1, kModelsDir) != 0) {
    const size_t slash = name.find('/');
    if (slash == std::string::npos || name.compare(slash + 1, sizeof kModelsDir - 1, kModelsDir) != 0) return false;
    at = slash + 1;
  }
  at += sizeof kModelsDir - 1;
  const size_t slash = name.find('/', at);
  if (slash == std::string::npos || slash == at) return false;
  out->model = name.substr(at, slash - at);
  out->rest = name.substr(slash + 1);
  return true;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

bool read_as_pt2(const std::string& path, int fd) {
  return (path.size() > 4 && ends_with(path, ".pt2")) || looks_like_zip(fd);
}

std::vector<std::string> list_models(const ZipArchive& zip) {
  std::set<std::string> names;
  Split s;
  for (const auto& e : zip.entries()) {
    if (safe_entry_name(e.name) && split(e.name, &s)) names.insert(s.model);
  }
  return {names.begin(), names.end()};
}

Pt2Model find_model(const ZipArchive& zip, const std::string& name) {
  const std::vector<std::string> models = list_models(zip);
  if (models.empty()) {
    fail(Code::BadPackage, "archive '" + zip.label() + "' is a zip file but not an AOTInductor package: it has no " +
                               kModelsDir + "<model>/ directory");
  }
  if (std::find(models.begin(), models.end(), name) == models.end()) {
    fail(Code::NotFound,
         "archive '" + zip.label() + "' has no model named '" + name + "'; it holds: " + joined(models));
  }
  Pt2Model m;
  m.name = name;
  std::vector<std::string> libraries;
  Split s;
  for (const auto& e : zip.entries()) {
    if (!split(e.name, &s) || s.model != name) continue;
    if (!safe_entry_name(e.name)) {
      fail(Code::BadPackage, "archive '" + zip.label() + "': entry '" + e.name + "' of model '" + name +
                                 "' has an unsafe name (absolute, '..' or control characters)");
    }
    if (e.is_symlink) {
      fail(Code::BadPackage, "archive '" + zip.label() + "': entry '" + e.name + "' of model '" + name +
                                 "' is a symbolic link; refusing to extract it");
    }
    // Subdirectories (none in CPU packages) are left in the archive.
    if (e.is_dir || s.rest.empty() || s.rest.find('/') != std::string::npos) continue;
    m.files.push_back(e);
    if (ends_with(s.rest, ".so")) {
      libraries.push_back(e.name);
      m.library = e;
    } else if (ends_with(s.rest, "_metadata.json")) {
      m.metadata_json = zip.read(e, kMaxMetadataBytes);
    }
  }
  if (libraries.empty()) {
    fail(Code::BadPackage, "archive '" + zip.label() + "': model '" + name + "' has no compiled library (.so) in " +
                               kModelsDir + name + "/");
  }
  if (libraries.size() > 1) {
    fail(Code::BadPackage, "archive '" + zip.label() + "': model '" + name + "' has " +
                               std::to_string(libraries.size()) + " libraries (" + joined(libraries) +
                               "); expected one");
  }
  return m;
}

std::string extract_model(const ZipArchive& zip, const Pt2Model& model, const PrivateDir& dir,
                          const std::string& skip) {
  std::string library;
  for (const auto& e : model.files) {
    if (!skip.empty() && e.name == skip) continue;
    const std::string file = e.name.substr(e.name.find_last_of('/') + 1);
    const bool is_library = e.index == model.library.index;
    zip.extract(e, dir.fd(), file, is_library ? 0500 : 0400);
    if (is_library) library = dir.path() + "/" + file;
  }
  return library;
}

}  // namespace aotrun::pt2
