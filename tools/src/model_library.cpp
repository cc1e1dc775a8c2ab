#include "model_library.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <exception>
#include <fstream>

#include <aotrun/aotrun.hpp>
#include <nlohmann/json.hpp>

#include "base/strings.hpp"
#include "package/pt2/archive/model_metadata.hpp"
#include "package/pt2/archive/pt2_archive.hpp"

namespace aotrun::cli {

namespace {

// Read as a .pt2 by the package kind's own rule (by content or by name).
bool is_pt2(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ends_with(path, ".pt2");
  const bool pt2 = aotrun::pt2::read_as_pt2(path, fd);
  ::close(fd);
  return pt2;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

ModelLibrary::ModelLibrary(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error_ = "'" + path + "' does not exist";
  } else if (S_ISDIR(st.st_mode)) {
    // A package directory: its manifest names the library.
    try {
      std::ifstream in(path + "/manifest.json");
      const nlohmann::json j = nlohmann::json::parse(in);
      shown_ = j.at("library").get<std::string>();
      file_ = path + "/" + shown_;
      if (shown_.find('/') != std::string::npos || !is_file(file_)) {
        error_ = "the manifest's library '" + shown_ + "' is not a file of the package";
        file_.clear();
      }
    } catch (const std::exception& e) {
      error_ = std::string("no readable manifest.json naming the library: ") + e.what();
    }
  } else if (is_pt2(path)) {
    from_pt2(path);
  } else {
    file_ = shown_ = path;
  }
}

// The model open would load, found by open's rules (find_model: the layout,
// safe names, one .so) and extracted as open extracts it.
void ModelLibrary::from_pt2(const std::string& path) {
  namespace pt2 = aotrun::pt2;
  try {
    const std::unique_ptr<pt2::ZipArchive> zip = pt2::ZipArchive::open(path);
    const pt2::Pt2Model model = pt2::find_model(*zip, pt2::kDefaultModel);
    shown_ = model.library.name;
    cpu_isa_ = pt2::parse_model_metadata(model.metadata_json).required_cpu_isa();
    dir_ = std::make_unique<pt2::PrivateDir>();
    const std::string name = shown_.substr(shown_.find_last_of('/') + 1);
    zip->extract(model.library, dir_->fd(), name, 0500);
    file_ = dir_->path() + "/" + name;
  } catch (const std::exception& e) {  // the library's Error: the message open gives
    error_ = e.what();
    file_.clear();
  }
}

ModelLibrary::~ModelLibrary() = default;

ProviderView provider_preview(const std::string& package_path) {
  ProviderView v;
  try {
    const aotrun::cxx::ProviderPreview p = aotrun::cxx::Package::preview_provider(package_path);
    v.name = p.name;
    v.library = p.library;
    v.reason = p.reason;
  } catch (const std::exception& e) {  // a path open cannot read: its message
    v.error = e.what();
  }
  return v;
}

}  // namespace aotrun::cli
